/**
 * Generic-Extractor documentation examples of user functions and authentication: each run against a mock of its
 * API (which answers only the exact requests the reference sends) must produce the reference's tables.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAuthentication, type AuthSetup } from '../../../src/extractor/auth/apply-auth';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { requestAuthOf } from '../../../src/extractor/http/send-request';
import { resolveJsonSecrets } from '../../../src/extractor/secrets';
import { EXAMPLES_DIR, exampleConfig, expectedTables, runExample, startExamplesMock, type ExamplesMock } from './ge-examples-harness';

let mock: ExamplesMock;
beforeAll(async () => {
  mock = await startExamplesMock();
});
afterAll(async () => {
  await mock.close();
});

const FUNCTION_EXAMPLES = [
  '085-function-job-placeholders',
  '086-function-job-placeholders-reference',
  '087-function-baseurl',
  '088-function-baseurl-sprintf',
  '089-function-job-parameters-md5',
  '090-function-job-parameters-sha1',
  '093-function-api-http-headers',
  '094-function-config-headers',
  '095-function-nested',
  '096-function-nested-from-to',
  '097-function-ifempty',
  '098-function-hmac',
  '119-function-nested-config',
  '136-post-request-functions',
];

const AUTH_EXAMPLES = [
  '077-query-auth',
  '078-basic-auth',
  '079-login-auth-headers',
  '080-login-auth-query',
  '081-login-auth-headers-query-override',
  '082-login-auth-expires',
  '083-login-auth-expires-date',
  '084-login-auth-expires-seconds',
  '099-function-query-parameters',
  '100-function-login-headers',
  '101-function-query-auth',
  '103-oauth2-bearer',
  '105-oauth2-login',
  '117-function-login-params-response',
  '118-function-login-headers-response',
  '128-login-auth-text',
  '129-login-auth-scalar',
];

describe('user-function examples produce the reference tables', () => {
  it.each(FUNCTION_EXAMPLES)('%s', async (example) => {
    const { tables } = await runExample(example, mock);
    expect(tables).toEqual(expectedTables(example));
  });
});

describe('authentication examples produce the reference tables', () => {
  it.each(AUTH_EXAMPLES)('%s', async (example) => {
    const { tables } = await runExample(example, mock);
    expect(tables).toEqual(expectedTables(example));
  });
});

describe('OAuth 2.0 MAC example (104) with the nonce and clock of the reference run', () => {
  it('computes the Authorization header the reference sent to mock-server:80', async () => {
    const example = '104-oauth2-hmac';
    const { config, env } = exampleConfig(example, 'http://mock-server');
    const parsed = parseExtractorConfig(config);
    const auth = resolveJsonSecrets(requestAuthOf(parsed), { env }).value as AuthSetup;
    const request = { method: 'GET' as const, url: 'http://mock-server/104-oauth2-hmac/users', headers: {} };
    const applied = await applyAuthentication(request, auth, {
      nowSeconds: () => 1492958193,
      nonce: () => '605cce2a2f687253',
      sendLogin: () => Promise.reject(new Error('no login for oauth20')),
    });
    const expected = readFileSync(join(EXAMPLES_DIR, example, 'users.requestHeaders'), 'utf8').trim().replace(/^Authorization: /, '');
    expect(applied.request.headers).toEqual({ Authorization: expected });
  });
});

describe('OAuth 1.0 example (102) with the nonce and clock of the reference run', () => {
  it('signs the request (HMAC-SHA1) exactly as the reference did for mock-server:80', async () => {
    const example = '102-oauth1';
    const { config, env } = exampleConfig(example, 'http://mock-server');
    const auth = resolveJsonSecrets(requestAuthOf(parseExtractorConfig(config)), { env }).value as AuthSetup;
    const request = { method: 'GET' as const, url: 'http://mock-server/102-oauth1/users', headers: {} };
    const applied = await applyAuthentication(request, auth, {
      nowSeconds: () => 1492904452,
      nonce: () => '72469d96572dabb4d0ea02b057ea4f246d722b72',
      sendLogin: () => Promise.reject(new Error('no login for oauth10')),
    });
    const expected = readFileSync(join(EXAMPLES_DIR, example, 'users.requestHeaders'), 'utf8').trim().replace(/^Authorization: /, '');
    expect(applied.request.headers).toEqual({ Authorization: expected });
  });
});

describe('OAuth 2.0 login example (114, whose tables need mappings)', () => {
  it('sends the FORM token request with the consumer and user credentials, then the report with the token', async () => {
    mock.seen.length = 0;
    await runExample('114-oauth2-google', mock);
    expect(mock.seen).toEqual(['POST /114-oauth2-google/token', 'GET /114-oauth2-google/reports?access_token=mkoijn098uhbygv']);
  });
});
