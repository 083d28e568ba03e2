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
    [
      'a missing config section',
      (c) => ({ replace: { parameters: { api: c.parameters.api } } }),
      'parameters.config',
      "The 'config' section is required in the configuration.",
    ],
    [
      'a missing jobs list',
      (c) => ((c.parameters.config as Record<string, unknown>).jobs = undefined),
      'parameters.config.jobs',
      "The 'jobs' section is required in the configuration.",
    ],
    ['an empty jobs list', (c) => (c.parameters.config.jobs = []), 'parameters.config.jobs', "The 'jobs' section is required in the configuration."],
    [
      'a missing api section',
      (c) => ({ replace: { parameters: { config: c.parameters.config } } }),
      'parameters.api',
      "The 'api' section is required in configuration.",
    ],
    ['a missing baseUrl', (c) => (api(c).baseUrl = undefined), 'parameters.api.baseUrl', "The 'baseUrl' attribute must be set in API configuration"],
    ['an invalid baseUrl', (c) => (api(c).baseUrl = 'not a url'), 'parameters.api.baseUrl', "The 'baseUrl' attribute in API configuration is not a valid URL"],
    [
      'a non-http baseUrl',
      (c) => (api(c).baseUrl = 'ftp://files.test/'),
      'parameters.api.baseUrl',
      "The 'baseUrl' attribute in API configuration is not a valid URL",
    ],
    ['a job without endpoint', (c) => (job(c).endpoint = undefined), 'parameters.config.jobs[0].endpoint', "The 'endpoint' property must be set in job."],
    ['a job with an empty endpoint', (c) => (job(c).endpoint = ''), 'parameters.config.jobs[0].endpoint', "The 'endpoint' property must be set in job."],
    [
      'a job that is not an object',
      (c) => ((c.parameters.config.jobs as unknown[])[0] = 'items'),
      'parameters.config.jobs[0]',
      'Job configuration must be an object.',
    ],
    [
      'an unknown job method',
      (c) => (job(c).method = 'PUT'),
      'parameters.config.jobs[0].method',
      'The "method" property must be one of "GET", "POST", "FORM" (case-insensitive).',
    ],
    ['job params that are not an object', (c) => (job(c).params = 'a=1'), 'parameters.config.jobs[0].params', "The 'params' property must be an object."],
    [
      'children that are not an array',
      (c) => (job(c).children = { endpoint: 'x' }),
      'parameters.config.jobs[0].children',
      "The 'children' property must be an array of jobs.",
    ],
    [
      'a child job without endpoint',
      (c) => (job(c).children = [{ placeholders: { id: 'id' } }]),
      'parameters.config.jobs[0].children[0].endpoint',
      "The 'endpoint' property must be set in job.",
    ],
    [
      'a dataField object without path',
      (c) => (job(c).dataField = { delimiter: '/' }),
      'parameters.config.jobs[0].dataField',
      "'dataField' must be either a path string or an object with 'path' attribute.",
    ],
    [
      'a dataType that makes an empty table name',
      (c) => (job(c).dataType = '!!!'),
      'parameters.config.jobs[0].dataType',
      "The table name made from '!!!' is empty: set 'dataType' to a name with letters or digits.",
    ],
    [
      'a missing responseParam',
      (c) => (pagination(c).responseParam = undefined),
      'parameters.api.pagination.responseParam',
      "Missing required 'pagination.responseParam' parameter.",
    ],
    [
      'an empty responseParam',
      (c) => (pagination(c).responseParam = ''),
      'parameters.api.pagination.responseParam',
      "Missing required 'pagination.responseParam' parameter.",
    ],
    [
      'a missing queryParam',
      (c) => (pagination(c).queryParam = undefined),
      'parameters.api.pagination.queryParam',
      "Missing required 'pagination.queryParam' parameter.",
    ],
    [
      'a scrollRequest that is not an object',
      (c) => (pagination(c).scrollRequest = 'scroll'),
      'parameters.api.pagination.scrollRequest',
      "'pagination.scrollRequest' must be a job-like object (endpoint, method, params).",
    ],
    [
      'a scrollRequest with an unknown method',
      (c) => (pagination(c).scrollRequest = { method: 'PATCH' }),
      'parameters.api.pagination.scrollRequest.method',
      'The "method" property must be one of "GET", "POST", "FORM" (case-insensitive).',
    ],
    [
      'an includeParams that is not a boolean',
      (c) => (pagination(c).includeParams = 'yes'),
      'parameters.api.pagination.includeParams',
      "'pagination.includeParams' must be a boolean.",
    ],
    ['an unknown pagination method', (c) => (pagination(c).method = 'magic'), 'parameters.api.pagination.method', "Unknown pagination method 'magic'"],
    [
      'an offset scroller without limit',
      (c) => (api(c).pagination = { method: 'offset' }),
      'parameters.api.pagination.limit',
      "Missing 'pagination.limit' attribute required for offset pagination",
    ],
    [
      'an offset scroller with limit 0',
      (c) => (api(c).pagination = { method: 'offset', limit: '0' }),
      'parameters.api.pagination.limit',
      "Missing 'pagination.limit' attribute required for offset pagination",
    ],
    [
      'an offset scroller with a non-numeric limit',
      (c) => (api(c).pagination = { method: 'offset', limit: 'ten' }),
      'parameters.api.pagination.limit',
      "Parameter 'pagination.limit' is not numeric. Value '\"ten\"'.",
    ],
    [
      'an offset scroller with a negative limit',
      (c) => (api(c).pagination = { method: 'offset', limit: -2 }),
      'parameters.api.pagination.limit',
      "'pagination.limit' must be at least 1, given '-2'.",
    ],
    [
      'an offset scroller with a string firstPageParams',
      (c) => (api(c).pagination = { method: 'offset', limit: 2, firstPageParams: 'no' }),
      'parameters.api.pagination.firstPageParams',
      "'pagination.firstPageParams' must be a boolean (true or false).",
    ],
    [
      'an offset scroller with a numeric offsetParam',
      (c) => (api(c).pagination = { method: 'offset', limit: 2, offsetParam: 5 }),
      'parameters.api.pagination.offsetParam',
      "'pagination.offsetParam' must be a string.",
    ],
    [
      'a pagenum scroller with a non-numeric limit',
      (c) => (api(c).pagination = { method: 'pagenum', limit: [5] }),
      'parameters.api.pagination.limit',
      "Parameter 'pagination.limit' is not numeric. Value '[5]'.",
    ],
    [
      'a pagenum scroller with a firstPage that is not an integer',
      (c) => (api(c).pagination = { method: 'pagenum', firstPage: 'one' }),
      'parameters.api.pagination.firstPage',
      "'pagination.firstPage' must be an integer, given '\"one\"'.",
    ],
    [
      'a response.url scroller with an empty delimiter',
      (c) => (api(c).pagination = { method: 'response.url', delimiter: '' }),
      'parameters.api.pagination.delimiter',
      "'pagination.delimiter' must not be empty.",
    ],
    [
      'a response.url scroller with a string paramIsQuery',
      (c) => (api(c).pagination = { method: 'response.url', paramIsQuery: 'true' }),
      'parameters.api.pagination.paramIsQuery',
      "'pagination.paramIsQuery' must be a boolean (true or false).",
    ],
    [
      'a cursor scroller without idKey',
      (c) => (api(c).pagination = { method: 'cursor', param: 'since' }),
      'parameters.api.pagination.idKey',
      "Missing 'pagination.idKey' attribute required for cursor pagination",
    ],
    [
      'a cursor scroller without param',
      (c) => (api(c).pagination = { method: 'cursor', idKey: 'id' }),
      'parameters.api.pagination.param',
      "Missing 'pagination.param' attribute required for cursor pagination",
    ],
    [
      'a cursor scroller with a fractional increment',
      (c) => (api(c).pagination = { method: 'cursor', idKey: 'id', param: 'since', increment: 1.5 }),
      'parameters.api.pagination.increment',
      "'pagination.increment' must be an integer, given '1.5'.",
    ],
    [
      'a named offset scroller without limit',
      (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'offset' } } }),
      'parameters.api.pagination.scrollers.a.limit',
      "Missing 'pagination.limit' attribute required for offset pagination",
    ],
    [
      'a nextPageFlag next to method multiple without stopOn',
      (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'pagenum' } }, nextPageFlag: { field: 'more' } }),
      'parameters.api.pagination.nextPageFlag.stopOn',
      "'stopOn' value must be set to a boolean value for 'nextPageFlag'",
    ],
    [
      'a forceStop.pages that is not an integer',
      (c) => (pagination(c).forceStop = { pages: 'many' }),
      'parameters.api.pagination.forceStop.pages',
      "'forceStop.pages' must be a non-negative integer (0 means no limit).",
    ],
    [
      'an unreadable forceStop.time',
      (c) => (pagination(c).forceStop = { time: 'soonish' }),
      'parameters.api.pagination.forceStop.time',
      '\'forceStop.time\' must be a number of seconds or a duration such as "1 hour" or "30 seconds".',
    ],
    [
      'a forceStop.volume that is negative',
      (c) => (pagination(c).forceStop = { volume: -1 }),
      'parameters.api.pagination.forceStop.volume',
      "'forceStop.volume' must be a non-negative integer number of bytes.",
    ],
    [
      'a nextPageFlag without field',
      (c) => (pagination(c).nextPageFlag = { stopOn: true }),
      'parameters.api.pagination.nextPageFlag.field',
      "'field' has to be specified for 'nextPageFlag'",
    ],
    [
      'a nextPageFlag without stopOn',
      (c) => (pagination(c).nextPageFlag = { field: 'more' }),
      'parameters.api.pagination.nextPageFlag.stopOn',
      "'stopOn' value must be set to a boolean value for 'nextPageFlag'",
    ],
    [
      'a nextPageFlag with a string stopOn',
      (c) => (pagination(c).nextPageFlag = { field: 'more', stopOn: 'false' }),
      'parameters.api.pagination.nextPageFlag.stopOn',
      "'stopOn' value must be set to a boolean value for 'nextPageFlag', given 'string' type.",
    ],
    [
      'a nextPageFlag with a numeric ifNotSet',
      (c) => (pagination(c).nextPageFlag = { field: 'more', stopOn: false, ifNotSet: 1 }),
      'parameters.api.pagination.nextPageFlag.ifNotSet',
      "'ifNotSet' value must be boolean, given 'integer' type.",
    ],
    [
      'a limitStop with neither field nor count',
      (c) => (pagination(c).limitStop = { other: 1 }),
      'parameters.api.pagination.limitStop',
      "One of 'limitStop.field' or 'limitStop.count' attributes is required.",
    ],
    [
      'a limitStop with both field and count',
      (c) => (pagination(c).limitStop = { field: 'total', count: 10 }),
      'parameters.api.pagination.limitStop',
      "Specify only one of 'limitStop.field' or 'limitStop.count'.",
    ],
    [
      'multiple without scrollers',
      (c) => (api(c).pagination = { method: 'multiple' }),
      'parameters.api.pagination.scrollers',
      'At least one scroller must be configured for "multiple" scroller.',
    ],
    [
      'multiple with an empty scrollers object',
      (c) => (api(c).pagination = { method: 'multiple', scrollers: {} }),
      'parameters.api.pagination.scrollers',
      'At least one scroller must be configured for "multiple" scroller.',
    ],
    [
      'a named scroller without queryParam',
      (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'response.param', responseParam: 'n' } } }),
      'parameters.api.pagination.scrollers.a.queryParam',
      "Missing required 'pagination.queryParam' parameter.",
    ],
    [
      'a named scroller that is itself multiple',
      (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'multiple' } } }),
      'parameters.api.pagination.scrollers.a.method',
      "Unknown pagination method 'multiple'",
    ],
    [
      'a default naming an undefined scroller',
      (c) => (api(c).pagination = { method: 'multiple', scrollers: { a: { method: 'response.param', responseParam: 'n', queryParam: 'q' } }, default: 'b' }),
      'parameters.api.pagination.default',
      "Default scroller 'b' does not exist",
    ],
    [
      'a child job naming an undefined scroller',
      (c) => {
        api(c).pagination = { method: 'multiple', scrollers: { a: {} } };
        job(c).children = [{ endpoint: 'x/{id}', scroller: 'zz' }];
      },
      'parameters.config.jobs[0].children[0].scroller',
      "Scroller 'zz' not set in API definitions. Scrollers defined: a",
    ],
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
      compatLevel: 3,
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
          responseFilter: null,
        },
      ],
      incrementalOutput: false,
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
    job(input).dataField = { path: 'a/b', delimiter: '/' };
    expect(parseExtractorConfig(input).config.jobs[0].dataField).toEqual({ path: 'a/b', delimiter: '/' });
  });
});

