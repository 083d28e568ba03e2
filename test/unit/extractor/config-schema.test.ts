import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { ExtractorConfigError, type ConfigIssue } from '../../../src/extractor/errors';

const valid = () => ({
  parameters: {
    api: {
      baseUrl: 'https://api.test/v1/',
      pagination: { method: 'response.param', responseParam: 'next', queryParam: 'cursor' },
    },
    config: { outputBucket: 'demo', jobs: [{ endpoint: 'items' }] },
  },
});

function issuesOf(input: unknown): ConfigIssue[] {
  try {
    parseExtractorConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ExtractorConfigError);
    expect((error as ExtractorConfigError).code).toBe('SAPI_EXTRACT_CONFIG_INVALID');
    return (error as ExtractorConfigError).issues;
  }
  throw new Error('expected the configuration to be rejected');
}

type Mutate = (c: ReturnType<typeof valid>) => unknown;
const api = (c: ReturnType<typeof valid>) => c.parameters.api as Record<string, unknown>;
const pagination = (c: ReturnType<typeof valid>) => c.parameters.api.pagination as Record<string, unknown>;
const job = (c: ReturnType<typeof valid>) => c.parameters.config.jobs[0] as Record<string, unknown>;

describe('parseExtractorConfig rejects invalid configurations before any request', () => {
  const cases: Array<[string, Mutate, string, string]> = [
    ['a missing parameters section', () => ({ replace: {} }), 'parameters', "The 'parameters' section is required in the configuration."],
    ['a missing config section', (c) => ({ replace: { parameters: { api: c.parameters.api } } }), 'parameters.config', "The 'config' section is required in the configuration."],
    ['a missing jobs list', (c) => ((c.parameters.config as Record<string, unknown>).jobs = undefined), 'parameters.config.jobs', "The 'jobs' section is required in the configuration."],
    ['an empty jobs list', (c) => (c.parameters.config.jobs = []), 'parameters.config.jobs', "The 'jobs' section is required in the configuration."],
    ['a missing api section', (c) => ({ replace: { parameters: { config: c.parameters.config } } }), 'parameters.api', "The 'api' section is required in configuration."],
    ['a missing baseUrl', (c) => (api(c).baseUrl = undefined), 'parameters.api.baseUrl', "The 'baseUrl' attribute must be set in API configuration"],
    ['an invalid baseUrl', (c) => (api(c).baseUrl = 'not a url'), 'parameters.api.baseUrl', "The 'baseUrl' attribute in API configuration is not a valid URL"],
    ['a non-http baseUrl', (c) => (api(c).baseUrl = 'ftp://files.test/'), 'parameters.api.baseUrl', "The 'baseUrl' attribute in API configuration is not a valid URL"],
    ['a job without endpoint', (c) => (job(c).endpoint = undefined), 'parameters.config.jobs[0].endpoint', "The 'endpoint' property must be set in job."],
    ['a job with an empty endpoint', (c) => (job(c).endpoint = ''), 'parameters.config.jobs[0].endpoint', "The 'endpoint' property must be set in job."],
    ['a job that is not an object', (c) => ((c.parameters.config.jobs as unknown[])[0] = 'items'), 'parameters.config.jobs[0]', 'Job configuration must be an object.'],
    ['an unknown job method', (c) => (job(c).method = 'PUT'), 'parameters.config.jobs[0].method', 'The "method" property must be one of "GET", "POST", "FORM" (case-insensitive).'],
    ['job params that are not an object', (c) => (job(c).params = 'a=1'), 'parameters.config.jobs[0].params', "The 'params' property must be an object."],
    ['children that are not an array', (c) => (job(c).children = { endpoint: 'x' }), 'parameters.config.jobs[0].children', "The 'children' property must be an array of jobs."],
    ['a child job without endpoint', (c) => (job(c).children = [{ placeholders: { id: 'id' } }]), 'parameters.config.jobs[0].children[0].endpoint', "The 'endpoint' property must be set in job."],
    ['a dataField object without path', (c) => (job(c).dataField = { delimiter: '/' }), 'parameters.config.jobs[0].dataField', "'dataField' must be either a path string or an object with 'path' attribute."],
    ['a dataType that makes an empty table name', (c) => (job(c).dataType = '!!!'), 'parameters.config.jobs[0].dataType', "The table name made from '!!!' is empty: set 'dataType' to a name with letters or digits."],
    ['a missing responseParam', (c) => (pagination(c).responseParam = undefined), 'parameters.api.pagination.responseParam', "Missing required 'pagination.responseParam' parameter."],
    ['an empty responseParam', (c) => (pagination(c).responseParam = ''), 'parameters.api.pagination.responseParam', "Missing required 'pagination.responseParam' parameter."],
    ['a missing queryParam', (c) => (pagination(c).queryParam = undefined), 'parameters.api.pagination.queryParam', "Missing required 'pagination.queryParam' parameter."],
    ['a scrollRequest that is not an object', (c) => (pagination(c).scrollRequest = 'scroll'), 'parameters.api.pagination.scrollRequest', "'pagination.scrollRequest' must be a job-like object (endpoint, method, params)."],
    ['a scrollRequest with an unknown method', (c) => (pagination(c).scrollRequest = { method: 'PATCH' }), 'parameters.api.pagination.scrollRequest.method', 'The "method" property must be one of "GET", "POST", "FORM" (case-insensitive).'],
    ['an includeParams that is not a boolean', (c) => (pagination(c).includeParams = 'yes'), 'parameters.api.pagination.includeParams', "'pagination.includeParams' must be a boolean."],
    ['an unknown pagination method', (c) => (pagination(c).method = 'magic'), 'parameters.api.pagination.method', "Unknown pagination method 'magic'"],
    ['a reference pagination method this extractor does not implement', (c) => (pagination(c).method = 'offset'), 'parameters.api.pagination.method', "Pagination method 'offset' is not supported by this extractor (supported: response.param, multiple)."],
    ['a forceStop.pages that is not an integer', (c) => (pagination(c).forceStop = { pages: 'many' }), 'parameters.api.pagination.forceStop.pages', "'forceStop.pages' must be a non-negative integer (0 means no limit)."],
    ['an unreadable forceStop.time', (c) => (pagination(c).forceStop = { time: 'soonish' }), 'parameters.api.pagination.forceStop.time', "'forceStop.time' must be a number of seconds or a duration such as \"1 hour\" or \"30 seconds\"."],
    ['a forceStop.volume that is negative', (c) => (pagination(c).forceStop = { volume: -1 }), 'parameters.api.pagination.forceStop.volume', "'forceStop.volume' must be a non-negative integer number of bytes."],
    ['a nextPageFlag without field', (c) => (pagination(c).nextPageFlag = { stopOn: true }), 'parameters.api.pagination.nextPageFlag.field', "'field' has to be specified for 'nextPageFlag'"],
    ['a nextPageFlag without stopOn', (c) => (pagination(c).nextPageFlag = { field: 'more' }), 'parameters.api.pagination.nextPageFlag.stopOn', "'stopOn' value must be set to a boolean value for 'nextPageFlag'"],
    ['a nextPageFlag with a string stopOn', (c) => (pagination(c).nextPageFlag = { field: 'more', stopOn: 'false' }), 'parameters.api.pagination.nextPageFlag.stopOn', "'stopOn' value must be set to a boolean value for 'nextPageFlag', given 'string' type."],
    ['a nextPageFlag with a numeric ifNotSet', (c) => (pagination(c).nextPageFlag = { field: 'more', stopOn: false, ifNotSet: 1 }), 'parameters.api.pagination.nextPageFlag.ifNotSet', "'ifNotSet' value must be boolean, given 'integer' type."],
    ['a limitStop with neither field nor count', (c) => (pagination(c).limitStop = { other: 1 }), 'parameters.api.pagination.limitStop', "One of 'limitStop.field' or 'limitStop.count' attributes is required."],
    ['a limitStop with both field and count', (c) => (pagination(c).limitStop = { field: 'total', count: 10 }), 'parameters.api.pagination.limitStop', "Specify only one of 'limitStop.field' or 'limitStop.count'."],
    ['multiple without scrollers', (c) => (api(c).pagination = { method: 'multiple' }), 'parameters.api.pagination.scrollers', 'At least one scroller must be configured for "multiple" scroller.'],
    ['multiple with an empty scrollers object', (c) => (api(c).pagination = { method: 'multiple', scrollers: {} }), 'parameters.api.pagination.scrollers', 'At least one scroller must be configured for "multiple" scroller.'],
    ['a named scroller without queryParam', (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'response.param', responseParam: 'n' } } }), 'parameters.api.pagination.scrollers.a.queryParam', "Missing required 'pagination.queryParam' parameter."],
    ['a named scroller that is itself multiple', (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'multiple' } } }), 'parameters.api.pagination.scrollers.a.method', "Unknown pagination method 'multiple'"],
    ['a default naming an undefined scroller', (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'response.param', responseParam: 'n', queryParam: 'q' } }, default: 'b' }), 'parameters.api.pagination.default', "Default scroller 'b' does not exist"],
    ['a child job naming an undefined scroller', (c) => { api(c).pagination = { method: 'multiple', scrollers: { a: {} } }; job(c).children = [{ endpoint: 'x/{id}', scroller: 'zz' }]; }, 'parameters.config.jobs[0].children[0].scroller', "Scroller 'zz' not set in API definitions. Scrollers defined: a"],
  ];

  it.each(cases)('%s is rejected with the path and the rule', (_name, mutate, path, message) => {
    const config = valid();
    const result = mutate(config);
    const input = typeof result === 'object' && result !== null && 'replace' in result ? result.replace : config;
    expect(issuesOf(input)).toEqual(expect.arrayContaining([{ path, message }]));
  });

  it('lists every issue with its path in one error message', () => {
    const config = valid();
    api(config).baseUrl = '';
    pagination(config).responseParam = undefined;
    job(config).endpoint = undefined;
    let message = '';
    try {
      parseExtractorConfig(config);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      [
        'Invalid extractor configuration (3 issues):',
        "- parameters.api.baseUrl: The 'baseUrl' attribute must be set in API configuration",
        "- parameters.api.pagination.responseParam: Missing required 'pagination.responseParam' parameter.",
        "- parameters.config.jobs[0].endpoint: The 'endpoint' property must be set in job.",
      ].join('\n'),
    );
  });
});

