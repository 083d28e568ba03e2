/**
 * User functions: PHP semantics of each function, context references, where they are evaluated (workflow time,
 * deferred calls for hashing and secrets) and the errors that name the key.
 */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { ExtractorConfigError } from '../../../src/extractor/errors';
import { DeferredCall, evaluateFunctions, phpSprintf, phpUrlencode, USER_FUNCTIONS } from '../../../src/extractor/functions';
import { finishDeferred, nodeCryptoFunctions } from '../../../src/extractor/http/node-functions';
import { phpDate, phpStrtotime } from '../../../src/extractor/php-time';
import { runExtraction } from '../../harness/run-extraction';
import { createScrollerState } from '../../../src/extractor/scroller';
import { findClearSecrets, resolveJsonSecrets } from '../../../src/extractor/secrets';
import { describeRequest, fakeFetch } from './fake-api';

const T = 1492674974; // 2017-04-20 07:56:14 UTC
const evalWith = (expr: unknown, context: Record<string, unknown> = {}, nowMs = T * 1000) =>
  evaluateFunctions(expr, context, { nowMs, crypto: nodeCryptoFunctions, path: 'here' });

describe('PHP functions', () => {
  it('is exactly the reference function set', () => {
    expect([...USER_FUNCTIONS].sort()).toEqual(
      ['base64_encode', 'concat', 'date', 'hash_hmac', 'ifempty', 'implode', 'md5', 'sha1', 'sprintf', 'strtotime', 'time'].sort(),
    );
  });

  it.each([
    [{ function: 'md5', args: ['NotSoSecret'] }, '1228d3ff5089f27721f1e0403ad86e73'],
    [{ function: 'sha1', args: ['NotSoSecret'] }, '64d5d2977cc2573afbd187ff5e71d1529fd7f6d8'],
    [{ function: 'base64_encode', args: ['JohnDoe:TopSecret'] }, 'Sm9obkRvZTpUb3BTZWNyZXQ='],
    [{ function: 'hash_hmac', args: ['sha256', '12345abcd5678efgh90ijk', 'TeaPot'] }, 'd868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731'],
    [{ function: 'concat', args: ['id-', 12, true, null] }, 'id-121'],
    [{ function: 'implode', args: [',', ['a', 1, 'b']] }, 'a,1,b'],
    [{ function: 'ifempty', args: ['', 'all'] }, 'all'],
    [{ function: 'ifempty', args: ['0', 'all'] }, 'all'],
    [{ function: 'ifempty', args: ['id', 'all'] }, 'id'],
    [{ function: 'sprintf', args: ["%'.05d", 3] }, '00003'],
    [{ function: 'sprintf', args: ["%'*8s|%-4d|%+d|%.2f|%x|%05.1f", 'ab', 7, 5, 3.14159, 255, 2.5] }, '******ab|7   |+5|3.14|ff|002.5'],
    [{ function: 'sprintf', args: ['%2$s-%1$s %%', 'a', 'b'] }, 'b-a %'],
    [{ function: 'time' }, T],
    [{ function: 'date', args: ['Y-m-d H:i:s:u'] }, '2017-04-20 07:56:14:000000'],
    [{ function: 'date', args: ['D, d M Y \\a\\t G:i N jS z W t L', 1492674974] }, 'Thu, 20 Apr 2017 at 7:56 4 20th 109 16 30 0'],
    [{ function: 'date', args: ['Y-m-d', { function: 'strtotime', args: ['+7 days', { function: 'strtotime', args: ['2017-10-04'] }] }] }, '2017-10-11'],
  ])('%j → %j', (expr, expected) => {
    expect(evalWith(expr)).toEqual(expected);
  });

  it('strtotime understands absolute dates, relative parts, ago and keywords, and gives false otherwise', () => {
    expect(phpStrtotime('2017-10-04 12:30:15', 0)).toBe(1507120215);
    expect(phpStrtotime('2017-10-04T12:30:15+02:00', 0)).toBe(1507113015);
    expect(phpStrtotime('@86400', 0)).toBe(86400);
    expect(phpStrtotime('-1 day', T)).toBe(T - 86400);
    expect(phpStrtotime('2 weeks ago', T)).toBe(T - 14 * 86400);
    expect(phpStrtotime('yesterday', T)).toBe(Math.floor(T / 86400) * 86400 - 86400);
    expect(phpDate('Y-m-d', phpStrtotime('2017-01-31 +1 month', 0) as number)).toBe('2017-03-03'); // PHP overflows
    expect(phpStrtotime('-0 second', T)).toBe(T);
    expect(phpStrtotime('not a date', T)).toBe(false);
    const at = (text: string) => phpDate('Y-m-d H:i:s', phpStrtotime(text, T) as number); // T is a Thursday
    expect(at('first day of next month')).toBe('2017-05-01 07:56:14');
    expect(at('last day of this month')).toBe('2017-04-30 07:56:14');
    expect(at('last day of -2 months')).toBe('2017-02-28 07:56:14');
    expect(at('monday')).toBe('2017-04-24 00:00:00');
    expect(at('thursday')).toBe('2017-04-20 00:00:00');
    expect(at('next thursday')).toBe('2017-04-27 00:00:00');
    expect(at('last thursday')).toBe('2017-04-13 00:00:00');
    expect(at('last mon')).toBe('2017-04-17 00:00:00');
    expect(at('+2 weekdays')).toBe('2017-04-24 07:56:14');
  });

  it('urlencode (placeholders) encodes like PHP', () => {
    expect(phpUrlencode('a b/c~d')).toBe('a+b%2Fc%7Ed');
    expect(phpSprintf('%s', ['x'])).toBe('x');
  });
});

