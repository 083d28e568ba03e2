/**
 * extractWorkflow end to end: the real sample API, the real Temporal dev server, the emulator (tables in DuckDB,
 * files on MinIO), pages staged in a local folder (the worker's default staging).
 */
import { heartbeatProgress, withLive } from '../../../src/live-progress';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createSampleApi, largePage, largeRecordCount, makeUsers, ordersOf, type SampleApi } from '../../../src/sample-api';
import type { ExtractInput, ExtractOptions, ExtractProgress, ExtractResult } from '../../../src/contracts/extract';
import { eventually } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { descriptorLines, expectTablesLike, failureOf, FAST_FETCH, plainLoop, requestLines, sampleConfig, storedIds, timersStarted } from './support';

const CURSOR = { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const largeIds = (pages: number[]) => pages.flatMap((p) => largePage(p).map((r) => r.id)).sort();

describe('extractWorkflow against the sample API and the emulator', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let large: SampleApi;
  let huge: SampleApi;
  let n = 0;

  beforeAll(async () => {
    [env, api, large, huge] = await Promise.all([
      startSapiTestEnv('extract'),
      createSampleApi({ records: 25, pageSize: 10 }),
      createSampleApi({ largePages: 2100 }),
      createSampleApi({ largePages: 100_000, logRequests: false }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([api?.close(), large?.close(), huge?.close()]);
    await env?.stop();
  });
  beforeEach(() => {
    api.behave();
    api.clearRequests();
    api.setDataset(makeUsers(25) as unknown as Array<Record<string, unknown>>);
  });

  const workflowId = (name: string) => `extract-${name}-${Date.now()}-${++n}`;
  const options = (o: ExtractOptions = {}): ExtractOptions => ({ fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 }, ...o });

  function start(config: unknown, o: ExtractOptions = {}, name = 'run'): Promise<WorkflowHandle> {
    const input: ExtractInput = { config, options: options(o) };
    return env.client.workflow.start('extractWorkflow', { taskQueue: env.taskQueue, workflowId: workflowId(name), args: [input] });
  }

  async function run(config: unknown, o: ExtractOptions = {}, name = 'run'): Promise<ExtractResult> {
    return (await (await start(config, o, name)).result()) as ExtractResult;
  }

  const progressOf = (handle: WorkflowHandle) => handle.query<ExtractProgress>('progress');

  /** The (last run's) history replays without non-determinism against the bundled workflow code. */
  async function expectReplays(handle: WorkflowHandle): Promise<void> {
    const history = await handle.fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { code: readFileSync(testStack().workflowBundlePath, 'utf8') } }, history, handle.workflowId);
  }

  describe('each pagination style lands every record in Storage exactly once', () => {
    it('follows a cursor in batch mode: users, users_tags and users_contacts tables, requests as the plain loop sends them', async () => {
      const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'cursor');
      const oracle = await plainLoop(api, config);
      const result = await run(config, { mode: 'batch' });

      expect(requestLines(api.requests)).toEqual(descriptorLines(api, oracle.requests));
      expect(api.requests.map((r) => r.path)).toEqual(['/cursor/items', '/cursor/items', '/cursor/items']);
      expect(result).toMatchObject({ bucketId: 'in.c-cursor', pages: 3, records: 25, cancelled: false, runs: 1 });
      await expectTablesLike(env, result, oracle);
      expect(await storedIds(env, 'in.c-cursor.users')).toEqual(range(1, 25).map(String).sort());
      // nested arrays → child tables linked by JSON_parentId
      const users = await env.emulator.readTable('in.c-cursor.users');
      const contacts = await env.emulator.readTable('in.c-cursor.users_contacts');
      expect(contacts.columns).toEqual(['type', 'value', 'JSON_parentId']);
      const fourth = users.rows[3]!;
      expect(contacts.rows).toContainEqual(['phone', '+420 600 000 004', fourth[users.columns.indexOf('contacts')]!]);
      const tags = await env.emulator.readTable('in.c-cursor.users_tags');
      expect(tags.rows.map((r) => r[0])).toEqual(makeUsers(25).flatMap((u) => u.tags));
      expect(result.stopReasons).toEqual({ '0': { 'empty-cursor': 1 } });
    });

    it('pages by number in page mode (every page checkpointed, in calls of many pages), with includeParams keeping per_page', async () => {
      const config = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'next_page', queryParam: 'page', includeParams: true },
        [{ endpoint: 'pages/items', params: { per_page: 7 }, dataField: 'data' }],
        'pages',
      );
      const oracle = await plainLoop(api, config);
      const handle = await start(config, { mode: 'page' });
      const result = (await handle.result()) as ExtractResult;
      expect(requestLines(api.requests)).toEqual([
        'GET /pages/items?per_page=7',
        'GET /pages/items?per_page=7&page=2',
        'GET /pages/items?per_page=7&page=3',
        'GET /pages/items?per_page=7&page=4',
      ]);
      await expectTablesLike(env, result, oracle);
      expect(await storedIds(env, 'in.c-pages.pages_items')).toEqual(range(1, 25).map(String).sort());
      const history = (await handle.fetchHistory()).events ?? [];
      const fetches = history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchPages');
      expect(fetches.length).toBeLessThan(4); // not one activity per page
    });

    it('reads the next cursor from links.0.cursor, and sends an absolute next URL back as a value without following it', async () => {
      const linked = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'links.0.cursor', queryParam: 'cursor' },
        [{ endpoint: 'links/items', dataField: 'results', dataType: 'linked' }],
        'links',
      );
      const oracle = await plainLoop(api, linked);
      const result = await run(linked);
      expect(api.requests.map((r) => r.path)).toEqual(['/links/items', '/links/items', '/links/items']);
      await expectTablesLike(env, result, oracle);

      api.clearRequests();
      const nextUrl = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'links.next', queryParam: 'next' },
        [{ endpoint: 'links/next-url' }],
        'links',
      );
      const oracle2 = await plainLoop(api, nextUrl);
      const result2 = await run(nextUrl, { mode: 'page' });
      expect(api.requests.map((r) => r.path)).toEqual(['/links/next-url', '/links/next-url', '/links/next-url']);
      expect(api.requests[1]!.query).toEqual({ next: `${api.url}links/next-url?after=10` });
      await expectTablesLike(env, result2, oracle2);
      expect(await storedIds(env, 'in.c-links.links_next-url')).toEqual(range(1, 25).map(String).sort());
    });

    it('runs a POST search, then scrolls with GET scroll_id requests', async () => {
      const config = sampleConfig(
        api,
        { method: 'response.param', responseParam: 'scroll_id', queryParam: 'scroll_id', scrollRequest: { endpoint: 'search/scroll', method: 'GET' } },
        [{ endpoint: 'search', method: 'POST', params: { size: 8 }, dataField: 'hits', dataType: 'hits' }],
        'search',
      );
      const oracle = await plainLoop(api, config);
      const result = await run(config);
      const lines = requestLines(api.requests);
      expect(lines[0]).toBe('POST /search {"size":8}');
      expect(lines.slice(1).every((l) => l.startsWith('GET /search/scroll?scroll_id='))).toBe(true);
      expect(lines).toHaveLength(4);
      await expectTablesLike(env, result, oracle);
      expect(await storedIds(env, 'in.c-search.hits')).toEqual(range(1, 25).map(String).sort());
    });
  });

  it('runs child jobs with placeholders between the parent pages, adding parent_<field> columns', async () => {
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [
        {
          endpoint: 'users',
          dataField: 'users',
          dataType: 'users',
          children: [{ endpoint: 'users/{user-id}/orders', dataField: 'orders', dataType: 'orders', placeholders: { 'user-id': 'id' } }],
        },
      ],
      'children',
    );
    const oracle = await plainLoop(api, config);
    const handle = await start(config, { mode: 'batch', batchPages: 3 });
    const result = (await handle.result()) as ExtractResult;

    expect(requestLines(api.requests)).toEqual(descriptorLines(api, oracle.requests));
    // the parent's second page comes after every child run of its first page
    const paths = api.requests.map((r) => r.url);
    expect(paths.indexOf('/users?page=2')).toBeGreaterThan(paths.indexOf('/users/10/orders'));
    expect(paths.indexOf('/users?page=2')).toBeLessThan(paths.indexOf('/users/11/orders'));
    await expectTablesLike(env, result, oracle);
    const orders = await env.emulator.readTable('in.c-children.orders');
    expect(orders.columns).toEqual(['orderId', 'userId', 'total', 'paid', 'parent_id']);
    const expected = makeUsers(25).flatMap((u) => ordersOf(u.id).map((o) => [o.orderId, String(u.id)]));
    expect(orders.rows.map((r) => [r[0], r[4]])).toEqual(expected);
    expect(result.stopReasons['0.0']).toEqual({ 'empty-cursor': 25 });
    await expectReplays(handle);
  });

  it('creates every mapped table with its columns and primary key even when the API returned no rows, as the reference does', async () => {
    api.setDataset([]);
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [{ endpoint: 'users', dataField: 'users', dataType: 'users' }],
      'mapped-empty',
    );
    (config.parameters as { config: Record<string, unknown> }).config.mappings = {
      users: { id: { mapping: { destination: 'id', primaryKey: true } }, tags: { type: 'table', destination: 'user-tags', tableMapping: { '.': 'tag' } } },
    };
    const result = await run(config);
    expect(result.tables.map((t) => [t.name, t.tableId, t.rows, t.columns, t.primaryKey])).toEqual([
      ['users', 'in.c-mapped-empty.users', 0, ['id'], ['id']],
      ['user-tags', 'in.c-mapped-empty.user-tags', 0, ['tag', 'users_pk'], undefined],
    ]);
    expect(await env.emulator.readTable('in.c-mapped-empty.user-tags')).toEqual({ columns: ['tag', 'users_pk'], rows: [] });
  });

  it('starts child runs only for parent rows passing the recursionFilter, and adds userData to the top-level rows', async () => {
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [
        {
          endpoint: 'users',
          dataField: 'users',
          dataType: 'users',
          children: [
            {
              endpoint: 'users/{user-id}/orders',
              dataField: 'orders',
              dataType: 'orders',
              placeholders: { 'user-id': 'id' },
              recursionFilter: 'active==1&id<20',
            },
          ],
        },
      ],
      'filtered',
    );
    (config.parameters as { config: Record<string, unknown> }).config.userData = { run: 'nightly' };
    const handle = await start(config, { mode: 'batch', batchPages: 2 });
    const result = (await handle.result()) as ExtractResult;

    const users = makeUsers(25);
    const chosen = users.filter((u) => u.active && u.id < 20);
    const orderRuns = [...new Set(api.requests.filter((r) => r.url.includes('/orders')).map((r) => r.url.split('?')[0]))];
    expect(orderRuns).toEqual(chosen.map((u) => `/users/${u.id}/orders`));
    const orders = await env.emulator.readTable('in.c-filtered.orders');
    expect(orders.rows.map((r) => r[0])).toEqual(chosen.flatMap((u) => ordersOf(u.id).map((o) => o.orderId)));
    expect(orders.columns).not.toContain('run');
    const stored = await env.emulator.readTable('in.c-filtered.users');
    expect(stored.columns.at(-1)).toBe('run');
    expect(stored.rows.map((r) => r.at(-1))).toEqual(users.map(() => 'nightly'));
    expect(result.stopReasons['0.0']).toEqual({ 'empty-cursor': chosen.length });
    await expectReplays(handle);
  });

  it('maps records with parameters.config.mappings and creates the mapped tables with their primary keys', async () => {
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [{ endpoint: 'users', dataField: 'users', dataType: 'users' }],
      'mapped',
    );
    (config.parameters as { config: Record<string, unknown> }).config.mappings = {
      users: {
        id: { mapping: { destination: 'id', primaryKey: true } },
        'address.city': 'city',
        tags: {
          type: 'table',
          destination: 'user-tags',
          parentKey: { destination: 'user_id', primaryKey: true },
          tableMapping: { '.': { mapping: { destination: 'tag', primaryKey: true } } },
        },
      },
    };
    const handle = await start(config, { mode: 'batch', batchPages: 2 });
    const result = (await handle.result()) as ExtractResult;

    const users = makeUsers(25);
    expect(result.tables.map((t) => [t.name, t.columns, t.primaryKey]).sort()).toEqual([
      ['user-tags', ['tag', 'user_id'], ['tag', 'user_id']],
      ['users', ['id', 'city'], ['id']],
    ]);
    expect((await env.emulator.readTable('in.c-mapped.users')).rows).toEqual(users.map((u) => [String(u.id), u.address.city]));
    expect((await env.emulator.readTable('in.c-mapped.user-tags')).rows).toEqual(users.flatMap((u) => u.tags.map((t) => [t, String(u.id)])));
    const detail = await fetch(`${env.emulator.url}/v2/storage/tables/in.c-mapped.user-tags`, { headers: { 'X-StorageApi-Token': env.emulator.token } });
    expect(((await detail.json()) as { primaryKey: string[] }).primaryKey).toEqual(['tag', 'user_id']);
    await expectReplays(handle);
  });

  it('stops after one page of a misspelled responseParam and returns a warning that names the path', async () => {
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'meta.nextCursor', queryParam: 'cursor' },
      [{ endpoint: 'cursor/items', dataType: 'users' }],
      'typo',
    );
    const result = await run(config);
    expect(api.requests).toHaveLength(1);
    expect(result.pages).toBe(1);
    expect(result.warnings).toEqual([expect.stringContaining("responseParam 'meta.nextCursor' was not found")]);
    expect(await storedIds(env, 'in.c-typo.users')).toEqual(range(1, 10).map(String).sort());
  });

  it('fails an invalid configuration before any request, listing every issue with its path', async () => {
    const config = {
      parameters: { api: { baseUrl: 'not a url', pagination: { method: 'response.param', queryParam: 'cursor' } }, config: { jobs: [{ dataType: 'x' }] } },
    };
    const failure = await failureOf(run(config));
    expect(failure.type).toBe('SAPI_EXTRACT_CONFIG_INVALID');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(/baseUrl/);
    expect(failure.message).toMatch(/responseParam/);
    expect(failure.message).toMatch(/endpoint/);
    expect(api.requests).toHaveLength(0);
  });

  it('fails on an HTML error page naming the URL and the status, without retrying it', async () => {
    api.misbehave({ kind: 'html', path: '/cursor/items', after: 1 });
    const failure = await failureOf(run(sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items' }], 'html')));
    expect(failure.type).toBe('SAPI_EXTRACT_NOT_JSON');
    expect(failure.message).toContain(`GET ${api.url}cursor/items?cursor=`);
    expect(failure.message).toMatch(/HTTP 200/);
    expect(failure.message).toMatch(/<!DOCTYPE html>/);
    expect(api.requests).toHaveLength(2);
    await expect(env.emulator.readTable('in.c-html.cursor_items')).rejects.toThrow();
  });

  it('fails on a 4xx answer naming the URL and the status, without retrying it', async () => {
    const failure = await failureOf(run(sampleConfig(api, CURSOR, [{ endpoint: 'users/999/orders' }], 'notfound')));
    expect(failure.type).toBe('SAPI_EXTRACT_HTTP_STATUS');
    expect(failure.message).toContain(`GET ${api.url}users/999/orders answered HTTP 404`);
    expect(api.requests).toHaveLength(1);
  });

  it('waits for a 7 s Retry-After on a durable timer, then completes', async () => {
    api.misbehave({ kind: 'rate-limit', path: '/cursor/items', after: 1, retryAfter: 7 });
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'ratelimit');
    const handle = await start(config);
    await eventually(async () => (await progressOf(handle)).waitingUntil !== undefined, 20_000, 'the workflow never reported a rate-limit wait');
    const result = (await handle.result()) as ExtractResult;
    // the wait is the durable timer's (in history), not a wall-clock measure
    expect(await timersStarted(handle)).toContain(7_000);
    expect(api.requests.map((r) => r.misbehaved ?? 'ok')).toEqual(['ok', 'rate-limit', 'ok', 'ok']);
    expect(result.records).toBe(25);
    expect(await storedIds(env, 'in.c-ratelimit.users')).toEqual(range(1, 25).map(String).sort());
  });

  it('pauses between batches and resumes where it stopped', async () => {
    large.clearRequests();
    const config = sampleConfig(
      large,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [{ endpoint: 'large/items', dataField: 'items' }],
      'pause',
    );
    const handle = await start(config, { mode: 'batch', batchPages: 20 });
    await eventually(() => large.requests.length >= 10, 20_000, 'no pages fetched');
    await handle.executeUpdate('pause');
    await eventually(async () => (await progressOf(handle)).phase === 'paused', 20_000, 'never paused');
    const paused = await progressOf(handle);
    expect(paused.pages).toBeLessThan(2100);
    // paused means waiting with no batch in flight: nothing can fetch until resumed (no fixed sleep needed to see it)
    expect((await handle.describe()).raw.pendingActivities ?? []).toEqual([]);
    expect((await progressOf(handle)).job).toBe('0');
    await handle.executeUpdate('resume');
    const result = (await handle.result()) as ExtractResult;
    expect(result.pages).toBe(2100);
    expect(large.requests.map((r) => Number(r.query.page ?? 1))).toEqual(range(1, 2100));
    // history: between the pause and the resume no batch was scheduled (only the one in flight ended)
    const events = (await handle.fetchHistory()).events ?? [];
    const control = (name: string) =>
      events.findIndex(
        (e) =>
          e.workflowExecutionSignaledEventAttributes?.signalName === name ||
          e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name,
      );
    const whilePaused = events
      .slice(control('pause'), control('resume'))
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchPages');
    expect(control('pause')).toBeGreaterThan(0);
    expect(whilePaused).toEqual([]);
    const table = await env.emulator.readTable('in.c-pause.large_items');
    expect(table.rows).toHaveLength(largeRecordCount(2100));
    await expectReplays(handle);
  });

  it('on cancel stops fetching and loads what was staged, flagging the result cancelled', async () => {
    const config = sampleConfig(
      huge,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [{ endpoint: 'large/items', dataField: 'items' }],
      'cancel',
    );
    const handle = await start(config, { mode: 'page' });
    await eventually(async () => (await progressOf(handle)).pages >= 5, 30_000, 'no pages extracted');
    await handle.executeUpdate('cancel', { args: [{ reason: 'enough' }] });
    const result = (await handle.result()) as ExtractResult;
    expect(result.cancelled).toBe(true);
    expect(result.pages).toBeGreaterThanOrEqual(5);
    expect(result.pages).toBeLessThan(100_000);
    // it stopped where the cancel came: no call scheduled after the update was accepted (the one in flight ended)
    const events = (await handle.fetchHistory()).events ?? [];
    const accepted = events.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'cancel');
    expect(accepted).toBeGreaterThan(0);
    expect(events.slice(accepted).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchPages')).toEqual([]);
    expect((await progressOf(handle)).phase).toBe('cancelled');
    const ids = await storedIds(env, 'in.c-cancel.large_items');
    expect(ids).toEqual(largeIds(range(1, result.pages)));
    expect(result.tables).toEqual([expect.objectContaining({ name: 'large_items', rows: ids.length, stagedRows: ids.length })]);
  });

  it('on cancel does not load an empty mapped table for a job it never reached', async () => {
    const config = sampleConfig(
      huge,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [
        { endpoint: 'large/items', dataField: 'items' },
        { endpoint: 'large/items', dataField: 'items', dataType: 'mapped-items' },
      ],
      'cancel-mapped',
    );
    (config.parameters as { config: Record<string, unknown> }).config.mappings = {
      'mapped-items': { id: { mapping: { destination: 'id', primaryKey: true } } },
    };
    const handle = await start(config, { mode: 'page' });
    await eventually(async () => (await progressOf(handle)).pages >= 3, 30_000, 'no pages extracted');
    await handle.executeUpdate('cancel', { args: [{ reason: 'enough' }] });
    const result = (await handle.result()) as ExtractResult;
    expect(result.cancelled).toBe(true);
    expect(result.tables.map((t) => t.name)).toEqual(['large_items']);
  });

  it('reports live progress from a long batch in flight (heartbeat, no history event), and a cancel ends the batch and loads what it staged', async () => {
    const config = sampleConfig(
      huge,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [{ endpoint: 'large/items', dataField: 'items' }],
      'live',
    );
    const handle = await start(config, { mode: 'batch', batchPages: 1_000_000, batchSeconds: 12 });
    // the batch heartbeats its totals: before it ends, the query's answer plus the heartbeat (what the CLI shows)
    // already counts pages, and no progress report reached history
    const liveOf = async () => withLive(await progressOf(handle), await heartbeatProgress(env.client, (await handle.describe()).raw.pendingActivities));
    await eventually(async () => (await liveOf()).pages > 0, 11_000, 'no live progress during the first batch');
    const live = await liveOf();
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.activityTaskCompletedEventAttributes)).toHaveLength(1); // validateExtractConfig only: the batch is still running
    expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes)).toEqual([]);
    expect(live).toMatchObject({ phase: 'extracting', job: '0' });
    expect(live.page).toBe(live.pages);
    expect(live.cursor).toBe(String(live.page + 1));
    expect(live.tables.large_items).toBe(largeIds(range(1, live.page)).length);
    await handle.executeUpdate('cancel', { args: [{}] });
    const result = (await handle.result()) as ExtractResult;
    expect(result.cancelled).toBe(true);
    expect(result.pages).toBeGreaterThanOrEqual(live.pages);
    expect(await storedIds(env, 'in.c-live.large_items')).toEqual(largeIds(range(1, result.pages)));
  });

  it('extracts 2,100 small pages in batch mode with continue-as-new, each page fetched once', async () => {
    large.clearRequests();
    const config = sampleConfig(
      large,
      { method: 'response.param', responseParam: 'next_page', queryParam: 'page' },
      [{ endpoint: 'large/items', dataField: 'items' }],
      'long',
    );
    const started = Date.now();
    const handle = await start(config, { mode: 'batch', batchPages: 50, continueAsNewAfterPages: 500 });
    const result = (await handle.result()) as ExtractResult;
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(`[extract] 2100 pages in ${seconds.toFixed(1)} s (${(2100 / seconds).toFixed(0)} pages/s incl. load), ${result.runs} runs\n`);
    expect(result.pages).toBe(2100);
    expect(result.runs).toBeGreaterThan(1);
    const first = await env.client.workflow.getHandle(handle.workflowId, result.runId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
    expect(large.requests.map((r) => Number(r.query.page ?? 1))).toEqual(range(1, 2100));
    expect(await storedIds(env, 'in.c-long.large_items')).toEqual(largeIds(range(1, 2100)));
  });

  it('produces the same tables in page mode and batch mode, and loads into existing tables on a second run', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'modes');
    const oracle = await plainLoop(api, config);
    const byPage = await run(config, { mode: 'page', bucketId: 'in.c-modes-page' });
    await expectTablesLike(env, byPage, oracle);
    const byBatch = await run(config, { mode: 'batch', bucketId: 'in.c-modes-batch' });
    await expectTablesLike(env, byBatch, oracle);
    // a second full run into the same bucket replaces the rows (no duplicates); incremental appends
    const again = await run(config, { bucketId: 'in.c-modes-batch' });
    await expectTablesLike(env, again, oracle);
    await run(config, { bucketId: 'in.c-modes-batch', incremental: true });
    expect((await env.emulator.readTable('in.c-modes-batch.users')).rows).toHaveLength(50);
  });

  it('with load: false extracts only: rows stay staged as JSON lines in the staging folder, nothing is loaded', async () => {
    const config = sampleConfig(api, CURSOR, [{ endpoint: 'cursor/items', dataType: 'users' }], 'noload');
    const result = await run(config, { load: false, batchPages: 2 });
    expect(result.tables.map((t) => [t.name, t.tableId, t.rows])).toEqual([
      ['users', null, 25],
      ['users_tags', null, makeUsers(25).flatMap((u) => u.tags).length],
      ['users_contacts', null, 6],
    ]);
    expect(result.staging).toEqual({ kept: true });
    const staging = join(env.dataDir, 'work', 'staging', ...result.runKey.split('/'));
    expect(readdirSync(staging)).toEqual(['r0000000001']);
    // two pages in the first batch (the second handed back to the workflow as its own group), then the last page
    expect(readdirSync(join(staging, 'r0000000001'))).toEqual(['p0000000001-0000000001', 'p0000000002-0000000002', 'p0000000003-0000000003']);
    const users = ['p0000000001-0000000001', 'p0000000002-0000000002', 'p0000000003-0000000003'].flatMap((d) =>
      readFileSync(join(staging, 'r0000000001', d, 'users.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).id),
    );
    expect(users).toEqual(range(1, 25).map(String));
    await expect(env.emulator.readTable('in.c-noload.users')).rejects.toThrow();
  });
});
