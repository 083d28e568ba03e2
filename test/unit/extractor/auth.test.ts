/**
 * Authentication: validation (what is refused, naming the key), login sessions (reuse, expiry, re-login), and the
 * merge rules of the reference.
 */
import { applyAuthentication, LoginSessions, mergeQuery, type AuthSetup } from '../../../src/extractor/auth/apply-auth';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { ExtractorConfigError } from '../../../src/extractor/errors';
import type { RequestDescriptor } from '../../../src/extractor/types';

const configWith = (authentication: unknown, extra: Record<string, unknown> = {}, top: Record<string, unknown> = {}) => ({
  parameters: { api: { baseUrl: 'http://api.test/', authentication }, config: { jobs: [{ endpoint: 'users' }], ...extra } },
  ...top,
});

function issuesOf(config: unknown): Array<{ path: string; message: string }> {
  try {
    parseExtractorConfig(config);
  } catch (e) {
    if (e instanceof ExtractorConfigError) return e.issues;
    throw e;
  }
  return [];
}

describe('authentication is validated before any request', () => {
  it.each([
    [
      { type: 'oauth10' },
      {},
      { authorization: { oauth_api: { credentials: { '#data': 'x', '#appSecret': 's' } } } },
      'authorization.oauth_api.credentials.appKey',
      /Missing 'appKey' for OAuth 1.0/,
    ],
    [{ type: 'digest' }, {}, {}, 'parameters.api.authentication.type', /Unknown authorization type 'digest'/],
    [{ type: 'query' }, {}, {}, 'parameters.api.authentication.query', /requires 'query' configuration/],
    [{ type: 'login' }, {}, {}, 'parameters.api.authentication.loginRequest', /'loginRequest' is not configured/],
    [{ type: 'login', loginRequest: { method: 'GET' } }, {}, {}, 'parameters.api.authentication.loginRequest.endpoint', /Request endpoint must be set/],
    [
      { type: 'login', loginRequest: { endpoint: 'a' }, format: 'xml' },
      {},
      {},
      'parameters.api.authentication.format',
      /'format' must be either 'json' or 'text'/,
    ],
    [{ type: 'login', loginRequest: { endpoint: 'a' }, expires: 'soon' }, {}, {}, 'parameters.api.authentication.expires', /'expires' attribute must be/],
    [{ type: 'basic' }, {}, {}, 'parameters.config.#username', /Missing the required '#username'/],
    [{ type: 'oauth20' }, {}, {}, 'authorization.oauth_api.credentials', /OAuth API credentials not supplied/],
    [
      { type: 'oauth20' },
      {},
      { authorization: { oauth_api: { credentials: { '#data': 'x', appKey: 'k' } } } },
      'authorization.oauth_api.credentials.#appSecret',
      /Missing '#appSecret'/,
    ],
    [{ type: 'query', query: { sig: { function: 'crc32', args: ['x'] } } }, {}, {}, 'parameters.api.authentication.query.sig', /Illegal function 'crc32'/],
  ])('%j is refused at %s', (authentication, extra, top, path, message) => {
    const issues = issuesOf(configWith(authentication, extra, top));
    expect(issues).toEqual(expect.arrayContaining([{ path, message: expect.stringMatching(message) }]));
  });

  it('accepts every supported type with what it needs', () => {
    expect(issuesOf(configWith({ type: 'basic' }, { '#username': '${env:SAPI_SECRET_U}', '#password': '${env:SAPI_SECRET_P}' }))).toEqual([]);
    expect(issuesOf(configWith({ type: 'url.query', query: { k: 'v' } }))).toEqual([]);
    expect(issuesOf(configWith({ type: 'login', loginRequest: { endpoint: 'login' }, expires: { response: 'exp', relative: true } }))).toEqual([]);
    const oauth = { authorization: { oauth_api: { credentials: { '#data': '${env:SAPI_SECRET_D}', appKey: 'k', '#appSecret': '${env:SAPI_SECRET_S}' } } } };
    expect(
      issuesOf(configWith({ type: 'oauth20', headers: { Authorization: { function: 'concat', args: ['Bearer ', { authorization: 'data' }] } } }, {}, oauth)),
    ).toEqual([]);
    expect(issuesOf(configWith({ type: 'oauth20.login', loginRequest: { endpoint: 'token', params: { id: { consumer: 'client_id' } } } }, {}, oauth))).toEqual(
      [],
    );
  });
});