describe('context references and errors', () => {
  it('reads flattened attributes and leaves other objects as objects with evaluated members', () => {
    const context = { attr: { server: { address: 'h', port: '80' }, list: ['x'] } };
    expect(evalWith({ a: { attr: 'server.port' }, b: { attr: 'list.0' }, c: { user: 'x' } }, context)).toEqual({ a: '80', b: 'x', c: { user: 'x' } });
  });

  it('fails naming the key for an unknown function, a missing attribute or bad ifempty arguments', () => {
    const error = (expr: unknown) => {
      try {
        evalWith(expr, { attr: { a: 1 } });
      } catch (e) {
        expect(e).toBeInstanceOf(ExtractorConfigError);
        return (e as ExtractorConfigError).issues;
      }
      throw new Error('no error');
    };
    expect(error({ function: 'exec', args: ['ls'] })).toEqual([{ path: 'here', message: "User script error: Illegal function 'exec'!" }]);
    expect(error({ attr: 'missing' })).toEqual([{ path: 'here', message: "User script error: Error evaluating user function - attr 'missing' not found!" }]);
    expect(error({ function: 'ifempty', args: [1] })).toEqual([{ path: 'here', message: "User script error: Bad argument count for function 'ifempty'!" }]);
  });

  it('refuses at validation an unknown function, a missing attribute or a bad time reference, naming the key', () => {
    const config = {
      parameters: {
        api: { baseUrl: 'http://api.test/', http: { headers: { 'X-A': { function: 'concat', args: [{ attr: 'nope' }] } } } },
        config: {
          jobs: [
            {
              endpoint: 'users',
              params: { x: { function: 'system', args: [] }, y: { time: 'lastWeek' } },
              children: [{ endpoint: 'u/{id}', placeholders: { id: { path: 'id', function: 'eval' } } }],
            },
          ],
        },
      },
    };
    let issues: unknown;
    try {
      parseExtractorConfig(config);
    } catch (e) {
      issues = (e as ExtractorConfigError).issues.map((i) => i.path);
    }
    expect(issues).toEqual([
      'parameters.config.jobs[0].params.x',
      'parameters.config.jobs[0].params.y',
      'parameters.config.jobs[0].children[0].placeholders.id',
      'parameters.api.http.headers.X-A.args[0]',
    ]);
  });

  it('refuses a function baseUrl that does not make a URL, naming parameters.api.baseUrl', () => {
    expect(() =>
      parseExtractorConfig({ parameters: { api: { baseUrl: { function: 'concat', args: ['nope'] } }, config: { jobs: [{ endpoint: 'x' }] } } }),
    ).toThrow(/parameters\.api\.baseUrl: The "baseUrl" attribute in API configuration resulted in an invalid URL \("nope"\)/);
  });
});

