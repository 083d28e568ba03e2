/**
 * Extractor secrets stay out of history: an API key given as `${env:SAPI_SECRET_…}` in a header, a query param and a
 * `#` param reaches the API (which refuses requests without it) but no history, child history or `progress` answer.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import type { ExtractInput, ExtractProgress, ExtractResult } from '../../../src/contracts/extract';
import { eventually } from '../../harness/processes';
import { historyText } from '../../harness/history';
import { noteSecret } from '../../harness/secret-ledger';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf, FAST_FETCH, storedIds } from './support';

const KEY = `sk-${randomUUID()}`;
const ENV_NAME = 'SAPI_SECRET_SAMPLE_API_KEY';
const REF = `\${env:${ENV_NAME}}`;
const CURSOR = { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor', includeParams: true };

/** Handles of the child workflows a workflow started (the import of each table). */
async function childrenOf(env: SapiTestEnv, handle: WorkflowHandle): Promise<WorkflowHandle[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED)
    .map((e) => e.childWorkflowExecutionStartedEventAttributes!.workflowExecution!)
    .map((execution) => env.client.workflow.getHandle(execution.workflowId!, execution.runId!));
}

describe('extractor secrets stay out of workflow history', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let n = 0;

  beforeAll(async () => {
    process.env[ENV_NAME] = KEY; // the worker runs in this process: its environment holds the secret
    process.env[`${ENV_NAME}_HOSTS`] = '127.0.0.1'; // bound to the sample API's host
    noteSecret('an extractor API key', KEY);
    [env, api] = await Promise.all([
      startSapiTestEnv('extract-secrets'),
      createSampleApi({ records: 25, pageSize: 10, requireAuth: { headers: { 'X-Api-Key': KEY }, query: { apikey: KEY, '#apiKey': KEY } } }),
    ]);
  });
  afterAll(async () => {
    delete process.env[ENV_NAME];
    delete process.env[`${ENV_NAME}_HOSTS`];
    await api?.close();
    await env?.stop();
  });
  beforeEach(() => {
    api.behave();
    api.clearRequests();
  });

  function start(config: unknown, name: string): Promise<WorkflowHandle> {
    const input: ExtractInput = {
      config,
      options: { fetch: { ...FAST_FETCH, maxInlineRetryAfterMs: 100 }, polling: { initialMs: 200, maxMs: 1000 }, mode: 'page' },
    };
    return env.client.workflow.start('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `extract-secrets-${name}-${Date.now()}-${++n}`,
      args: [input],
    });
  }

  const config = (headers: Record<string, string>, defaultParams: Record<string, string>, params: Record<string, string>) => ({
    parameters: {
      api: { baseUrl: api.url, pagination: CURSOR, http: { headers, defaultOptions: { params: defaultParams } } },
      config: { outputBucket: 'secrets', jobs: [{ endpoint: 'cursor/items', dataType: 'users', params }] },
    },
  });

  it('sends an API key referenced in a header, a query param and a # param, and keeps it out of every history and the progress query', async () => {
    // the first request is answered 429 with a Retry-After the workflow waits on a timer: the progress query is
    // asked while the next request (its URL with the references) is the job's cursor
    api.misbehave({ kind: 'rate-limit', retryAfter: '2' });
    const handle = await start(config({ 'X-Api-Key': REF }, { apikey: REF }, { '#apiKey': REF }), 'ok');
    let progress: ExtractProgress | undefined;
    await eventually(
      async () => {
        progress = await handle.query<ExtractProgress>('progress');
        return progress.waitingUntil !== undefined;
      },
      20_000,
      'the workflow never waited for the rate limit',
    );
    const result = (await handle.result()) as ExtractResult;

    // every request carried the key (the API answers 401 otherwise), and every record arrived
    expect(api.requests.length).toBe(4);
    expect(api.requests.every((r) => r.query.apikey === KEY && r.query['#apiKey'] === KEY)).toBe(true);
    expect(result).toMatchObject({ pages: 3, records: 25, bucketId: 'in.c-secrets' });
    expect(await storedIds(env, 'in.c-secrets.users')).toHaveLength(25);

    expect(progress!.job).toBe('0');
    expect(progress!.cursor).toMatch(/cursor\/items\?/);
    expect(JSON.stringify(progress)).not.toContain(KEY);

    const children = await childrenOf(env, handle);
    expect(children.length).toBeGreaterThan(0);
    for (const h of [handle, ...children]) {
      const text = await historyText(h);
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(encodeURIComponent(KEY));
    }
    // the scan does see the payloads: the reference is there, as given
    expect(await historyText(handle)).toContain(REF);
  });

  it('fails before any request, not retrying, when a configuration references a variable outside SAPI_SECRET_', async () => {
    const handle = await start(config({ 'X-Api-Key': '${env:SAPI_TOKEN}' }, {}, {}), 'forbidden');
    const failure = await failureOf(handle.result());
    expect(failure.type).toBe('SAPI_EXTRACT_CONFIG_INVALID');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('SAPI_TOKEN');
    expect(failure.message).toContain('SAPI_SECRET_');
    expect(api.requests).toEqual([]);
  });

  it('refuses a # value given in clear before any request, naming where it is, never the value', async () => {
    const handle = await start(config({}, {}, { '#apiKey': 'plain-value-123' }), 'clear');
    const failure = await failureOf(handle.result());
    expect(failure.type).toBe('SAPI_EXTRACT_CONFIG_INVALID');
    expect(failure.message).toContain('parameters.config.jobs[0].params.#apiKey');
    expect(failure.message).not.toContain('plain-value-123');
    expect(api.requests).toEqual([]);
  });
});
