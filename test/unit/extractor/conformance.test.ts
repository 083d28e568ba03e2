/**
 * Conformance suite for spec/response-param.md: one table-driven case per rule, each with the configuration,
 * the fake API's answers, the exact ordered requests, and the records extracted.
 */
import { runExtraction } from '../../harness/run-extraction';
import { describeRequest, fakeFetch, makeConfig, type FakeResponses, type MakeConfigOptions } from './fake-api';

interface Case extends MakeConfigOptions {
  /** Behaviour sentence. */
  name: string;
  responses: FakeResponses;
  /** Exact ordered requests (see describeRequest). */
  requests: string[];
  /** Expected rows per table (exact, complete rows). */
  tables?: Record<string, Array<Record<string, string>>>;
  /** Expected columns per table. */
  columns?: Record<string, string[]>;
  /** Each must match some warning. */
  warnings?: RegExp[];
  /** Clock readings in ms, in order (the loop reads it at each job start and after each page). */
  clock?: number[];
}

const rp = (extra: Record<string, unknown> = {}) => ({ method: 'response.param', responseParam: 'next', queryParam: 'cursor', ...extra });
const ids = (...values: number[]) => values.map((id) => ({ id: String(id) }));

async function run(c: Case) {
  const readings = [...(c.clock ?? [])];
  const now = c.clock ? () => readings.shift() ?? Number.MAX_SAFE_INTEGER : () => 0;
  const result = await runExtraction(makeConfig(c), { fetchPage: fakeFetch(c.responses), now });
  return result;
}

async function check(c: Case) {
  const result = await run(c);
  expect(result.requests.map(describeRequest)).toEqual(c.requests);
  for (const [table, rows] of Object.entries(c.tables ?? {})) expect(result.tables[table]?.rows).toEqual(rows);
  for (const [table, columns] of Object.entries(c.columns ?? {})) expect(result.tables[table]?.columns).toEqual(columns);
  for (const warning of c.warnings ?? []) expect(result.warnings).toEqual(expect.arrayContaining([expect.stringMatching(warning)]));
}

describe('Configuration: methods, endpoints, query strings, default params', () => {
  const cases: Case[] = [
    {
      name: 'GET is the default method and the params go in the query string',
      jobs: [{ endpoint: 'items', params: { limit: 2, flag: true } }],
      responses: [{ items: [{ id: 1 }] }],
      requests: ['GET /v1/items?limit=2&flag=1'],
      tables: { items: ids(1) },
    },
    {
      name: 'the job method is case-insensitive and POST sends the params as a JSON body',
      jobs: [{ endpoint: 'search', method: 'post', params: { q: 'x' } }],
      responses: [[{ id: 1 }]],
      requests: ['POST /v1/search {"q":"x"}'],
    },
    {
      name: 'FORM sends the params urlencoded in a POST body',
      jobs: [{ endpoint: 'search', method: 'Form', params: { q: 'a b', n: 1 } }],
      responses: [[{ id: 1 }]],
      requests: ['POST /v1/search q=a+b&n=1'],
    },
    {
      name: 'a relative endpoint resolves against a baseUrl ending with / (RFC 3986)',
      jobs: [{ endpoint: 'users' }],
      responses: [[]],
      requests: ['GET /v1/users'],
    },
    {
      name: 'without a trailing / on baseUrl its last segment is replaced (RFC 3986)',
      baseUrl: 'http://api.test/v1',
      jobs: [{ endpoint: 'users' }],
      responses: [[]],
      requests: ['GET /users'],
    },
    {
      name: 'an endpoint starting with / replaces the base path',
      jobs: [{ endpoint: '/users' }],
      responses: [[]],
      requests: ['GET /users'],
    },
    {
      name: 'an absolute endpoint is used as is',
      jobs: [{ endpoint: 'http://other.test/x/items' }],
      responses: [[]],
      requests: ['GET http://other.test/x/items'],
    },
    {
      name: 'a query string written in the endpoint stays on every request, and a param of the same name replaces its value',
      pagination: rp(),
      jobs: [{ endpoint: 'items?type=a&limit=5', params: { limit: 10 } }],
      responses: [
        { items: [], next: 'c2' },
        { items: [], next: null },
      ],
      requests: ['GET /v1/items?type=a&limit=10', 'GET /v1/items?type=a&limit=5&cursor=c2'],
    },
    {
      name: 'the scroll value replaces a same-name param written in the endpoint instead of duplicating it',
      pagination: rp(),
      jobs: [{ endpoint: 'items?cursor=start' }],
      responses: [
        { items: [], next: 'c2' },
        { items: [], next: null },
      ],
      requests: ['GET /v1/items?cursor=start', 'GET /v1/items?cursor=c2'],
    },
    {
      name: 'api.http.defaultOptions.params are sent with every request, whatever includeParams says',
      pagination: rp(),
      http: { defaultOptions: { params: { api_key: 'k' } } },
      jobs: [{ endpoint: 'items', params: { limit: 2 } }],
      responses: [
        { items: [], next: 'c2' },
        { items: [], next: null },
      ],
      requests: ['GET /v1/items?api_key=k&limit=2', 'GET /v1/items?api_key=k&cursor=c2'],
    },
    {
      name: 'default params go into the JSON body of POST requests too',
      pagination: rp(),
      http: { defaultOptions: { params: { api_key: 'k' } } },
      jobs: [{ endpoint: 'search', method: 'POST', params: { q: 1 } }],
      responses: [
        { items: [], next: 'c2' },
        { items: [], next: null },
      ],
      requests: ['POST /v1/search {"api_key":"k","q":1}', 'POST /v1/search {"api_key":"k","cursor":"c2"}'],
    },
  ];
  it.each(cases)('$name', check);
});