describe('where functions are evaluated', () => {
  const jobConfig = (params: unknown, extra: Record<string, unknown> = {}) =>
    parseExtractorConfig({ parameters: { api: { baseUrl: 'http://api.test/v1/' }, config: { ...extra, jobs: [{ endpoint: 'items', params }] } } });

  it('sends {"time": …} params as values, never as objects; previousStart is 0 on a first run', async () => {
    const config = jobConfig({
      since: { time: 'previousStart' },
      until: { time: 'currentStart' },
      day: { function: 'date', args: ['Y-m-d', { time: 'currentStart' }] },
    });
    const result = await runExtraction(config, { fetchPage: fakeFetch([[]]), now: () => T * 1000 });
    expect(result.requests.map(describeRequest)).toEqual([`GET /v1/items?since=0&until=${T}&day=2017-04-20`]);
  });

  it('keeps currentStart at the extraction start for every job, as the reference', async () => {
    const config = parseExtractorConfig({
      parameters: {
        api: { baseUrl: 'http://api.test/v1/' },
        config: {
          jobs: [
            { endpoint: 'a', params: { t: { time: 'currentStart' } } },
            { endpoint: 'b', params: { t: { time: 'currentStart' } } },
          ],
        },
      },
    });
    const clock = [1_000_000, 5_000_000, 9_000_000];
    const result = await runExtraction(config, { fetchPage: fakeFetch([[], []]), now: () => clock.shift() ?? 9_999_000 });
    expect(result.requests.map(describeRequest)).toEqual(['GET /v1/a?t=1000', 'GET /v1/b?t=1000']);
  });

  it('uses the run times of the configuration when they are given (persisted between runs)', async () => {
    const config = jobConfig({ since: { time: 'previousStart' } });
    const withTimes = { ...config, config: { ...config.config, runTimes: { previousStart: 1000, currentStart: 2000 } } };
    const result = await runExtraction(withTimes, { fetchPage: fakeFetch([[]]), now: () => T * 1000 });
    expect(result.requests.map(describeRequest)).toEqual(['GET /v1/items?since=1000']);
  });

  it('evaluates time functions with the workflow time of the job run, so a replay builds the same request', () => {
    const config = jobConfig({ at: { function: 'time' } });
    const a = createScrollerState(config.config.jobs[0]!, config.api, 5_000_000, { attributes: {}, runTimes: null });
    const b = createScrollerState(config.config.jobs[0]!, config.api, 5_000_000, { attributes: {}, runTimes: null });
    expect(a.next).toEqual(b.next);
    expect(a.next!.url).toBe('http://api.test/v1/items?at=5000');
  });

  it('defers hashing to the activity, and a hash of a secret never exists before the activity fills it', () => {
    const config = jobConfig(
      {
        plain: { function: 'md5', args: [{ attr: 'name' }] },
        signed: { function: 'hash_hmac', args: ['sha256', { attr: '#key' }, 'TeaPot'] },
        joined: { function: 'concat', args: [{ attr: '#key' }, '!'] },
      },
      { name: 'NotSoSecret', '#key': '${env:SAPI_SECRET_KEY}' },
    );
    const state = createScrollerState(config.config.jobs[0]!, config.api, 0, { attributes: config.config.attributes!, runTimes: null });
    // the workflow's request: tokens, the reference kept, never a value computed from the secret
    expect(state.next!.url).toBe('http://api.test/v1/items?plain=%24%7Bfn%3A0%7D&signed=%24%7Bfn%3A1%7D&joined=%24%7Benv%3ASAPI_SECRET_KEY%7D%21');
    expect(state.next!.deferred).toEqual([
      { call: { function: 'md5', args: ['NotSoSecret'] }, nowMs: 0 },
      { call: { function: 'hash_hmac', args: ['sha256', '${env:SAPI_SECRET_KEY}', 'TeaPot'] }, nowMs: 0 },
    ]);
    expect(JSON.stringify(state)).not.toContain('12345abcd5678efgh90ijk');
    // the activity: secrets filled, calls finished, tokens replaced (percent-encoded in the URL)
    const env = { SAPI_SECRET_KEY: '12345abcd5678efgh90ijk' };
    const fill = (json: unknown) => resolveJsonSecrets(json, { env }).value;
    const { request, derived } = finishDeferred(state.next!, fill);
    expect(request.url).toBe(
      'http://api.test/v1/items?plain=1228d3ff5089f27721f1e0403ad86e73&signed=d868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731&joined=%24%7Benv%3ASAPI_SECRET_KEY%7D%21',
    );
    expect(request.deferred).toBeUndefined();
    expect(derived).toEqual(['d868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731']);
  });

  it("runs a placeholder function per parent row with the parent job run's time, and urlencode", async () => {
    const config = parseExtractorConfig({
      parameters: {
        api: { baseUrl: 'http://api.test/v1/' },
        config: {
          jobs: [
            {
              endpoint: 'users',
              children: [
                {
                  endpoint: 'user/{id}',
                  dataField: '.',
                  placeholders: {
                    id: {
                      path: 'name',
                      function: 'concat',
                      args: [{ function: 'urlencode', args: [{ placeholder: 'value' }] }, '-', { function: 'date', args: ['Y'] }],
                    },
                  },
                },
              ],
            },
          ],
        },
      },
    });
    const result = await runExtraction(config, { fetchPage: fakeFetch([[{ name: 'a b' }], { id: 1 }]), now: () => T * 1000 });
    expect(result.requests.map(describeRequest)).toEqual(['GET /v1/users', 'GET /v1/user/a+b-2017']);
    expect(Object.keys(result.tables)).toEqual(['users', 'user_id']);
    expect(result.tables.user_id!.rows).toEqual([{ id: '1', parent_name: 'a+b-2017' }]);
  });

  it('refuses at validation a header that is an object but no function, naming it', () => {
    expect(() =>
      parseExtractorConfig({
        parameters: { api: { baseUrl: 'http://api.test/', http: { headers: { 'X-A': { b: 1 } } } }, config: { jobs: [{ endpoint: 'x' }] } },
      }),
    ).toThrow(/parameters\.api\.http\.headers\.X-A: Invalid configuration: invalid type "object" in headers at path: X-A/);
  });

  it('fails naming the header when a header function gives an object', () => {
    const config = parseExtractorConfig({
      parameters: {
        api: { baseUrl: 'http://api.test/', http: { headers: { 'X-A': { function: 'ifempty', args: ['', { a: 1 }] } } } },
        config: { jobs: [{ endpoint: 'x' }] },
      },
    });
    expect(() => createScrollerState(config.config.jobs[0]!, config.api, 0, { attributes: {}, runTimes: null })).toThrow(
      /parameters\.api\.http\.headers\.X-A: Invalid configuration: invalid type "object" in headers/,
    );
  });

  it('keeps deferred calls on scroll requests (includeParams), finished on every page', async () => {
    const config = parseExtractorConfig({
      parameters: {
        api: { baseUrl: 'http://api.test/v1/', pagination: { method: 'response.param', responseParam: 'next', queryParam: 'cursor', includeParams: true } },
        config: { jobs: [{ endpoint: 'items', params: { sig: { function: 'sha1', args: ['x'] } } }] },
      },
    });
    const result = await runExtraction(config, { fetchPage: fakeFetch([{ items: [{ id: 1 }], next: 'c2' }, { items: [{ id: 2 }] }]), now: () => 0 });
    const sent = result.requests.map((r) => describeRequest(finishDeferred(r, (j) => j).request));
    expect(sent).toEqual([
      'GET /v1/items?sig=11f6ad8ec52a2984abaafd7c3b516503785c2072',
      'GET /v1/items?sig=11f6ad8ec52a2984abaafd7c3b516503785c2072&cursor=c2',
    ]);
  });

  it('keeps a deferred call inside a JSON body with its type', () => {
    const request = {
      method: 'POST' as const,
      url: 'http://x/',
      headers: {},
      body: { kind: 'json' as const, value: { a: '${fn:0}', b: 'pre-${fn:0}' } },
      deferred: [{ call: { function: 'time' }, nowMs: 7000 }],
    };
    expect(finishDeferred(request, (j) => j).request.body).toEqual({ kind: 'json', value: { a: 7, b: 'pre-7' } });
  });

  it('a deferred call is a DeferredCall without crypto, a value with it', () => {
    const expr = { function: 'sha1', args: ['x'] };
    expect(evaluateFunctions(expr, {}, { nowMs: 0, path: 'p' })).toBeInstanceOf(DeferredCall);
    expect(evaluateFunctions(expr, {}, { nowMs: 0, path: 'p', crypto: nodeCryptoFunctions })).toBe('11f6ad8ec52a2984abaafd7c3b516503785c2072');
  });
});

