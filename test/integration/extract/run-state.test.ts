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

const CURSOR = { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' };
/** A reference extractor's state.json (example 107), JSON parser keys included. */
const REFERENCE_STATE = { time: { previousStart: 1492606006 }, 'json_parser.struct': { data: { _users: { nodeType: 'array' } }, parent_aliases: [] }, 'json_parser.structVersion': 3 };

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
    expect(first.runState).toEqual({ stateKey: 'cfg-a', stored: { time: { previousStart: first.runTimes!.currentStart } } });
    expect(JSON.parse(readFileSync(statePath('cfg-a'), 'utf8'))).toEqual({ time: { previousStart: first.runTimes!.currentStart } });
    expect(Math.abs(first.runTimes!.currentStart - Date.now() / 1000)).toBeLessThan(120);
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

  it("imports a reference state.json: previousStart from it, the JSON parser's keys stored untouched", async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-d');
    const result = (await (await start({ config, stateKey: 'cfg-d', importState: REFERENCE_STATE })).result()) as ExtractResult;
    expect(result.runTimes?.previousStart).toBe(1492606006);
    expect(JSON.parse(readFileSync(statePath('cfg-d'), 'utf8'))).toEqual({ ...REFERENCE_STATE, time: { previousStart: result.runTimes!.currentStart } });
  });

  it('refuses an invalid stateKey or importState before anything runs, naming the field', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items' }], 'state-e');
    const failure = await failureOf((await start({ config, stateKey: '../x', importState: { time: { previousStart: 'yesterday' } } })).result());
    expect(failure.type).toBe('SAPI_INVALID_INPUT');
    expect(failure.message).toMatch(/stateKey must be/);
    expect(failure.message).toMatch(/importState: 'time\.previousStart' must be Unix seconds/);
  });

  it('incrementalOutput loads the tables incrementally: a second run appends', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'state-f') as { parameters: { config: Record<string, unknown> } };
    config.parameters.config.incrementalOutput = true;
    await (await start({ config })).result();
    await (await start({ config })).result();
    expect((await env.emulator.readTable('in.c-state-f.users')).rows).toHaveLength(50);
  });
});