describe('login sessions', () => {
  const request: RequestDescriptor = { method: 'GET', url: 'http://api.test/users?a=1', headers: {} };
  const setup = (settings: Record<string, unknown>): AuthSetup => ({
    authentication: {
      type: 'login',
      settings: { type: 'login', loginRequest: { endpoint: 'login' }, apiRequest: { headers: { 'X-Token': { response: 'token' } } }, ...settings },
      oauth: null,
    },
    attributes: {},
    baseUrl: 'http://api.test/',
  });

  function harness(responses: unknown[]) {
    const logins: string[] = [];
    let now = 1_000;
    const sessions = new LoginSessions();
    const options = {
      sessions,
      nowSeconds: () => now,
      sendLogin: async (login: RequestDescriptor) => {
        logins.push(`${login.method} ${login.url}`);
        return { body: responses[logins.length - 1] };
      },
    };
    return { logins, options, tick: (s: number) => (now += s) };
  }

  it('logs in once and reuses the session while it has not expired, then logs in again', async () => {
    const h = harness([
      { token: 'one', exp: 60 },
      { token: 'two', exp: 60 },
    ]);
    const s = setup({ expires: { response: 'exp', relative: true } });
    expect((await applyAuthentication(request, s, h.options)).request.headers).toEqual({ 'X-Token': 'one' });
    h.tick(60);
    expect((await applyAuthentication(request, s, h.options)).request.headers).toEqual({ 'X-Token': 'one' });
    h.tick(1);
    expect((await applyAuthentication(request, s, h.options)).request.headers).toEqual({ 'X-Token': 'two' });
    expect(h.logins).toEqual(['GET http://api.test/login', 'GET http://api.test/login']);
  });

  it('expires as seconds logs in again for every request when negative, never without expires', async () => {
    const negative = harness([{ token: 'a' }, { token: 'b' }]);
    await applyAuthentication(request, setup({ expires: '-1' }), negative.options);
    const second = await applyAuthentication(request, setup({ expires: '-1' }), negative.options);
    expect(second.request.headers).toEqual({ 'X-Token': 'b' });
    const never = harness([{ token: 'a' }]);
    never.tick(0);
    await applyAuthentication(request, setup({}), never.options);
    never.tick(1_000_000);
    await applyAuthentication(request, setup({}), never.options);
    expect(never.logins).toHaveLength(1);
  });

  it('reads an absolute expiry date and refuses one in the past', async () => {
    const h = harness([{ token: 'a', exp: '1970-01-01 00:20:00' }]); // 1200 s, now is 1000 s
    await applyAuthentication(request, setup({ expires: { response: 'exp' } }), h.options);
    const past = harness([{ token: 'a', exp: '1970-01-01 00:00:01' }]);
    await expect(applyAuthentication(request, setup({ expires: { response: 'exp' } }), past.options)).rejects.toThrow(
      "Login authentication returned expiry time before current time: '1970-01-01 00:00:01'",
    );
  });

  it('refuses a login response that is an array', async () => {
    const h = harness([[1, 2]]);
    await expect(applyAuthentication(request, setup({}), h.options)).rejects.toThrow(
      'The response to the login request should be an object or a scalar value, given "array".',
    );
  });
});

describe('query merge rules of the reference', () => {
  it('replaces a param of the same name for query auth, and keeps both as name[i] for login', () => {
    expect(mergeQuery('http://h/p?a=1&b=2', { b: 'x', c: 'y' })).toBe('http://h/p?a=1&b=x&c=y');
    expect(mergeQuery('http://h/p?a=1&b=2', { b: 'x', c: 'y' }, true)).toBe('http://h/p?a=1&c=y&b%5B0%5D=2&b%5B1%5D=x');
    expect(mergeQuery('http://h/p?b=2', { b: '2' }, true)).toBe('http://h/p?b%5B0%5D=2');
  });
});
