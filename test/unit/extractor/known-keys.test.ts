import { parseExtractorConfig } from '../../../src/extractor/config-schema';

const config = (api: Record<string, unknown> = {}, job: Record<string, unknown> = {}, root: Record<string, unknown> = {}) => ({
  parameters: {
    api: { baseUrl: 'http://api.test/', ...api },
    config: { outputBucket: 'b', startDate: '2017-01-01', '#password': '${env:SAPI_SECRET_X}', jobs: [{ endpoint: 'users', ...job }] },
  },
  ...root,
});
const refusal = (json: unknown) => {
  try {
    parseExtractorConfig(json);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('keys this extractor does not read are refused, named, instead of being ignored', () => {
  it.each([
    [
      'a misspelled job key',
      config({}, { dataFeild: 'items' }),
      "parameters.config.jobs[0].dataFeild: 'dataFeild' is not a key this extractor knows in 'parameters.config.jobs[0]'",
    ],
    [
      'a child job key',
      config({}, { children: [{ endpoint: 'u/{id}', placeholders: { id: 'id' }, recursionFiltr: 'a==1' }] }),
      "parameters.config.jobs[0].children[0].recursionFiltr: 'recursionFiltr' is not a key",
    ],
    ['an api key', config({ retry: { maxRetries: 3 } }), "parameters.api.retry: 'retry' is not a key this extractor knows in 'parameters.api'"],
    [
      'a key of the pagination method',
      config({ pagination: { method: 'offset', limit: 10, offsetParm: 'o' } }),
      "parameters.api.pagination.offsetParm: 'offsetParm' is not a key",
    ],
    [
      'a key of a named scroller',
      config({ pagination: { method: 'multiple', scrollers: { s: { method: 'pagenum', pageParm: 'p' } } } }),
      "parameters.api.pagination.scrollers.s.pageParm: 'pageParm' is not a key",
    ],
    ['an http option', config({ http: { headers: {}, timeout: 5 } }), "parameters.api.http.timeout: 'timeout' is not a key"],
    [
      'an authentication key',
      config({ authentication: { type: 'query', query: { k: '${env:SAPI_SECRET_X}' }, signature: 'x' } }),
      "parameters.api.authentication.signature: 'signature' is not a key",
    ],
    ['a top-level key', config({}, {}, { storage: { output: {} } }), "storage: 'storage' is not a key this extractor knows, so it would be ignored"],
  ])('%s', (_, json, expected) => {
    expect(refusal(json)).toContain(expected);
  });

  it('takes the keys of parameters.config besides jobs and the other known ones as attributes (functions read them)', () => {
    expect(refusal(config())).toBe('accepted');
  });
});
