/**
 * Run state between runs of one configuration (`stateKey`): read at the start, stored only after a successful load,
 * importable from a reference `state.json`; `incrementalOutput` loads incrementally. Real Temporal dev server, the
 * sample API, the emulator; the state lives in the worker's staging folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createSampleApi, makeUsers, type SampleApi } from '../../../src/sample-api';
import type { ExtractInput, ExtractProgress, ExtractResult } from '../../../src/contracts/extract';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { failureOf, FAST_FETCH, sampleConfig } from './support';
import { schemaFromStruct } from '../../../src/extractor/parser-struct';
import { columnNamesFor } from '../../../src/extractor/table-names';
import { storageColumnNames } from '../../../src/contracts/extract-plan';

const CURSOR = { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' };
/** A reference extractor's state.json (example 107), JSON parser keys included. */
const REFERENCE_STATE = {
  time: { previousStart: 1492606006 },
  'json_parser.struct': { data: { _users: { nodeType: 'array' } }, parent_aliases: [] },
  'json_parser.structVersion': 3,
};

describe('extractWorkflow run state', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let n = 0;

  beforeAll(async () => {
    [env, api] = await Promise.all([startSapiTestEnv('extract-state'), createSampleApi({ records: 25, pageSize: 10 })]);
  });
  afterAll(async () => {
    await api?.close();
    await env?.stop();
  });
  beforeEach(() => {
    api.behave();
    api.setDataset(makeUsers(25) as unknown as Array<Record<string, unknown>>);
  });

  const statePath = (key: string) => join(env.dataDir, 'work', 'staging', 'run-state', `${key}.json`);

  function start(input: Omit<ExtractInput, 'options'> & { options?: ExtractInput['options'] }): Promise<WorkflowHandle> {
    const args: ExtractInput = { ...input, options: { fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 }, ...input.options } };
    return env.client.workflow.start('extractWorkflow', { taskQueue: env.taskQueue, workflowId: `extract-state-${Date.now()}-${++n}`, args: [args] });
  }

  async function expectReplays(handle: WorkflowHandle): Promise<void> {
    const history = await handle.fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { code: readFileSync(testStack().workflowBundlePath, 'utf8') } }, history, handle.workflowId);
  }

  it('stores previousStart = this run start after a successful load, and the next run starts from it', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-a');
    const firstHandle = await start({ config, stateKey: 'cfg-a' });
    const first = (await firstHandle.result()) as ExtractResult;
    expect(first.runTimes?.previousStart).toBe(0);
    const stored = first.runState!.stored!;
    expect(stored).toMatchObject({ time: { previousStart: first.runTimes!.currentStart }, 'json_parser.structVersion': 3 });
    expect(first.runState!.stateKey).toBe('cfg-a');
    expect(JSON.parse(readFileSync(statePath('cfg-a'), 'utf8'))).toEqual(stored);
    // like the reference, the state holds the parser structure of the tables written (their columns)
    const loaded = await env.emulator.readTable('in.c-state-a.users');
    expect(storageColumnNames(columnNamesFor(schemaFromStruct(stored['json_parser.struct']).users!))).toEqual(loaded.columns);
    // the run's own start, within the run's lifetime as its history records it (not the test's clock)
    const { startTime, closeTime } = await firstHandle.describe();
    expect(first.runTimes!.currentStart).toBeGreaterThanOrEqual(Math.floor(startTime.getTime() / 1000));
    expect(first.runTimes!.currentStart).toBeLessThanOrEqual(Math.ceil(closeTime!.getTime() / 1000));
    await expectReplays(firstHandle);

    const secondHandle = await start({ config, stateKey: 'cfg-a' });
    const second = (await secondHandle.result()) as ExtractResult;
    expect(second.runTimes?.previousStart).toBe(first.runTimes!.currentStart);
    expect(await secondHandle.query<ExtractProgress>('progress')).toMatchObject({ phase: 'done', runTimes: second.runTimes });
  });

  it('a failed run leaves the stored state as it was', async () => {
    const ok = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-b');
    const stored = ((await (await start({ config: ok, stateKey: 'cfg-b' })).result()) as ExtractResult).runState!.stored;
    const failing = sampleConfig(api, CURSOR, [{ endpoint: 'users/999/orders' }], 'state-b');
    const failure = await failureOf((await start({ config: failing, stateKey: 'cfg-b' })).result());
    expect(failure.type).toBe('SAPI_EXTRACT_HTTP_STATUS');
    expect(JSON.parse(readFileSync(statePath('cfg-b'), 'utf8'))).toEqual(stored);
  });

  it('with load: false nothing is stored', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-c');
    const result = (await (await start({ config, stateKey: 'cfg-c', options: { load: false } })).result()) as ExtractResult;
    expect(result.runState).toEqual({ stateKey: 'cfg-c', stored: null });
    expect(existsSync(statePath('cfg-c'))).toBe(false);
  });

  it("imports a reference state.json: previousStart from it, the parser structure kept and extended with this run's columns", async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-d');
    const result = (await (await start({ config, stateKey: 'cfg-d', importState: REFERENCE_STATE })).result()) as ExtractResult;
    expect(result.runTimes?.previousStart).toBe(1492606006);
    const stored = JSON.parse(readFileSync(statePath('cfg-d'), 'utf8')) as Record<string, unknown>;
    expect(stored).toMatchObject({
      time: { previousStart: result.runTimes!.currentStart },
      'json_parser.structVersion': 3,
      'json_parser.struct': { parent_aliases: [] },
    });
    const loaded = await env.emulator.readTable('in.c-state-d.users');
    expect(storageColumnNames(columnNamesFor(schemaFromStruct(stored['json_parser.struct']).users!))).toEqual(loaded.columns);
  });

  it('keeps the columns of the imported parser structure in the table (a column no record has stays, empty), as the reference', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-g');
    const struct = {
      data: { _users: { nodeType: 'array', '[]': { nodeType: 'object', _id: { nodeType: 'scalar' }, _previous: { nodeType: 'scalar' } } } },
      parent_aliases: [],
    };
    const handle = await start({ config, stateKey: 'cfg-g', importState: { time: { previousStart: 1 }, 'json_parser.struct': struct } });
    await handle.result();
    const loaded = await env.emulator.readTable('in.c-state-g.users');
    expect(loaded.columns.slice(0, 2)).toEqual(['id', 'previous']);
    expect(loaded.rows).toHaveLength(25);
    expect(loaded.rows.every((row) => row[1] === '')).toBe(true);
    await expectReplays(handle);
  });

  it('refuses an invalid stateKey or importState before anything runs, naming the field', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items' }], 'state-e');
    const failure = await failureOf((await start({ config, stateKey: '../x', importState: { time: { previousStart: 'yesterday' } } })).result());
    expect(failure.type).toBe('SAPI_INVALID_INPUT');
    expect(failure.message).toMatch(/stateKey must be/);
    expect(failure.message).toMatch(/importState: 'time\.previousStart' must be Unix seconds/);
  });

  it('incrementalOutput loads the tables incrementally: a second run appends', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-f') as {
      parameters: { config: Record<string, unknown> };
    };
    config.parameters.config.incrementalOutput = true;
    await (await start({ config })).result();
    await (await start({ config })).result();
    expect((await env.emulator.readTable('in.c-state-f.users')).rows).toHaveLength(50);
  });
});
