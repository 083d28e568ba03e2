/**
 * The page-fetching activity with an API that echoes the api key in its next-page link (`response.url`): the key
 * is sent on every request, and never kept in clear in the activity's result, heartbeats or the scroller state.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { fetchPages, type FetchPagesCheckpoint, type FetchPagesResult } from '../../../src/activities/extract-fetch-pages';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createScrollerState, nextStep, type ScrollerState } from '../../../src/extractor/scroller';
import type { JobConfig } from '../../../src/extractor/types';
import { createHttpPools } from '../../../src/http';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';

const KEY = 'k3y-Value/with+chars';
const VARIABLE = 'SAPI_SECRET_ECHO_TEST_KEY';
let api: SampleApi;
const http = createHttpPools();
beforeAll(async () => {
  process.env[VARIABLE] = KEY;
  process.env[`${VARIABLE}_HOSTS`] = '127.0.0.1,localhost';
  api = await createSampleApi({ pageSize: 5, pagingRecords: 23, requireAuth: { query: { api_key: KEY } } });
});
afterAll(async () => {
  delete process.env[VARIABLE];
  delete process.env[`${VARIABLE}_HOSTS`];
  await api.close();
  await http.close();
});

function setUp(pagination: unknown) {
  const config = parseExtractorConfig({
    parameters: {
      api: { baseUrl: api.url, pagination },
      config: { jobs: [{ endpoint: 'paging/next-url', dataField: 'items', params: { api_key: `\${env:${VARIABLE}}` } }] },
    },
  });
  const job = config.config.jobs[0]!;
  const deps = { settings: { stagingUrl: mkdtempSync(join(tmpdir(), 'secret-echo-')) }, userS3: () => undefined, http } as unknown as ActivityDeps;
  return { job, deps, state: createScrollerState(job, config.api, Date.now()) };
}

/** One activity call, as the workflow makes it (maxPages 1 = page mode). */
async function call(deps: ActivityDeps, job: JobConfig, state: ScrollerState, maxPages: number) {
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf', runId: 'run' } }, { logger: new DefaultLogger('ERROR') });
  const beats: FetchPagesCheckpoint[] = [];
  env.on('heartbeat', (d: FetchPagesCheckpoint) => beats.push(d));
  const input = { runKey: 'wf/run', runNo: 1, job, context: {}, state, maxPages, maxMs: 60_000 };
  const result = (await env.run(fetchPages(deps), input)) as FetchPagesResult;
  return { result, beats };
}

describe('a secret the API echoes in its next-page link', () => {
  beforeEach(() => api.clearRequests());

  it('is sent again on the next requests but kept as its reference in every state, result and heartbeat the workflow sees', async () => {
    const run = setUp({ method: 'response.url', urlKey: 'links.next' });
    let state = run.state;
    const kept: unknown[] = [];
    let records = 0;
    while (state.next) {
      const { result, beats } = await call(run.deps, run.job, state, 1);
      records += result.records;
      const step = nextStep(result.state, result.pending!.result, Date.now());
      state = step.state;
      kept.push(result, beats, state);
    }
    expect(records).toBe(23);
    expect(api.requests.map((r) => r.query.after ?? '0')).toEqual(['0', '5', '10', '15', '20']);
    expect(api.requests.every((r) => r.query.api_key === KEY)).toBe(true);
    const text = JSON.stringify(kept);
    for (const form of [KEY, encodeURIComponent(KEY)]) expect(text).not.toContain(form);
    expect(text).toContain(`api_key=\${env:${VARIABLE}}`);
  });

  it('is a reference in the page handed back to the workflow (pending, the digest nextStep reads)', async () => {
    const run = setUp({ method: 'response.url', urlKey: 'links.next' });
    const { result } = await call(run.deps, run.job, run.state, 2);
    expect(result.pending?.result.digest?.paging?.url?.value).toBe(`paging/next-url?after=10&api_key=\${env:${VARIABLE}}`);
    expect(JSON.stringify(result)).not.toContain(encodeURIComponent(KEY));
  });
});
