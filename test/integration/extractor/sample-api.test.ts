/**
 * The plain extraction loop with the real undici fetcher against the real sample API: every pagination style and
 * every misbehaviour, asserting the records extracted and the requests the API saw.
 */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createPageFetcher, type FetchPageOptions } from '../../../src/extractor/http/fetch-page';
import { runExtraction } from '../../harness/run-extraction';
import { createSampleApi, largeRecordCount, makeUsers, ordersOf, type SampleApi } from '../../../src/sample-api';

let api: SampleApi;
afterEach(async () => {
  await api?.close();
});

const fast: FetchPageOptions = { baseDelayMs: 5, maxDelayMs: 20 };

function extract(pagination: unknown, jobs: unknown[], fetchOptions: FetchPageOptions = fast) {
  const config = parseExtractorConfig({
    parameters: { api: { baseUrl: api.url, pagination }, config: { outputBucket: 'sample', jobs } },
  });
  return runExtraction(config, { fetchPage: createPageFetcher(fetchOptions) });
}

const seen = () => api.requests.map((r) => `${r.method} ${r.url}${r.body !== undefined ? ` ${JSON.stringify(r.body)}` : ''}`);
const idsOf = (rows: Array<Record<string, string>>) => rows.map((r) => Number(r.id));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('extracting every pagination style of the sample API', () => {
  it('follows a cursor in meta.next_cursor and flattens nested records, booleans, nulls and arrays', async () => {
    api = await createSampleApi({ records: 25, pageSize: 10 });
    const result = await extract({ method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' }, [
      { endpoint: 'cursor/items', dataType: 'users' },
    ]);

    expect(api.requests.map((r) => r.path)).toEqual(['/cursor/items', '/cursor/items', '/cursor/items']);
    expect(api.requests[0].query).toEqual({});
    expect(api.requests[1].query.cursor).toEqual(expect.any(String));
    const users = result.tables.users;
    expect(idsOf(users.rows)).toEqual(range(1, 25));
    expect(users.columns).toEqual([
      'id',
      'name',
      'email',
      'active',
      'score',
      'address_street',
      'address_city',
      'address_geo_lat',
      'address_geo_lng',
      'tags',
      'contacts',
    ]);
    const fifth = users.rows[4];
    expect(fifth).toMatchObject({ id: '5', active: '1', score: '', address_city: 'Ostrava', address_geo_lat: '50.005', contacts: '' });
    const fourth = users.rows[3];
    expect(fourth.active).toBe('');
    expect(result.tables.users_contacts.rows).toContainEqual({ type: 'phone', value: '+420 600 000 004', JSON_parentId: fourth.contacts });
    const expectedTags = makeUsers(25).flatMap((u) => u.tags);
    expect(result.tables.users_tags.rows.map((r) => r.data)).toEqual(expectedTags);
  });

  it('pages by number with includeParams keeping per_page on every request', async () => {
    api = await createSampleApi({ records: 25 });
    const result = await extract({ method: 'response.param', responseParam: 'next_page', queryParam: 'page', includeParams: true }, [
      { endpoint: 'pages/items', params: { per_page: 7 }, dataField: 'data' },
    ]);
    expect(seen()).toEqual([
      'GET /pages/items?per_page=7',
      'GET /pages/items?per_page=7&page=2',
      'GET /pages/items?per_page=7&page=3',
      'GET /pages/items?per_page=7&page=4',
    ]);
    expect(idsOf(result.tables.pages_items.rows)).toEqual(range(1, 25));
  });

  it('reads the next cursor from links.0.cursor', async () => {
    api = await createSampleApi({ records: 12, pageSize: 5 });
    const result = await extract({ method: 'response.param', responseParam: 'links.0.cursor', queryParam: 'cursor' }, [
      { endpoint: 'links/items', dataField: 'results', dataType: 'linked' },
    ]);
    expect(api.requests).toHaveLength(3);
    expect(idsOf(result.tables.linked.rows)).toEqual(range(1, 12));
  });

  it('sends an absolute next URL back as a value and never follows it', async () => {
    api = await createSampleApi({ records: 12, pageSize: 5 });
    const result = await extract({ method: 'response.param', responseParam: 'links.next', queryParam: 'next' }, [{ endpoint: 'links/next-url' }]);
    expect(api.requests.map((r) => r.path)).toEqual(['/links/next-url', '/links/next-url', '/links/next-url']);
    expect(api.requests[1].query).toEqual({ next: `${api.url}links/next-url?after=5` });
    expect(idsOf(result.tables['links_next-url'].rows)).toEqual(range(1, 12));
  });

  it('starts with a POST search and scrolls with GET requests carrying scroll_id', async () => {
    api = await createSampleApi({ records: 25, pageSize: 10 });
    const result = await extract(
      {
        method: 'response.param',
        responseParam: 'scroll_id',
        queryParam: 'scroll_id',
        scrollRequest: { endpoint: 'search/scroll', method: 'GET' },
      },
      [{ endpoint: 'search', method: 'POST', params: { query: 'User 1', size: 4 }, dataField: 'hits', dataType: 'found' }],
    );
    expect(api.requests[0]).toMatchObject({ method: 'POST', path: '/search', body: { query: 'User 1', size: 4 } });
    expect(api.requests.slice(1).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /search/scroll', 'GET /search/scroll']);
    expect(idsOf(result.tables.found.rows)).toEqual([1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  });

  it('scrolls with FORM requests when scrollRequest says so', async () => {
    api = await createSampleApi({ records: 8, pageSize: 3 });
    const result = await extract(
      { method: 'response.param', responseParam: 'scroll_id', queryParam: 'scroll_id', scrollRequest: { endpoint: 'search/scroll', method: 'FORM' } },
      [{ endpoint: 'search', method: 'POST', dataField: 'hits' }],
    );
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /search', 'POST /search/scroll', 'POST /search/scroll']);
    expect(api.requests[1].body).toEqual({ scroll_id: expect.any(String) });
    expect(idsOf(result.tables.search.rows)).toEqual(range(1, 8));
  });

  it('runs the orders of every user of a page, fully paginated, before the next page of users', async () => {
    api = await createSampleApi({ records: 6, pageSize: 4, ordersPageSize: 2 });
    const result = await extract({ method: 'response.param', responseParam: 'next_page', queryParam: 'page' }, [
      {
        endpoint: 'users',
        children: [{ endpoint: 'users/{user-id}/orders', dataField: 'orders', dataType: 'orders', placeholders: { 'user-id': 'id' } }],
      },
    ]);
    expect(seen()).toEqual([
      'GET /users',
      'GET /users/1/orders',
      'GET /users/2/orders',
      'GET /users/3/orders',
      'GET /users/3/orders?page=2',
      'GET /users/4/orders',
      'GET /users?page=2',
      'GET /users/5/orders',
      'GET /users/6/orders',
    ]);
    const expected = range(1, 6).flatMap((id) => ordersOf(id).map((o) => ({ orderId: o.orderId, parent_id: String(id) })));
    expect(result.tables.orders.rows.map((r) => ({ orderId: r.orderId, parent_id: r.parent_id }))).toEqual(expected);
    expect(result.tables.orders.columns).toEqual(['orderId', 'userId', 'total', 'paid', 'parent_id']);
  });

  it('walks a long run of small pages generated on the fly', async () => {
    api = await createSampleApi({ largePages: 300, logRequests: false });
    const config = parseExtractorConfig({
      parameters: {
        api: { baseUrl: api.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
        config: { jobs: [{ endpoint: 'large/items' }] },
      },
    });
    let records = 0;
    const result = await runExtraction(config, {
      fetchPage: createPageFetcher(fast),
      keepRows: false,
      onPage: (tables) => {
        records += tables[0]?.rows.length ?? 0;
      },
    });
    expect(result.pages).toBe(300);
    expect(records).toBe(largeRecordCount(300));
    expect(result.runs[0].stopReason).toBe('empty-cursor');
  });
});

describe('the fetcher and the loop when the sample API misbehaves', () => {
  const cursor = { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' };
  const cursorJob = [{ endpoint: 'cursor/items', dataType: 'users' }];

  it('retries 5xx answers and still extracts every record', async () => {
    api = await createSampleApi({ records: 25 });
    api.misbehave({ kind: 'server-error', times: 2, after: 1, status: 502 });
    const result = await extract(cursor, cursorJob);
    expect(api.requests.map((r) => r.misbehaved ?? 'ok')).toEqual(['ok', 'server-error', 'server-error', 'ok', 'ok']);
    expect(idsOf(result.tables.users.rows)).toEqual(range(1, 25));
  });

  it('gives up on a persistent 5xx with a typed, retryable error naming the URL and status', async () => {
    api = await createSampleApi();
    api.misbehave({ kind: 'server-error', times: Infinity });
    await expect(extract(cursor, cursorJob, { ...fast, maxAttempts: 3 })).rejects.toMatchObject({
      code: 'SAPI_EXTRACT_HTTP_STATUS',
      status: 500,
      retryable: true,
      message: expect.stringContaining(`GET ${api.url}cursor/items answered HTTP 500 after 3 attempts`),
    });
    expect(api.requests).toHaveLength(3);
  });

  it('waits for a short Retry-After on 429, then continues', async () => {
    api = await createSampleApi({ records: 5 });
    api.misbehave({ kind: 'rate-limit', retryAfter: 1 });
    const slept: number[] = [];
    const result = await extract(cursor, cursorJob, { ...fast, sleep: async (ms) => void slept.push(ms) });
    // the wait it took is the API's 1 s, not its own 5–20 ms backoff (recorded, not timed)
    expect(slept).toEqual([1000]);
    expect(api.requests.map((r) => r.misbehaved ?? 'ok')).toEqual(['rate-limit', 'ok']);
    expect(result.tables.users.rows).toHaveLength(5);
  });

  it('hands a long Retry-After back to the caller as retryAfterMs instead of waiting', async () => {
    api = await createSampleApi({ records: 5 });
    api.misbehave({ kind: 'rate-limit', status: 503, retryAfter: 120 });
    const slept: number[] = [];
    await expect(extract(cursor, cursorJob, { ...fast, sleep: async (ms) => void slept.push(ms) })).rejects.toMatchObject({
      code: 'SAPI_EXTRACT_RATE_LIMITED',
      status: 503,
      retryAfterMs: 120_000,
    });
    // handed back without waiting at all
    expect(slept).toEqual([]);
  });

  it('reads an HTTP-date Retry-After', async () => {
    api = await createSampleApi({ records: 5 });
    api.misbehave({ kind: 'rate-limit', retryAfter: new Date(Date.now() + 3_600_000).toUTCString() });
    const error = await extract(cursor, cursorJob).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SAPI_EXTRACT_RATE_LIMITED' });
    expect((error as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(3_500_000);
  });

  it('fails with a clear error on an HTML page, naming the URL, the status and the start of the body', async () => {
    api = await createSampleApi({ records: 25 });
    api.misbehave({ kind: 'html', after: 1 });
    const error = (await extract(cursor, cursorJob).catch((e: unknown) => e)) as Error & { code: string };
    expect(error.code).toBe('SAPI_EXTRACT_NOT_JSON');
    expect(error.message).toContain(`GET ${api.url}cursor/items?cursor=`);
    expect(error.message).toContain('answered HTTP 200 with a body that is not JSON');
    expect(error.message).toContain('body starts with: <!DOCTYPE html> <html><head><title>502 Bad Gateway');
  });

  it('fails with a clear error on truncated JSON', async () => {
    api = await createSampleApi();
    api.misbehave({ kind: 'invalid-json' });
    await expect(extract(cursor, cursorJob)).rejects.toMatchObject({ code: 'SAPI_EXTRACT_NOT_JSON', message: expect.stringContaining('{"items": [{"id": 1}') });
  });

  it('stops when the API repeats the previous page, without extracting the repeat', async () => {
    api = await createSampleApi({ records: 25 });
    api.misbehave({ kind: 'repeat', after: 1, times: Infinity });
    const result = await extract({ method: 'response.param', responseParam: 'next_page', queryParam: 'page' }, [
      { endpoint: 'pages/items', dataField: 'data' },
    ]);
    expect(seen()).toEqual(['GET /pages/items', 'GET /pages/items?page=2']);
    expect(idsOf(result.tables.pages_items.rows)).toEqual(range(1, 10));
    expect(result.runs[0].stopReason).toBe('duplicate-response');
  });

  it('retries a connection reset', async () => {
    api = await createSampleApi({ records: 5 });
    api.misbehave({ kind: 'reset' });
    const result = await extract(cursor, cursorJob);
    expect(api.requests).toHaveLength(2);
    expect(result.tables.users.rows).toHaveLength(5);
  });

  it('does not retry a 404 and reports it as not retryable', async () => {
    api = await createSampleApi();
    await expect(extract(cursor, [{ endpoint: 'nope' }])).rejects.toMatchObject({ code: 'SAPI_EXTRACT_HTTP_STATUS', status: 404, retryable: false });
    expect(api.requests).toHaveLength(1);
  });
});
