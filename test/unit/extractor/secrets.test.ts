import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { ExtractorConfigError } from '../../../src/extractor/errors';
import { createScrollerState } from '../../../src/extractor/scroller';
import { assertReferencesResolvable, clearSecretsError, findClearSecrets, resolveRequestSecrets, scrubError } from '../../../src/extractor/secrets';
import { ExtractHttpStatusError } from '../../../src/extractor/errors';
import { cursorOf } from '../../../src/contracts/extract-plan';

const KEY = 'k3y/with+odd chars&=';
const source = { env: { SAPI_SECRET_KEY: KEY, SAPI_TOKEN: 'storage-token', HOME: '/root' } };

function configWith(api: Record<string, unknown>, job: Record<string, unknown> = {}) {
  return { parameters: { api: { baseUrl: 'http://api.test/v1/', ...api }, config: { jobs: [{ endpoint: 'items', ...job }] } } };
}

describe('extractor secrets', () => {
  it('fills ${env:…} references in the URL, headers and body of a copy of the request, percent-encoded in the URL', () => {
    const config = parseExtractorConfig(
      configWith(
        { http: { headers: { Authorization: 'Bearer ${env:SAPI_SECRET_KEY}' } } },
        { params: { apikey: '${env:SAPI_SECRET_KEY}', '#apiKey': '${env:SAPI_SECRET_KEY}', limit: 2 } },
      ),
    );
    const state = createScrollerState(config.config.jobs[0]!, config.api, 0);
    const { request, secrets } = resolveRequestSecrets(state.next!, source);
    expect(request.headers.Authorization).toBe(`Bearer ${KEY}`);
    const url = new URL(request.url);
    expect(url.searchParams.get('apikey')).toBe(KEY);
    expect(url.searchParams.get('#apiKey')).toBe(KEY);
    expect(url.searchParams.get('limit')).toBe('2');
    expect(secrets).toEqual([KEY]);
    // the state the workflow keeps still holds the reference
    expect(JSON.stringify(state)).not.toContain('k3y');
    expect(state.next!.headers.Authorization).toBe('Bearer ${env:SAPI_SECRET_KEY}');
  });

  it('fills references in JSON and form bodies', () => {
    const json = resolveRequestSecrets(
      { method: 'POST', url: 'http://a/', headers: {}, body: { kind: 'json', value: { q: { token: '${env:SAPI_SECRET_KEY}' } } } },
      source,
    );
    expect(json.request.body).toEqual({ kind: 'json', value: { q: { token: KEY } } });
    const form = resolveRequestSecrets(
      { method: 'POST', url: 'http://a/', headers: {}, body: { kind: 'form', value: 'token=%24%7Benv%3ASAPI_SECRET_KEY%7D' } },
      source,
    );
    expect(new URLSearchParams((form.request.body as { value: string }).value).get('token')).toBe(KEY);
  });

  it('refuses a reference to a variable outside the prefix or not set, naming it, never its value', () => {
    const request = { method: 'GET' as const, url: 'http://a/?t=%24%7Benv%3ASAPI_TOKEN%7D', headers: {} };
    const err = (() => {
      try {
        resolveRequestSecrets(request, source);
      } catch (e) {
        return e as ExtractorConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ExtractorConfigError);
    expect(err!.code).toBe('SAPI_EXTRACT_CONFIG_INVALID');
    expect(err!.retryable).toBe(false);
    expect(err!.message).toContain('SAPI_SECRET_');
    expect(err!.message).toContain('SAPI_TOKEN');
    expect(err!.message).not.toContain('storage-token');
    expect(() => assertReferencesResolvable({ h: '${env:HOME}' }, source)).toThrow(/starting with SAPI_SECRET_.*HOME/);
    expect(() => assertReferencesResolvable({ h: '${env:SAPI_SECRET_MISSING}' }, source)).toThrow(/SAPI_SECRET_MISSING is not set/);
    expect(() => assertReferencesResolvable({ h: '${env:MY_KEY}' }, { ...source, prefix: 'MY_' })).toThrow(/MY_KEY is not set/);
    expect(() => assertReferencesResolvable({ h: '${env:SAPI_SECRET_KEY}' }, source)).not.toThrow();
  });

  it('still refuses the reference after the clear-secret scan looked at the same value (the scan left the pattern mid-string)', () => {
    const config = { headers: { 'X-Api-Key': '${env:SAPI_TOKEN}' } };
    expect(findClearSecrets(config)).toEqual([]);
    expect(() => assertReferencesResolvable(config, source)).toThrow(/starting with SAPI_SECRET_.*SAPI_TOKEN/);
  });

  it('finds secrets given in clear under # keys, credential headers and credential params, by path only', () => {
    const config = configWith(
      {
        http: {
          headers: { Authorization: 'Bearer abc', Accept: 'application/json', 'X-Api-Key': '${env:SAPI_SECRET_KEY}' },
          defaultOptions: { params: { access_token: 'zzz' } },
        },
      },
      { params: { '#apiKey': 's3cr3t', sort_key: 'name', keyword: 'x', nested: { '#pin': 1234 }, '#empty': '' } },
    );
    (config.parameters as Record<string, unknown>)['#password'] = 'hunter2';
    expect(findClearSecrets(config).sort()).toEqual(
      [
        'parameters.api.http.headers.Authorization',
        'parameters.api.http.defaultOptions.params.access_token',
        'parameters.config.jobs[0].params.#apiKey',
        'parameters.config.jobs[0].params.nested.#pin',
        'parameters.#password',
      ].sort(),
    );
    const error = clearSecretsError(findClearSecrets(config));
    expect(error.message).toContain('${env:SAPI_SECRET_NAME}');
    expect(error.message).not.toMatch(/abc|zzz|s3cr3t|1234|hunter2/);
  });

  it('scrubs resolved secrets (as is and percent-encoded) from an error, its URL and its cause', () => {
    const cause = new Error(`socket closed for ?k=${encodeURIComponent(KEY)}`);
    const err = new ExtractHttpStatusError(`GET http://a/?q=${encodeURIComponent(KEY)} answered HTTP 401: bad key ${KEY}`, {
      status: 401,
      url: `http://a/?q=${encodeURIComponent(KEY)}`,
      retryable: false,
    });
    Object.defineProperty(err, 'cause', { value: cause });
    scrubError(err, [KEY]);
    expect(JSON.stringify({ m: err.message, u: err.url, d: err.details, c: cause.message, s: err.stack })).not.toContain('k3y');
    expect(err.message).toContain('***');
  });

  it('redacts secret-looking query values in the progress cursor', () => {
    const config = parseExtractorConfig(configWith({}, { params: { apikey: 'clear-key', page: 1 } }));
    const state = createScrollerState(config.config.jobs[0]!, config.api, 0);
    expect(cursorOf(state)).toBe('http://api.test/v1/items?apikey=***&page=1');
  });
});
