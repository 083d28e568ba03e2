/**
 * The page-fetching activity with user functions and login authentication (the durable path): the request it
 * sends carries the secrets, the login token and the computed values; its input, result and heartbeats (what
 * reaches workflow history) carry none of them.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { fetchPages, type FetchPagesInput, type FetchPagesResult } from '../../../src/activities/extract-fetch-pages';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { functionScopeOf } from '../../../src/extractor/functions';
import { requestAuthOf } from '../../../src/extractor/http/send-request';
import { createScrollerState } from '../../../src/extractor/scroller';
import { createHttpPools } from '../../../src/http';
import { startMockApi, type MockApi } from '../../harness/ge-examples/mock-api';
import { EXAMPLES_DIR, exampleConfig } from '../../harness/ge-examples/run-example';

let mock: MockApi;
beforeAll(async () => (mock = await startMockApi(EXAMPLES_DIR)));
afterAll(() => mock.close());
const http = createHttpPools();
afterAll(() => http.close());

/** Requests the mock answered (`METHOD URI`); an unmatched one shows as `404 …`. */
const seen = () => mock.seen.map((r) => `${r.matched === null ? '404 ' : ''}${r.method} ${r.uri}`);

async function runExampleActivity(example: string) {
  const { config, env } = exampleConfig(example, mock.origin);
  Object.assign(process.env, env);
  // each secret bound to the mock API's host (the input policy refuses unbound secrets)
  for (const name of Object.keys(env)) process.env[`${name}_HOSTS`] = '127.0.0.1,localhost';
  const parsed = parseExtractorConfig(config);
  const job = parsed.config.jobs[0]!;
  const input: FetchPagesInput = {
    runKey: 'wf/run',
    runNo: 1,
    job,
    context: {},
    state: createScrollerState(job, parsed.api, Date.now(), functionScopeOf(parsed)),
    maxPages: 10,
    maxMs: 60_000,
    auth: requestAuthOf(parsed),
  };
  const deps = { settings: { stagingUrl: mkdtempSync(join(tmpdir(), 'fetch-auth-')) }, userS3: () => undefined, http } as unknown as ActivityDeps;
  const activity = new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf', runId: 'run' } }, { logger: new DefaultLogger('ERROR') });
  const beats: unknown[] = [];
  activity.on('heartbeat', (d: unknown) => beats.push(d));
  const result = (await activity.run(fetchPages(deps), input)) as FetchPagesResult;
  return { input, result, beats, env };
}

describe('fetchPages with user functions and authentication', () => {
  it('logs in (login headers computed from # secrets), sends the token, and keeps secrets and token out of history', async () => {
    mock.seen.length = 0;
    const { input, result, beats, env } = await runExampleActivity('118-function-login-headers-response');
    expect(seen()).toEqual(['GET /118-function-login-headers-response/auth', 'GET /118-function-login-headers-response/users']);
    expect(result).toMatchObject({ pages: 1, records: 2 });
    const history = JSON.stringify({ input, result, beats });
    for (const secret of [
      ...Object.values(env),
      'Sm9obkRvZTpUb3BTZWNyZXQ=',
      'd868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731',
      'a614a901d63e299c6f201a100f73cf0426d6271d',
    ]) {
      expect(history).not.toContain(secret);
    }
  });

  it('finishes a deferred hash of secrets (098: hash_hmac of two # values) in the activity only', async () => {
    mock.seen.length = 0;
    const { input, result, env } = await runExampleActivity('098-function-hmac');
    expect(seen()).toEqual(['GET /098-function-hmac/users?tokenHash=d868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731']);
    expect(result).toMatchObject({ pages: 1, records: 2 });
    const history = JSON.stringify({ input, result });
    for (const secret of [...Object.values(env), 'd868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731']) expect(history).not.toContain(secret);
  });
});