describe('clear secrets and functions', () => {
  it('accepts a credential header computed from secrets and refuses one computed from literals only', () => {
    const config = (value: unknown) => ({
      parameters: {
        api: { baseUrl: 'http://a/', http: { headers: { Authorization: value } } },
        config: { '#t': '${env:SAPI_SECRET_T}', jobs: [{ endpoint: 'x' }] },
      },
    });
    expect(findClearSecrets(config({ function: 'concat', args: ['Bearer ', { attr: '#t' }] }))).toEqual([]);
    expect(findClearSecrets(config({ function: 'concat', args: ['Bearer ', 'abc123'] }))).toEqual(['parameters.api.http.headers.Authorization']);
  });

  it('points at the clear attribute a credential param is computed from, and accepts it once that is a reference', () => {
    const config = (tokenValue: string) => ({
      parameters: {
        api: { baseUrl: 'http://a/' },
        config: { tokenValue, jobs: [{ endpoint: 'x', params: { token: { function: 'md5', args: [{ attr: 'tokenValue' }] } } }] },
      },
    });
    expect(findClearSecrets(config('NotSoSecret'))).toEqual(['parameters.config.tokenValue']);
    expect(findClearSecrets(config('${env:SAPI_SECRET_T}'))).toEqual([]);
  });

  it('does not take login apiRequest paths for clear secrets, but does take clear login credentials', () => {
    const config = {
      parameters: {
        api: {
          baseUrl: 'http://a/',
          authentication: {
            type: 'login',
            loginRequest: { endpoint: 'auth', headers: { 'X-Password': 'TopSecret' } },
            apiRequest: { headers: { 'X-Api-Token': 'token' } },
          },
        },
        config: { jobs: [{ endpoint: 'x' }] },
      },
    };
    expect(findClearSecrets(config)).toEqual(['parameters.api.authentication.loginRequest.headers.X-Password']);
  });
});

