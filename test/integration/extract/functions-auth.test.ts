/**
 * User functions and authentication in the durable extraction: basic authentication from `#` references and a
 * param signed with `hash_hmac` of a secret (a call the workflow defers to the activity) reach the API, which refuses
 * requests without them; neither the secrets nor the values computed from them reach any history.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import type { ExtractInput, ExtractResult } from '../../../src/contracts/extract';
import { historyText } from '../../harness/history';
import { noteSecret } from '../../harness/secret-ledger';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { FAST_FETCH, storedIds } from './support';

const USER = `user-${randomUUID().slice(0, 8)}`;
const PASSWORD = `pw-${randomUUID()}`;
const KEY = `key-${randomUUID()}`;
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const SIGNATURE = createHmac('sha256', 'items').update(KEY).digest('hex');
const DIGEST = createHash('md5').update('plain-value').digest('hex');

describe('user functions and authentication in extractWorkflow', () => {
  let env: SapiTestEnv;
  let api: SampleApi;

  beforeAll(async () => {
    Object.assign(process.env, { SAPI_SECRET_FN_USER: USER, SAPI_SECRET_FN_PASSWORD: PASSWORD, SAPI_SECRET_FN_KEY: KEY });
    // bound to the local API's host (the input policy refuses unbound secrets)
    for (const name of ['SAPI_SECRET_FN_USER', 'SAPI_SECRET_FN_PASSWORD', 'SAPI_SECRET_FN_KEY']) process.env[`${name}_HOSTS`] = '127.0.0.1,localhost';
    noteSecret('a basic-auth password', PASSWORD);
    noteSecret('an HMAC key', KEY);
    noteSecret('an HMAC computed from a secret', SIGNATURE);
    noteSecret('a basic Authorization header', BASIC.slice('Basic '.length));
    [env, api] = await Promise.all([
      startSapiTestEnv('extract-functions'),
      createSampleApi({ records: 25, pageSize: 10, requireAuth: { headers: { Authorization: BASIC }, query: { sig: SIGNATURE, digest: DIGEST } } }),
    ]);
  });
  afterAll(async () => {
    for (const name of ['SAPI_SECRET_FN_USER', 'SAPI_SECRET_FN_PASSWORD', 'SAPI_SECRET_FN_KEY']) {
      delete process.env[name];
      delete process.env[`${name}_HOSTS`];
    }
    await api?.close();
    await env?.stop();
  });

  it('authenticates every request, finishes deferred calls in the activity and keeps secrets and derived values out of history', async () => {
    const config = {
      parameters: {
        api: {
          baseUrl: api.url,
          authentication: { type: 'basic' },
          pagination: { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor', includeParams: true },
        },
        config: {
          outputBucket: 'functions',
          '#username': '${env:SAPI_SECRET_FN_USER}',
          '#password': '${env:SAPI_SECRET_FN_PASSWORD}',
          '#key': '${env:SAPI_SECRET_FN_KEY}',
          plain: 'plain-value',
          jobs: [
            {
              endpoint: 'cursor/items',
              dataType: 'users',
              params: {
                sig: { function: 'hash_hmac', args: ['sha256', { attr: '#key' }, 'items'] },
                digest: { function: 'md5', args: [{ attr: 'plain' }] },
              },
            },
          ],
        },
      },
    };
    const input: ExtractInput = { config, options: { fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 } } };
    const handle = await env.client.workflow.start('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `extract-functions-${Date.now()}`,
      args: [input],
    });
    const result = (await handle.result()) as ExtractResult;

    expect(api.requests.length).toBe(3); // the API answers 401 without the header and both params
    expect(result).toMatchObject({ pages: 3, records: 25, bucketId: 'in.c-functions' });
    expect(await storedIds(env, 'in.c-functions.users')).toHaveLength(25);
    const text = await historyText(handle);
    for (const value of [PASSWORD, KEY, SIGNATURE, BASIC.slice('Basic '.length)]) expect(text).not.toContain(value);
    expect(text).toContain('${fn:0}'); // the deferred call travels as a token
  });
});
