/**
 * `parameters.iterations` through the durable run: the workflow runs each iteration's jobs in order into
 * the same tables, keeps the iteration in its checkpoint (continue-as-new after every page here, so later
 * iterations start from a checkpoint), and loads what the plain loop produces. Real Temporal dev server, the
 * sample API, the emulator.
 */
import { readFileSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import type { ExtractInput, ExtractResult } from '../../../src/contracts/extract';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { expectTablesLike, FAST_FETCH, plainLoop, requestLines } from './support';
import { historyText } from '../../harness/history';
import { noteSecret } from '../../harness/secret-ledger';

const ENV_NAME = 'SAPI_SECRET_ITERATION_KEY';
const KEY = 'iteration-key-5b1e0c7f';

describe('extractWorkflow with parameters.iterations', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let secured: SampleApi;

  beforeAll(async () => {
    process.env[ENV_NAME] = KEY; // the worker runs in this process: its environment holds the secret
    process.env[`${ENV_NAME}_HOSTS`] = '127.0.0.1,localhost'; // bound to the sample API's host
    noteSecret('an API key given in an iteration', KEY);
    [env, api, secured] = await Promise.all([
      startSapiTestEnv('extract-iterations'),
      createSampleApi({ pagingRecords: 8 }),
      createSampleApi({ pagingRecords: 8, requireAuth: { headers: { 'X-Api-Key': KEY } } }),
    ]);
  });
  afterAll(async () => {
    delete process.env[ENV_NAME];
    delete process.env[`${ENV_NAME}_HOSTS`];
    await api?.close();
    await secured?.close();
    await env?.stop();
  });

  it('runs two iterations in order, each with its attributes, into one table, resuming from checkpoints', async () => {
    const config = {
      parameters: {
        api: { baseUrl: api.url, pagination: { method: 'cursor', idKey: 'id', param: 'since' } },
        config: {
          outputBucket: 'iterations-a',
          userData: { label: { attr: 'label' } },
          jobs: [{ endpoint: 'paging/cursor', dataType: 'items', dataField: 'items', params: { since: { attr: 'since' }, limit: 3 } }],
        },
        iterations: [
          { label: 'first', since: 0 },
          { label: 'second', since: 5 },
        ],
      },
    };
    const oracle = await plainLoop(api, config);
    expect(oracle.tables.items.rows.map((r) => `${r.id}:${r.label}`)).toEqual([
      ...['1', '2', '3', '4', '5', '6', '7', '8'].map((id) => `${id}:first`),
      ...['6', '7', '8'].map((id) => `${id}:second`),
    ]);

    const args: ExtractInput = { config, options: { fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 }, continueAsNewAfterPages: 1, batchPages: 1 } };
    const handle = await env.client.workflow.start('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `extract-iterations-${Date.now()}`,
      args: [args],
    });
    const result = (await handle.result()) as ExtractResult;
    expect(requestLines(api.requests).map((line) => line.replace(/^GET \/paging\/cursor\?/, ''))).toEqual([
      'since=0&limit=3',
      'since=3&limit=3',
      'since=6&limit=3',
      'since=8&limit=3',
      'since=5&limit=3',
      'since=8&limit=3',
    ]);
    expect(result.runs).toBeGreaterThanOrEqual(5); // one page per call and per run: the second iteration ran from checkpoints
    await expectTablesLike(env, result, oracle);

    // the last run of the chain replays with the current workflow code
    const history = await env.client.workflow.getHandle(handle.workflowId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { code: readFileSync(testStack().workflowBundlePath, 'utf8') } }, history, handle.workflowId);
  });

  it("sends an iteration's secret header from its ${env:…} reference; the value never reaches history", async () => {
    const config = {
      parameters: {
        api: { baseUrl: secured.url },
        config: {
          outputBucket: 'iterations-b',
          jobs: [{ endpoint: 'paging/cursor', dataType: 'items', dataField: 'items', params: { since: { attr: 'since' }, limit: 2 } }],
        },
        iterations: [
          { since: 0, http: { headers: { 'X-Api-Key': `\${env:${ENV_NAME}}` } } },
          { since: 4, http: { headers: { 'X-Api-Key': `\${env:${ENV_NAME}}` } } },
        ],
      },
    };
    const args: ExtractInput = { config, options: { fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 } } };
    const handle = await env.client.workflow.start('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `extract-iterations-secret-${Date.now()}`,
      args: [args],
    });
    await handle.result();
    expect(requestLines(secured.requests).map((line) => line.replace(/^GET \/paging\/cursor\?/, ''))).toEqual(['since=0&limit=2', 'since=4&limit=2']);
    expect((await env.emulator.readTable('in.c-iterations-b.items')).rows.map((r) => r[0])).toEqual(['1', '2', '5', '6']);
    expect(await historyText(handle)).not.toContain(KEY);
  });
});