describe('Requests: first request, value lookup, next request, value placement', () => {
  const cases: Case[] = [
    {
      name: 'the first request is the job endpoint, method and params, never scrollRequest',
      pagination: rp({ responseParam: 'scroll_id', queryParam: 'scroll_id', scrollRequest: { endpoint: 'scroll', method: 'GET' } }),
      jobs: [{ endpoint: 'search', method: 'POST', params: { q: 1 } }],
      responses: [
        { hits: [{ id: 1 }], scroll_id: 's1' },
        { hits: [{ id: 2 }], scroll_id: null },
      ],
      requests: ['POST /v1/search {"q":1}', 'GET /v1/scroll?scroll_id=s1'],
      tables: { search: ids(1, 2) },
    },
    {
      name: 'responseParam is a dot path into the whole body, not into dataField',
      pagination: rp({ responseParam: 'meta.next' }),
      jobs: [{ endpoint: 'items', dataField: 'data.items' }],
      responses: [
        { data: { items: [{ id: 1 }] }, meta: { next: 'p2' } },
        { data: { items: [{ id: 2 }] }, meta: { next: '' } },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=p2'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'numeric path segments index arrays (links.0.cursor)',
      pagination: rp({ responseParam: 'links.0.cursor' }),
      jobs: [{ endpoint: 'items', dataField: 'results' }],
      responses: [
        { results: [{ id: 1 }], links: [{ rel: 'next', cursor: 'abc' }] },
        { results: [{ id: 2 }], links: [] },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=abc'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'a missing path segment reads as absent, which ends pagination',
      pagination: rp({ responseParam: 'meta.paging.next' }),
      jobs: [{ endpoint: 'items' }],
      responses: [{ items: [{ id: 1 }], meta: {} }],
      requests: ['GET /v1/items'],
      warnings: [/meta\.paging\.next/],
    },
    ...[null, '', false, 0, '0', []].map((value): Case => ({
      name: `the value ${JSON.stringify(value)} is empty and ends pagination`,
      pagination: rp(),
      jobs: [{ endpoint: 'items', dataField: 'items' }],
      responses: [{ items: [{ id: 1 }], next: value }],
      requests: ['GET /v1/items'],
      tables: { items: ids(1) },
    })),
    {
      name: 'an empty object {} is not empty, so pagination continues with it',
      pagination: rp(),
      jobs: [{ endpoint: 'items', method: 'POST', dataField: 'items' }],
      responses: [
        { items: [{ id: 1 }], next: {} },
        { items: [{ id: 2 }], next: null },
      ],
      requests: ['POST /v1/items []', 'POST /v1/items {"cursor":{}}'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'without includeParams the job params are dropped from scroll requests',
      pagination: rp(),
      jobs: [{ endpoint: 'items', params: { limit: 2, sort: 'id' } }],
      responses: [
        { items: [], next: 'c2' },
        { items: [], next: null },
      ],
      requests: ['GET /v1/items?limit=2&sort=id', 'GET /v1/items?cursor=c2'],
    },
    {
      name: 'with includeParams the job params stay and queryParam overrides a param of the same name',
      pagination: rp({ includeParams: true }),
      jobs: [{ endpoint: 'items', params: { limit: 2, cursor: 'initial' } }],
      responses: [
        { items: [], next: 'c2' },
        { items: [], next: null },
      ],
      requests: ['GET /v1/items?limit=2&cursor=initial', 'GET /v1/items?limit=2&cursor=c2'],
    },
    {
      name: 'scrollRequest inherits the keys it leaves out (method) and its params merge over the remaining params',
      pagination: rp({
        responseParam: 'scroll_id',
        queryParam: 'scroll_id',
        includeParams: true,
        scrollRequest: { endpoint: 'search/scroll', params: { keep: '1m' } },
      }),
      jobs: [{ endpoint: 'search', method: 'POST', params: { q: 'x', size: 2 } }],
      responses: [
        { hits: [{ id: 1 }], scroll_id: 's1' },
        { hits: [], scroll_id: null },
      ],
      requests: ['POST /v1/search {"q":"x","size":2}', 'POST /v1/search/scroll {"q":"x","size":2,"keep":"1m","scroll_id":"s1"}'],
    },
    {
      name: 'scrollRequest params of the queryParam name are overridden by the scroll value',
      pagination: rp({
        responseParam: 'scroll_id',
        queryParam: 'scroll_id',
        scrollRequest: { endpoint: 'scroll', method: 'GET', params: { scroll_id: 'placeholder', keep: '1m' } },
      }),
      jobs: [{ endpoint: 'search', method: 'POST', params: { q: 'x' } }],
      responses: [
        { hits: [], scroll_id: 's1' },
        { hits: [], scroll_id: 's2' },
        { hits: [], scroll_id: null },
      ],
      requests: ['POST /v1/search {"q":"x"}', 'GET /v1/scroll?scroll_id=s1&keep=1m', 'GET /v1/scroll?scroll_id=s2&keep=1m'],
    },
    {
      name: 'the value goes in the form body when the scroll request method is FORM',
      pagination: rp({ responseParam: 'scroll_id', queryParam: 'scroll_id', scrollRequest: { endpoint: 'scroll', method: 'form' } }),
      jobs: [{ endpoint: 'search', method: 'POST' }],
      responses: [
        { hits: [], scroll_id: 's 1' },
        { hits: [], scroll_id: null },
      ],
      requests: ['POST /v1/search []', 'POST /v1/scroll scroll_id=s+1'],
    },
    {
      name: 'the value is sent verbatim, never followed as a URL, even when it is one',
      pagination: rp({ responseParam: 'links.next', queryParam: 'next' }),
      jobs: [{ endpoint: 'items', dataField: 'items' }],
      responses: [
        { items: [], links: { next: 'http://api.test/v1/items?page=2' } },
        { items: [], links: {} },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?next=http%3A%2F%2Fapi.test%2Fv1%2Fitems%3Fpage%3D2'],
    },
    {
      name: 'a numeric value keeps its JSON type in a POST body',
      pagination: rp({ responseParam: 'next_page', queryParam: 'page' }),
      jobs: [{ endpoint: 'items', method: 'POST', dataField: 'items' }],
      responses: [
        { items: [], next_page: 2 },
        { items: [], next_page: null },
      ],
      requests: ['POST /v1/items []', 'POST /v1/items {"page":2}'],
    },
  ];
  it.each(cases)('$name', check);
});

describe('Records: dataField and auto-detection', () => {
  const cases: Case[] = [
    {
      name: 'dataField given as {path, delimiter} uses that delimiter',
      jobs: [{ endpoint: 'items', dataField: { path: 'data/items', delimiter: '/' } }],
      responses: [{ data: { items: [{ id: 1 }] }, other: [] }],
      requests: ['GET /v1/items'],
      tables: { items: ids(1) },
    },
    {
      name: 'dataField "." takes the whole response as one record',
      jobs: [{ endpoint: 'me', dataField: '.' }],
      responses: [{ id: 1, name: 'a' }],
      requests: ['GET /v1/me'],
      tables: { me: [{ id: '1', name: 'a' }] },
    },
    {
      name: 'a single object at dataField is one record',
      jobs: [{ endpoint: 'me', dataField: 'user' }],
      responses: [{ user: { id: 1 } }],
      requests: ['GET /v1/me'],
      tables: { me: ids(1) },
    },
    {
      name: 'without dataField a top-level array is used whole',
      jobs: [{ endpoint: 'items' }],
      responses: [[{ id: 1 }, { id: 2 }]],
      requests: ['GET /v1/items'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'without dataField the single array at the root of the object is used',
      jobs: [{ endpoint: 'items' }],
      responses: [{ total: 2, items: [{ id: 1 }, { id: 2 }], meta: { page: 1 } }],
      requests: ['GET /v1/items'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'without dataField and without a root array there are no records and a warning',
      jobs: [{ endpoint: 'items' }],
      responses: [{ total: 0 }],
      requests: ['GET /v1/items'],
      warnings: [/No data array found/],
    },
    {
      name: 'scrollRequest never changes dataField or dataType',
      pagination: rp({ responseParam: 'scroll_id', queryParam: 'scroll_id', scrollRequest: { endpoint: 'scroll', method: 'GET' } }),
      jobs: [{ endpoint: 'search', method: 'POST', dataField: 'result.hits', dataType: 'found' }],
      responses: [
        { result: { hits: [{ id: 1 }] }, scroll_id: 's1', other: [] },
        { result: { hits: [{ id: 2 }] }, scroll_id: null, other: [] },
      ],
      requests: ['POST /v1/search []', 'GET /v1/scroll?scroll_id=s1'],
      tables: { found: ids(1, 2) },
    },
  ];
  it.each(cases)('$name', check);

  it('two or more root arrays without dataField is an error naming them', async () => {
    const c: Case = { name: '', jobs: [{ endpoint: 'items' }], responses: [{ a: [], b: [{ id: 1 }] }], requests: [] };
    await expect(run(c)).rejects.toMatchObject({
      code: 'SAPI_EXTRACT_DATA_INVALID',
      message: expect.stringContaining('arrays in response root: a, b'),
    });
  });
});

describe('Stop conditions', () => {
  const counting =
    (perPage = 1) =>
    (_r: unknown, i: number) => ({
      items: Array.from({ length: perPage }, (_, j) => ({ id: i * perPage + j + 1 })),
      next: String(i + 2),
    });
  const body = { items: [{ id: 1 }], next: '2' };
  const bodyBytes = JSON.stringify(body).length;
  const cases: Case[] = [
    {
      name: 'a misspelled responseParam is not an error: one page, then stop, with a warning naming the path',
      pagination: rp({ responseParam: 'nxt' }),
      jobs: [{ endpoint: 'items' }],
      responses: [{ items: [{ id: 1 }], next: '2' }],
      requests: ['GET /v1/items'],
      tables: { items: ids(1) },
      warnings: [/responseParam 'nxt' was not found/],
    },
    {
      name: 'a response identical to the previous one stops pagination and is not extracted',
      pagination: rp(),
      jobs: [{ endpoint: 'items' }],
      responses: [
        { items: [{ id: 1 }], next: 'a' },
        { items: [{ id: 1 }], next: 'a' },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=a'],
      tables: { items: ids(1) },
    },
    {
      name: 'only the previous response is compared (A, B, A is extracted; A again stops)',
      pagination: rp(),
      jobs: [{ endpoint: 'items' }],
      responses: [
        { items: [{ id: 1 }], next: 'b' },
        { items: [{ id: 2 }], next: 'a' },
        { items: [{ id: 1 }], next: 'b' },
        { items: [{ id: 1 }], next: 'b' },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=b', 'GET /v1/items?cursor=a', 'GET /v1/items?cursor=b'],
      tables: { items: ids(1, 2, 1) },
    },
    {
      name: 'an empty data page does not stop pagination while the cursor is non-empty',
      pagination: rp(),
      jobs: [{ endpoint: 'items' }],
      responses: [
        { items: [], next: '2' },
        { items: [{ id: 2 }], next: null },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2'],
      tables: { items: ids(2) },
    },
    {
      name: 'forceStop.pages makes exactly N requests',
      pagination: rp({ forceStop: { pages: 2 } }),
      jobs: [{ endpoint: 'items' }],
      responses: counting(),
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'forceStop.pages 0 means no limit',
      pagination: rp({ forceStop: { pages: 0 } }),
      jobs: [{ endpoint: 'items' }],
      responses: [
        { items: [], next: '2' },
        { items: [], next: '3' },
        { items: [], next: null },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2', 'GET /v1/items?cursor=3'],
    },
    {
      name: 'forceStop.time in seconds stops once the time budget has passed',
      pagination: rp({ forceStop: { time: 10 } }),
      jobs: [{ endpoint: 'items' }],
      responses: counting(),
      clock: [0, 4_000, 8_000, 12_000],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2', 'GET /v1/items?cursor=3'],
      tables: { items: ids(1, 2, 3) },
    },
    {
      name: 'forceStop.time accepts a duration string such as "1 hour"',
      pagination: rp({ forceStop: { time: '1 hour' } }),
      jobs: [{ endpoint: 'items' }],
      responses: counting(),
      clock: [0, 1_800_000, 3_600_000],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2'],
    },
    {
      name: 'forceStop.volume counts response bytes and keeps the page that crosses the limit',
      pagination: rp({ forceStop: { volume: bodyBytes + 5 } }),
      jobs: [{ endpoint: 'items' }],
      responses: [body, { ...body, items: [{ id: 2 }] }, { ...body, items: [{ id: 3 }] }],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'nextPageFlag stops when the flag truthiness equals stopOn',
      pagination: rp({ nextPageFlag: { field: 'has_more', stopOn: false } }),
      jobs: [{ endpoint: 'items' }],
      responses: [
        { items: [{ id: 1 }], has_more: true, next: '2' },
        { items: [{ id: 2 }], has_more: false, next: '3' },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'an absent nextPageFlag field takes ifNotSet, which defaults to stopOn',
      pagination: rp({ nextPageFlag: { field: 'has_more', stopOn: false } }),
      jobs: [{ endpoint: 'items' }],
      responses: [{ items: [{ id: 1 }], next: '2' }],
      requests: ['GET /v1/items'],
    },
    {
      name: 'ifNotSet decides while the flag is absent, and a null flag counts as absent',
      pagination: rp({ nextPageFlag: { field: 'done', stopOn: true, ifNotSet: false } }),
      jobs: [{ endpoint: 'items' }],
      responses: [
        { items: [], next: '2' },
        { items: [], done: null, next: '3' },
        { items: [], done: 'yes', next: '4' },
      ],
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2', 'GET /v1/items?cursor=3'],
    },
    {
      name: 'limitStop.count stops once the extracted records reach the count (the last page is kept whole)',
      pagination: rp({ limitStop: { count: 3 } }),
      jobs: [{ endpoint: 'items' }],
      responses: counting(2),
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2'],
      tables: { items: ids(1, 2, 3, 4) },
    },
    {
      name: 'limitStop.field reads the limit from the response',
      pagination: rp({ limitStop: { field: 'meta.total' } }),
      jobs: [{ endpoint: 'items' }],
      responses: (_r, i) => ({ items: [{ id: i * 2 + 1 }, { id: i * 2 + 2 }], meta: { total: 3 }, next: String(i + 2) }),
      requests: ['GET /v1/items', 'GET /v1/items?cursor=2'],
    },
    {
      name: 'a limitStop.field that does not resolve stops after page 1',
      pagination: rp({ limitStop: { field: 'meta.nope' } }),
      jobs: [{ endpoint: 'items' }],
      responses: counting(2),
      requests: ['GET /v1/items'],
    },
    {
      name: 'every top-level job starts fresh: counters and the previous-response memory do not carry over',
      pagination: rp({ forceStop: { pages: 2 } }),
      jobs: [{ endpoint: 'a' }, { endpoint: 'b' }],
      responses: [
        { items: [{ id: 1 }], next: '2' },
        { items: [{ id: 2 }], next: '3' },
        { items: [{ id: 2 }], next: '3' },
        { items: [{ id: 4 }], next: null },
      ],
      requests: ['GET /v1/a', 'GET /v1/a?cursor=2', 'GET /v1/b', 'GET /v1/b?cursor=3'],
      tables: { a: ids(1, 2), b: ids(2, 4) },
    },
  ];
  it.each(cases)('$name', check);
});

describe('Child jobs', () => {
  const api = (routes: Record<string, unknown>) => (request: { url: string }) => {
    const url = new URL(request.url);
    const key = `${url.pathname}${url.search}`;
    if (!(key in routes)) throw new Error(`fake API: no route for ${key}`);
    return routes[key];
  };
  const cases: Case[] = [
    {
      name: 'children run for every row of a parent page, each fully paginated, before the parent next page',
      pagination: rp({ queryParam: 'page' }),
      jobs: [
        {
          endpoint: 'users',
          children: [{ endpoint: 'users/{user-id}/orders', dataField: 'orders', placeholders: { 'user-id': 'id' } }],
        },
      ],
      responses: api({
        '/v1/users': { users: [{ id: 1 }, { id: 2 }], next: '2' },
        '/v1/users?page=2': { users: [{ id: 3 }], next: null },
        '/v1/users/1/orders': { orders: [{ oid: 'a' }], next: '2' },
        '/v1/users/1/orders?page=2': { orders: [{ oid: 'b' }], next: null },
        '/v1/users/2/orders': { orders: [], next: null },
        '/v1/users/3/orders': { orders: [{ oid: 'c' }] },
      }),
      requests: [
        'GET /v1/users',
        'GET /v1/users/1/orders',
        'GET /v1/users/1/orders?page=2',
        'GET /v1/users/2/orders',
        'GET /v1/users?page=2',
        'GET /v1/users/3/orders',
      ],
      tables: {
        users: ids(1, 2, 3),
        'users_user-id_orders': [
          { oid: 'a', parent_id: '1' },
          { oid: 'b', parent_id: '1' },
          { oid: 'c', parent_id: '3' },
        ],
      },
    },
    {
      name: 'each child run has its own previous-response memory, so identical answers for two rows are both kept',
      jobs: [{ endpoint: 'users', children: [{ endpoint: 'users/{uid}/orders', dataType: 'orders', placeholders: { uid: 'id' } }] }],
      responses: api({
        '/v1/users': [{ id: 1 }, { id: 2 }],
        '/v1/users/1/orders': [{ oid: 'x' }],
        '/v1/users/2/orders': [{ oid: 'x' }],
      }),
      requests: ['GET /v1/users', 'GET /v1/users/1/orders', 'GET /v1/users/2/orders'],
      tables: {
        orders: [
          { oid: 'x', parent_id: '1' },
          { oid: 'x', parent_id: '2' },
        ],
      },
    },
    {
      name: 'grandchildren inherit placeholders and parent columns, and "2:name" reads the grandparent row',
      jobs: [
        {
          endpoint: 'users',
          children: [
            {
              endpoint: 'users/{uid}/orders',
              dataType: 'orders',
              placeholders: { uid: 'id' },
              children: [
                {
                  endpoint: 'users/{uid}/orders/{oid}/items?owner={2:owner}',
                  dataType: 'items',
                  placeholders: { oid: 'order_id', '2:owner': 'login' },
                },
              ],
            },
          ],
        },
      ],
      responses: api({
        '/v1/users': [{ id: 7, login: 'ann' }],
        '/v1/users/7/orders': [{ order_id: 70 }],
        '/v1/users/7/orders/70/items?owner=ann': [{ sku: 's1' }],
      }),
      requests: ['GET /v1/users', 'GET /v1/users/7/orders', 'GET /v1/users/7/orders/70/items?owner=ann'],
      tables: { items: [{ sku: 's1', parent_id: '7', parent_order_id: '70', parent_login: 'ann' }] },
    },
    {
      name: "the children's time counts against the parent's forceStop.time (the parent decides after its children ran)",
      pagination: rp({ forceStop: { time: 10 } }),
      jobs: [{ endpoint: 'users', children: [{ endpoint: 'users/{uid}', dataField: '.', placeholders: { uid: 'id' } }] }],
      responses: api({ '/v1/users': { users: [{ id: 1 }], next: '2' }, '/v1/users/1': { id: 1 } }),
      clock: [0, 1_000, 2_000, 12_000],
      requests: ['GET /v1/users', 'GET /v1/users/1'],
    },
    {
      name: 'a nested placeholder field gives a parent column with _ (parent_user_id)',
      jobs: [{ endpoint: 'posts', children: [{ endpoint: 'users/{u}', dataType: 'authors', dataField: '.', placeholders: { u: 'user.id' } }] }],
      responses: api({ '/v1/posts': [{ id: 1, user: { id: 9 } }], '/v1/users/9': { name: 'z' } }),
      requests: ['GET /v1/posts', 'GET /v1/users/9'],
      tables: { authors: [{ name: 'z', parent_user_id: '9' }] },
    },
  ];
  it.each(cases)('$name', check);

  it('a parent row without the placeholder field is an error naming the placeholder', async () => {
    const c: Case = {
      name: '',
      jobs: [{ endpoint: 'users', children: [{ endpoint: 'users/{uid}', placeholders: { uid: 'id' } }] }],
      responses: [[{ name: 'no id' }]],
      requests: [],
    };
    await expect(run(c)).rejects.toMatchObject({
      code: 'SAPI_EXTRACT_PLACEHOLDER_MISSING',
      message: expect.stringContaining('No value found for uid in parent result'),
    });
  });
});

describe('Several scrollers (pagination.method "multiple")', () => {
  const scrollers = {
    cur: rp(),
    pg: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
  };
  const cases: Case[] = [
    {
      name: 'a job picks its scroller by name',
      pagination: { method: 'multiple', scrollers },
      jobs: [
        { endpoint: 'a', scroller: 'cur' },
        { endpoint: 'b', scroller: 'pg' },
      ],
      responses: [
        { items: [], next: 'x' },
        { items: [], next: null },
        { items: [], next_page: 2 },
        { items: [], next_page: null },
      ],
      requests: ['GET /v1/a', 'GET /v1/a?cursor=x', 'GET /v1/b', 'GET /v1/b?page=2'],
    },
    {
      name: 'a job without scroller uses the scroller named default',
      pagination: { method: 'multiple', scrollers: { default: rp() } },
      jobs: [{ endpoint: 'a' }],
      responses: [
        { items: [], next: 'x' },
        { items: [], next: null },
      ],
      requests: ['GET /v1/a', 'GET /v1/a?cursor=x'],
    },
    {
      name: 'a job without scroller and without a default scroller is not paginated',
      pagination: { method: 'multiple', scrollers },
      jobs: [{ endpoint: 'a' }],
      responses: [{ items: [], next: 'x' }],
      requests: ['GET /v1/a'],
    },
  ];
  it.each(cases)('$name', check);

  it('an unknown scroller name is an error naming the defined scrollers', () => {
    expect(() => makeConfig({ pagination: { method: 'multiple', scrollers }, jobs: [{ endpoint: 'a', scroller: 'nope' }] })).toThrow(
      "parameters.config.jobs[0].scroller: Scroller 'nope' not set in API definitions. Scrollers defined: cur, pg",
    );
  });
});

describe('Output tables', () => {
  const cases: Case[] = [
    {
      name: 'rows go to a table named by dataType, made safe',
      jobs: [{ endpoint: 'items', dataType: ' My Users!!/v2 ' }],
      responses: [[{ id: 1 }]],
      requests: ['GET /v1/items'],
      tables: { My_Users_v2: ids(1) },
    },
    {
      name: 'the table name defaults to the endpoint, made safe',
      jobs: [{ endpoint: 'v2/users.json?x=1' }],
      responses: [[{ id: 1 }]],
      requests: ['GET /v1/v2/users.json?x=1'],
      tables: { v2_users_json_x_1: ids(1) },
    },
    {
      name: 'rows of all pages and of jobs with the same dataType go to one table, columns in order of first appearance',
      pagination: rp(),
      jobs: [
        { endpoint: 'a', dataType: 'things' },
        { endpoint: 'b', dataType: 'things' },
      ],
      responses: [
        { items: [{ id: 1, a: 'x' }], next: '2' },
        { items: [{ id: 2, b: 'y' }], next: null },
        { items: [{ c: 'z', id: 3 }], next: null },
      ],
      requests: ['GET /v1/a', 'GET /v1/a?cursor=2', 'GET /v1/b'],
      columns: { things: ['id', 'a', 'b', 'c'] },
      tables: {
        things: [
          { id: '1', a: 'x', b: '', c: '' },
          { id: '2', a: '', b: 'y', c: '' },
          { id: '3', a: '', b: '', c: 'z' },
        ],
      },
    },
    {
      name: 'nested objects flatten to _-joined columns; true is "1", false and null are empty',
      jobs: [{ endpoint: 'users' }],
      responses: [[{ id: 1, address: { street: 'Main', geo: { lat: 1.5 } }, active: true, deleted: false, note: null, empty: {} }]],
      requests: ['GET /v1/users'],
      columns: { users: ['id', 'address_street', 'address_geo_lat', 'active', 'deleted', 'note'] },
      tables: { users: [{ id: '1', address_street: 'Main', address_geo_lat: '1.5', active: '1', deleted: '', note: '' }] },
    },
  ];
  it.each(cases)('$name', check);

  it('arrays inside a row go to child tables <table>_<property> linked by JSON_parentId, scalars in a data column', async () => {
    const result = await run({
      name: '',
      jobs: [{ endpoint: 'users' }],
      responses: [[{ id: 1, tags: ['a', 'b'], phones: [{ type: 'home', n: '1' }], none: [] }]],
      requests: [],
    });
    const [user] = result.tables.users.rows;
    expect(user.tags).toMatch(/^users_[0-9a-f]{32}$/);
    expect(user).toEqual({ id: '1', tags: user.tags, phones: user.tags, none: '' });
    expect(result.tables.users_tags.rows).toEqual([
      { data: 'a', JSON_parentId: user.tags },
      { data: 'b', JSON_parentId: user.tags },
    ]);
    expect(result.tables.users_phones).toEqual({
      columns: ['type', 'n', 'JSON_parentId'],
      rows: [{ type: 'home', n: '1', JSON_parentId: user.tags }],
    });
  });
});

describe('Pagination methods offset, pagenum, response.url, zendesk.response.url, cursor', () => {
  const page = (n: number, from = 1) => ({ items: Array.from({ length: n }, (_, i) => ({ id: from + i })) });
  const cases: Case[] = [
    {
      name: 'offset sends limit and offset on every request and stops on a page shorter than the limit',
      pagination: { method: 'offset', limit: 2 },
      jobs: [{ endpoint: 'items', params: { q: 'x' } }],
      responses: [page(2, 1), page(2, 3), page(1, 5)],
      requests: ['GET /v1/items?q=x&limit=2&offset=0', 'GET /v1/items?q=x&limit=2&offset=2', 'GET /v1/items?q=x&limit=2&offset=4'],
      tables: { items: ids(1, 2, 3, 4, 5) },
    },
    {
      name: 'offset: a job param named like limitParam sets the limit, offsetFromJob starts at the job offset',
      pagination: { method: 'offset', limit: 50, offsetFromJob: true },
      jobs: [{ endpoint: 'items', params: { offset: 10, limit: '3' } }],
      responses: [page(3, 11), page(0)],
      requests: ['GET /v1/items?offset=10&limit=3', 'GET /v1/items?offset=13&limit=3'],
      tables: { items: ids(11, 12, 13) },
    },
    {
      name: 'offset without offsetFromJob starts at 0 even when the job has an offset param',
      pagination: { method: 'offset', limit: 2 },
      jobs: [{ endpoint: 'items', params: { offset: 10 } }],
      responses: [page(1)],
      requests: ['GET /v1/items?offset=0&limit=2'],
    },
    {
      name: 'offset with firstPageParams false sends the first request as the job is, then offset = limit',
      pagination: { method: 'offset', limit: 2, firstPageParams: false },
      jobs: [{ endpoint: 'items' }],
      responses: [page(2), page(0)],
      requests: ['GET /v1/items', 'GET /v1/items?limit=2&offset=2'],
    },
    {
      name: 'offset puts its params into the JSON body of a POST job',
      pagination: { method: 'offset', limit: 1, limitParam: 'size', offsetParam: 'from' },
      jobs: [{ endpoint: 'search', method: 'POST', params: { q: 1 } }],
      responses: [page(1), page(0)],
      requests: ['POST /v1/search {"q":1,"size":1,"from":0}', 'POST /v1/search {"q":1,"size":1,"from":1}'],
    },
    {
      name: 'offset with limit 1 stops on an empty page (fewer records than the limit)',
      pagination: { method: 'offset', limit: 1 },
      jobs: [{ endpoint: 'items' }],
      responses: [page(1), { items: [] }],
      requests: ['GET /v1/items?limit=1&offset=0', 'GET /v1/items?limit=1&offset=1'],
      tables: { items: ids(1) },
    },
    {
      name: 'pagenum without a limit stops only on an empty page',
      pagination: { method: 'pagenum' },
      jobs: [{ endpoint: 'items' }],
      responses: [page(3), page(1, 4), page(0)],
      requests: ['GET /v1/items?page=1', 'GET /v1/items?page=2', 'GET /v1/items?page=3'],
      tables: { items: ids(1, 2, 3, 4) },
    },
    {
      name: 'pagenum with a limit sends it and stops on a page shorter than the limit; the job param overrides the limit',
      pagination: { method: 'pagenum', limit: 100, limitParam: 'per_page' },
      jobs: [{ endpoint: 'items', params: { per_page: 2 } }],
      responses: [page(2), page(1, 3)],
      requests: ['GET /v1/items?per_page=2&page=1', 'GET /v1/items?per_page=2&page=2'],
      tables: { items: ids(1, 2, 3) },
    },
    {
      name: 'pagenum firstPage 0 with firstPageParams false: the job as is first, then page 1',
      pagination: { method: 'pagenum', firstPage: 0, firstPageParams: false },
      jobs: [{ endpoint: 'items' }],
      responses: [page(1), page(0)],
      requests: ['GET /v1/items', 'GET /v1/items?page=1'],
    },
    {
      name: 'response.url follows a relative next URL against baseUrl, without the job params',
      pagination: { method: 'response.url', urlKey: 'links.next' },
      jobs: [{ endpoint: 'items', params: { q: 'x' } }],
      responses: [
        { ...page(1), links: { next: 'items?page=2' } },
        { ...page(1, 2), links: { next: '/v2/items?page=3' } },
        { ...page(1, 3), links: {} },
      ],
      requests: ['GET /v1/items?q=x', 'GET /v1/items?page=2', 'GET /v2/items?page=3'],
      tables: { items: ids(1, 2, 3) },
    },
    {
      name: 'response.url follows an absolute URL on another host, with the job params when includeParams and the default params always',
      pagination: { method: 'response.url', includeParams: true },
      http: { defaultOptions: { params: { key: 'k' } } },
      jobs: [{ endpoint: 'items', params: { q: 'x' } }],
      responses: [
        { ...page(1), next_page: 'http://other.test/more?cursor=a%20b' },
        { ...page(0), next_page: null },
      ],
      requests: ['GET /v1/items?key=k&q=x', 'GET http://other.test/more?cursor=a+b&key=k&q=x'],
    },
    {
      name: 'response.url with paramIsQuery sets the query string params over the job params on the job endpoint',
      pagination: { method: 'response.url', urlKey: 'next', paramIsQuery: true, includeParams: true },
      jobs: [{ endpoint: 'items', params: { page: 'start', q: 'x' } }],
      responses: [
        { ...page(1), next: '?page=2&extra=a+b' },
        { ...page(1, 2), next: '' },
      ],
      requests: ['GET /v1/items?page=start&q=x', 'GET /v1/items?page=2&q=x&extra=a+b'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'response.url reads urlKey with a custom delimiter',
      pagination: { method: 'response.url', urlKey: 'links/next.href', delimiter: '/' },
      jobs: [{ endpoint: 'items' }],
      responses: [{ ...page(1), links: { 'next.href': 'items?p=2' } }, page(0)],
      requests: ['GET /v1/items', 'GET /v1/items?p=2'],
    },
    {
      name: 'zendesk.response.url stops when the next start_time is less than 6 minutes before now',
      pagination: { method: 'zendesk.response.url' },
      jobs: [{ endpoint: 'tickets' }],
      clock: [0, 1_000_000_000, 1_000_000_000],
      responses: [
        { ...page(1), next_page: 'http://api.test/v1/tickets?start_time=999000' },
        { ...page(1, 2), next_page: 'http://api.test/v1/tickets?start_time=999700' },
      ],
      requests: ['GET /v1/tickets', 'GET /v1/tickets?start_time=999000'],
      tables: { tickets: ids(1, 2) },
    },
    {
      name: 'cursor sends the highest id seen so far (+ increment) with the job params and stops on an empty page',
      pagination: { method: 'cursor', idKey: 'meta.id', param: 'since', increment: 1 },
      jobs: [{ endpoint: 'items', params: { since: 0, q: 'x' } }],
      responses: [[{ meta: { id: 5 } }, { meta: { id: '7' } }], [{ meta: { id: 3 } }], []],
      requests: ['GET /v1/items?since=0&q=x', 'GET /v1/items?since=8&q=x', 'GET /v1/items?since=8&q=x'],
    },
    {
      name: 'cursor with reverse sends the lowest id seen so far',
      pagination: { method: 'cursor', idKey: 'id', param: 'before', reverse: true },
      jobs: [{ endpoint: 'items' }],
      responses: [[{ id: 10 }, { id: 9 }], [{ id: 8 }], []],
      requests: ['GET /v1/items', 'GET /v1/items?before=9', 'GET /v1/items?before=8'],
    },
    {
      name: 'stop conditions apply to every method: limitStop.count with pagenum',
      pagination: { method: 'pagenum', limitStop: { count: 3 } },
      jobs: [{ endpoint: 'items' }],
      responses: [page(2), page(2, 3)],
      requests: ['GET /v1/items?page=1', 'GET /v1/items?page=2'],
      tables: { items: ids(1, 2, 3, 4) },
    },
    {
      name: 'forceStop.volume counts the size of the compact JSON of each response, not its raw bytes',
      pagination: { method: 'offset', limit: 1, forceStop: { volume: 30 } },
      jobs: [{ endpoint: 'items' }],
      // compact JSON: {"items":[{"id":1}]} = 20 bytes per page; the raw bodies are padded with whitespace
      responses: [{ raw: `{"items":   [{"id": 1}]}${' '.repeat(100)}` }, { raw: `{"items":[{"id":2}]}${' '.repeat(100)}` }, page(1, 3)],
      requests: ['GET /v1/items?limit=1&offset=0', 'GET /v1/items?limit=1&offset=1'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'stop conditions next to method multiple apply on top of the picked scroller (forceStop.pages of multiple)',
      pagination: { method: 'multiple', scrollers: { pages: { method: 'pagenum', limitStop: { count: 100 } } }, default: 'pages', forceStop: { pages: 2 } },
      jobs: [{ endpoint: 'items' }],
      responses: [page(2), page(2, 3), page(2, 5)],
      requests: ['GET /v1/items?page=1', 'GET /v1/items?page=2'],
      tables: { items: ids(1, 2, 3, 4) },
    },
    {
      name: 'stop conditions next to method multiple: nextPageFlag and limitStop.field read from the response',
      pagination: {
        method: 'multiple',
        scrollers: { a: { method: 'offset', limit: 1, nextPageFlag: { field: 'more', stopOn: false, ifNotSet: true } } },
        nextPageFlag: { field: 'last', stopOn: true, ifNotSet: false },
      },
      jobs: [{ endpoint: 'items', scroller: 'a' }],
      responses: [{ ...page(1), more: true }, { ...page(1, 2), last: true, more: true }, page(1, 3)],
      requests: ['GET /v1/items?limit=1&offset=0', 'GET /v1/items?limit=1&offset=1'],
      tables: { items: ids(1, 2) },
    },
    {
      name: 'a child job runs its own pagination of the same method, from the start',
      pagination: { method: 'offset', limit: 2, firstPageParams: false },
      jobs: [{ endpoint: 'users', children: [{ endpoint: 'users/{id}/orders', dataType: 'orders', placeholders: { id: 'id' } }] }],
      responses: [page(2), [{ o: 1 }, { o: 2 }], [], [{ o: 3 }], page(1, 3), []],
      requests: [
        'GET /v1/users',
        'GET /v1/users/1/orders',
        'GET /v1/users/1/orders?limit=2&offset=2',
        'GET /v1/users/2/orders',
        'GET /v1/users?limit=2&offset=2',
        'GET /v1/users/3/orders',
      ],
    },
  ];
  it.each(cases)('$name', check);

  it('a cursor id that is not numeric fails the extraction with the value and the idKey', async () => {
    await expect(
      run({
        name: '',
        pagination: { method: 'cursor', idKey: 'id', param: 'after' },
        jobs: [{ endpoint: 'items' }],
        responses: [[{ id: 'abc' }]],
        requests: [],
      }),
    ).rejects.toThrow(`Cursor value '"abc"' is not numeric (idKey 'id').`);
  });

  it('a next URL that is an object fails the extraction naming urlKey', async () => {
    await expect(
      run({
        name: '',
        pagination: { method: 'response.url', urlKey: 'next' },
        jobs: [{ endpoint: 'items' }],
        responses: [{ items: [], next: { href: 'x' } }],
        requests: [],
      }),
    ).rejects.toThrow(/next page URL at urlKey 'next' must be a string, got object/);
  });
});
