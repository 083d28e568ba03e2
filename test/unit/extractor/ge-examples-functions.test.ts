/**
 * Documentation examples of authentication that the shared conformance run (`ge-examples.test.ts`) cannot judge
 * through its mock: OAuth signatures cover the host, port, a fresh nonce and the clock, so they are computed here
 * for the reference's `mock-server:80` with the nonce and clock of the reference run and compared with the header
 * the mock expects; 114's tables need mappings, so its requests are checked.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAuthentication, type AuthSetup } from '../../../src/extractor/auth/apply-auth';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { requestAuthOf } from '../../../src/extractor/http/send-request';
import { resolveJsonSecrets } from '../../../src/extractor/secrets';
import { startMockApi, type MockApi } from '../../harness/ge-examples/mock-api';
import { EXAMPLES_DIR, exampleConfig, runExample } from '../../harness/ge-examples/run-example';

/** The Authorization header the reference sent (the mock's `users.requestHeaders`). */
const expectedAuthorization = (example: string) =>
  readFileSync(join(EXAMPLES_DIR, example, 'users.requestHeaders'), 'utf8')
    .trim()
    .replace(/^Authorization: /, '');

async function signedAt(example: string, nowSeconds: number, nonce: string): Promise<Record<string, string>> {
  const { config, env } = exampleConfig(example, 'http://mock-server');
  const auth = resolveJsonSecrets(requestAuthOf(parseExtractorConfig(config)), { env }).value as AuthSetup;
  const request = { method: 'GET' as const, url: `http://mock-server/${example}/users`, headers: {} };
  const applied = await applyAuthentication(request, auth, {
    nowSeconds: () => nowSeconds,
    nonce: () => nonce,
    sendLogin: () => Promise.reject(new Error('no login request for this type')),
  });
  return applied.request.headers;
}

describe('OAuth signatures of the reference run', () => {
  it('102 (oauth10): the HMAC-SHA1 Authorization header is the one the reference sent', async () => {
    const headers = await signedAt('102-oauth1', 1492904452, '72469d96572dabb4d0ea02b057ea4f246d722b72');
    expect(headers).toEqual({ Authorization: expectedAuthorization('102-oauth1') });
  });

  it('104 (oauth20 MAC): the Authorization header built with functions is the one the reference sent', async () => {
    const headers = await signedAt('104-oauth2-hmac', 1492958193, '605cce2a2f687253');
    expect(headers).toEqual({ Authorization: expectedAuthorization('104-oauth2-hmac') });
  });
});

describe('OAuth 2.0 login example (114, whose tables need mappings)', () => {
  let mock: MockApi;
  beforeAll(async () => (mock = await startMockApi(EXAMPLES_DIR)));
  afterAll(() => mock.close());

  it('sends the FORM token request with the consumer and user credentials, then the report with the token', async () => {
    await runExample('114-oauth2-google', mock);
    expect(mock.seen.map((r) => [`${r.method} ${r.uri}`, r.matched !== null])).toEqual([
      ['POST /114-oauth2-google/token', true],
      ['GET /114-oauth2-google/reports?access_token=mkoijn098uhbygv', true],
    ]);
  });
});