describe('parseExtractorConfig normalizes a valid configuration', () => {
  it('applies the documented defaults', () => {
    const config = parseExtractorConfig(valid());
    expect(config.config).toEqual({
      outputBucket: 'demo',
      debug: false,
      attributes: { outputBucket: 'demo' },
      jobs: [
        {
          id: '0',
          endpoint: 'items',
          method: 'GET',
          params: {},
          dataField: null,
          dataType: 'items',
          placeholders: {},
          scroller: null,
          children: [],
        },
      ],
    });
    expect(config.api.pagination).toEqual({
      method: 'response.param',
      responseParam: 'next',
      queryParam: 'cursor',
      includeParams: false,
      scrollRequest: null,
      forceStop: null,
      nextPageFlag: null,
      limitStop: null,
    });
    expect(Object.isFrozen(config.api)).toBe(true);
  });

  it('reads stop conditions into bytes, milliseconds and booleans', () => {
    const input = valid();
    Object.assign(pagination(input), {
      forceStop: { pages: '3', time: '2 minutes 30 seconds', volume: 1000 },
      nextPageFlag: { field: 'has_more', stopOn: false },
      limitStop: { field: 'meta.total' },
    });
    const p = parseExtractorConfig(input).api.pagination;
    expect(p).toMatchObject({
      forceStop: { pages: 3, timeMs: 150_000, volumeBytes: 1000 },
      nextPageFlag: { field: 'has_more', stopOn: false, ifNotSet: false },
      limitStop: { field: 'meta.total' },
    });
  });

  it('treats a missing pagination method as no pagination', () => {
    const input = valid();
    api(input).pagination = { forceStop: { pages: 2 } };
    expect(parseExtractorConfig(input).api.pagination.method).toBe('none');
  });

  it('merges api.http.headers with defaultOptions.headers and keeps default params', () => {
    const input = valid();
    api(input).http = { headers: { Accept: 'application/json', 'X-A': 1 }, defaultOptions: { params: { key: 'k' }, headers: { 'X-A': '2' } } };
    expect(parseExtractorConfig(input).api.http).toEqual({ headers: { Accept: 'application/json', 'X-A': '2' }, defaultParams: { key: 'k' } });
  });

  it('numbers child jobs by their position and defaults dataType to the endpoint template', () => {
    const input = valid();
    job(input).children = [{ endpoint: 'items/{id}/parts', placeholders: { id: 'id' } }];
    const child = parseExtractorConfig(input).config.jobs[0].children[0];
    expect(child).toMatchObject({ id: '0.0', dataType: 'items/{id}/parts', placeholders: { id: 'id' } });
  });

  it('accepts the dataField object form with a custom delimiter', () => {
    const input = valid();
    job(input).dataField = { path: 'a/b' , delimiter: '/' };
    expect(parseExtractorConfig(input).config.jobs[0].dataField).toEqual({ path: 'a/b', delimiter: '/' });
  });
});