describe('user functions meet run state, HTTP client options and paging', () => {
  const fn = (value: string) => ({ function: 'concat', args: [value, '!'] });
  const headersOf = (http: Record<string, unknown>, configHttp: Record<string, unknown>) => {
    const parsed = parseExtractorConfig({
      parameters: { api: { baseUrl: 'http://api.test/', http }, config: { http: { headers: configHttp }, jobs: [{ endpoint: 'x' }] } },
    });
    return createScrollerState(parsed.config.jobs[0]!, parsed.api, 0, { attributes: parsed.config.attributes!, runTimes: null }).next!.headers;
  };

  it('config.http.headers take functions, with the reference precedence: they replace api.http.headers, defaultOptions.headers win', () => {
    expect(headersOf({ headers: { 'X-A': 'api', 'X-B': fn('api') } }, { 'X-A': fn('config'), 'X-B': 'config' })).toMatchObject({
      'X-A': 'config!',
      'X-B': 'config',
    });
    expect(
      headersOf(
        { headers: { 'X-A': 'api' }, defaultOptions: { headers: { 'X-A': 'default', 'X-C': fn('default') } } },
        { 'X-A': fn('config'), 'X-C': 'config' },
      ),
    ).toMatchObject({
      'X-A': 'default',
      'X-C': 'default!',
    });
  });

  it('a required header set by a function counts as given', () => {
    expect(() =>
      parseExtractorConfig({
        parameters: {
          api: { baseUrl: 'http://api.test/', http: { requiredHeaders: ['X-Key'] } },
          config: { http: { headers: { 'X-Key': fn('k') } }, jobs: [{ endpoint: 'x' }] },
        },
      }),
    ).not.toThrow();
  });

  it('runExtraction reads previousStart from the run state it is given, and evaluates functions in paging requests', async () => {
    const config = parseExtractorConfig({
      parameters: {
        api: { baseUrl: 'http://api.test/v1/', pagination: { method: 'offset', limit: 1 } },
        config: { jobs: [{ endpoint: 'items', params: { since: { time: 'previousStart' }, now: { time: 'currentStart' } } }] },
      },
    });
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 1 }], []]),
      now: () => T * 1000,
      runTimes: { previousStart: 1000, currentStart: 2000 },
    });
    expect(result.requests.map(describeRequest)).toEqual([
      'GET /v1/items?since=1000&now=2000&limit=1&offset=0',
      'GET /v1/items?since=1000&now=2000&limit=1&offset=1',
    ]);
    expect(result.runTimes).toEqual({ previousStart: 1000, currentStart: 2000 });
  });
});