describe('parseExtractorConfig normalizes the paging methods with the reference defaults', () => {
  const paginationOf = (pagination: unknown) => {
    const input = valid();
    api(input).pagination = pagination;
    return parseExtractorConfig(input).api.pagination;
  };
  const noStops = { forceStop: null, nextPageFlag: null, limitStop: null };

  it('offset: limit as an integer, limit/offset params, first page params on, offset not from the job', () => {
    expect(paginationOf({ method: 'offset', limit: '20' })).toEqual({
      method: 'offset',
      limit: 20,
      limitParam: 'limit',
      offsetParam: 'offset',
      firstPageParams: true,
      offsetFromJob: false,
      ...noStops,
    });
  });

  it('pagenum: no limit, page param from 1, first page params on', () => {
    expect(paginationOf({ method: 'pagenum', limitParam: '' })).toEqual({
      method: 'pagenum',
      limit: null,
      limitParam: 'limit',
      pageParam: 'page',
      firstPage: 1,
      firstPageParams: true,
      ...noStops,
    });
    expect(paginationOf({ method: 'pagenum', limit: 2, pageParam: 'set', firstPage: '0', firstPageParams: false })).toMatchObject({
      limit: 2,
      pageParam: 'set',
      firstPage: 0,
      firstPageParams: false,
    });
  });

  it('response.url: urlKey next_page, delimiter ".", no params; zendesk always uses "." and refuses a delimiter it would ignore', () => {
    expect(paginationOf({ method: 'response.url' })).toEqual({
      method: 'response.url',
      urlKey: 'next_page',
      delimiter: '.',
      includeParams: false,
      paramIsQuery: false,
      ...noStops,
    });
    expect(paginationOf({ method: 'zendesk.response.url', urlKey: 'links/next', includeParams: true })).toMatchObject({
      method: 'zendesk.response.url',
      urlKey: 'links/next',
      delimiter: '.',
      includeParams: true,
    });
    expect(() => paginationOf({ method: 'zendesk.response.url', delimiter: '/' })).toThrow(
      "parameters.api.pagination.delimiter: 'delimiter' is not a key this extractor knows in 'parameters.api.pagination', so it would be ignored",
    );
  });

  it('cursor: no reverse, increment 0', () => {
    expect(paginationOf({ method: 'cursor', idKey: 'fields.id', param: 'after' })).toEqual({
      method: 'cursor',
      idKey: 'fields.id',
      param: 'after',
      reverse: false,
      increment: 0,
      ...noStops,
    });
    expect(paginationOf({ method: 'cursor', idKey: 'id', param: 'p', reverse: true, increment: -1 })).toMatchObject({ reverse: true, increment: -1 });
  });

  it('multiple: named scrollers of any method, and stop conditions of its own', () => {
    const pagination = paginationOf({
      method: 'multiple',
      scrollers: { list: { method: 'offset', limit: 2 }, search: { method: 'pagenum' } },
      default: 'list',
    });
    expect(pagination).toMatchObject({
      method: 'multiple',
      default: 'list',
      scrollers: { list: { method: 'offset', limit: 2 }, search: { method: 'pagenum', limit: null } },
      ...noStops,
    });
    expect(paginationOf({ method: 'multiple', scrollers: { a: { method: 'pagenum' } }, forceStop: { pages: 3 }, limitStop: { count: 10 } })).toMatchObject({
      forceStop: { pages: 3, timeMs: null, volumeBytes: null },
      limitStop: { count: 10 },
      nextPageFlag: null,
    });
  });
});
