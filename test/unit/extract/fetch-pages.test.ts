/**
 * The page-fetching activity on its own (mock activity context, real sample API, local staging folder): groups,
 * the hand-back of the last page, resume from a heartbeat without duplicates, rate limits.
 */
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { createHttpPools } from '../../../src/http';
import {
  fetchPages,
  type ChildBatchCheckpoint,
  type FetchChildrenInput,
  type FetchChildrenResult,
  type FetchPagesCheckpoint,
  type FetchPagesInput,
  type FetchPagesResult,
} from '../../../src/activities/extract-fetch-pages';
import type { ChildrenRef, ChildSpec } from '../../../src/extractor/checkpoint';
import { ChildListReader } from '../../../src/object-storage/child-list';
import { functionScopeOf } from '../../../src/extractor/functions';
import { isPageLogKey, pageKey, pageLogKey, parseGroupKey, parsePageKey, readText, stageStoreOf } from '../../../src/object-storage/stage-store';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createScrollerState } from '../../../src/extractor/scroller';
import { PARENT_KEY_MARK } from '../../../src/extractor/json-parser';
import { createSampleApi, largePage, ordersOf, type SampleApi } from '../../../src/sample-api';

const PAGES = 250;
let api: SampleApi;
beforeAll(async () => (api = await createSampleApi({ largePages: PAGES, records: 30 })));
afterAll(() => api.close());
beforeEach(() => {
  api.behave();
  api.clearRequests();
});

const http = createHttpPools();
afterAll(() => http.close());

function depsWithFolder(): ActivityDeps {
  return { settings: { stagingUrl: mkdtempSync(join(tmpdir(), 'fetch-pages-')) }, userS3: () => undefined, http } as unknown as ActivityDeps;
}

function input(overrides: Partial<FetchPagesInput> = {}, jobs: unknown[] = [{ endpoint: 'large/items', dataField: 'items' }]): FetchPagesInput {
  const config = parseExtractorConfig({
    parameters: { api: { baseUrl: api.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } }, config: { jobs } },
  });
  const job = config.config.jobs[0]!;
  return {
    runKey: 'wf/run',
    runNo: 1,
    job,
    context: {},
    state: createScrollerState(job, config.api, Date.now()),
    maxPages: 1000,
    maxMs: 60_000,
    fetch: { baseDelayMs: 1, maxDelayMs: 5 },
    ...overrides,
  };
}

async function run(deps: ActivityDeps, activityInput: FetchPagesInput, info: ConstructorParameters<typeof MockActivityEnvironment>[0] = {}) {
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf', runId: 'run' }, ...info }, { logger: new DefaultLogger('ERROR') }); // expected failures log at WARN
  const beats: FetchPagesCheckpoint[] = [];
  env.on('heartbeat', (d: FetchPagesCheckpoint) => beats.push(d));
  const result = (await env.run(fetchPages(deps), activityInput)) as FetchPagesResult;
  return { result, beats };
}

/** Every staged row id of the run, in key order. */
async function stagedIds(deps: ActivityDeps): Promise<string[]> {
  const store = stageStoreOf(deps);
  const ids: string[] = [];
  for (const key of await store.list('wf/run/r')) {
    if (!parsePageKey(key)) continue; // checkpoint markers
    for (const line of (await readText(store, key)).split('\n')) if (line) ids.push(JSON.parse(line).id as string);
  }
  return ids;
}

/** Every staged row's `field` of the extraction, in key order (job run, page). */
async function stagedField(deps: ActivityDeps, field: string): Promise<unknown[]> {
  const store = stageStoreOf(deps);
  const values: unknown[] = [];
  for (const key of await store.list('wf/run/r')) {
    if (!parsePageKey(key)) continue;
    for (const line of (await readText(store, key)).split('\n')) if (line && JSON.parse(line)[field] !== undefined) values.push(JSON.parse(line)[field]);
  }
  return values;
}

/** The job runs with staged pages. */
async function stagedRuns(deps: ActivityDeps): Promise<number[]> {
  return [...new Set((await stageStoreOf(deps).list('wf/run/r')).map((k) => parsePageKey(k)?.runNo).filter((r): r is number => r !== undefined))];
}

/** A staged child list, read back. */
async function stagedChildren(deps: ActivityDeps, ref: ChildrenRef): Promise<ChildSpec[]> {
  const reader = new ChildListReader(stageStoreOf(deps), 'wf/run', ref);
  return Promise.all(Array.from({ length: ref.count }, (_, i) => reader.at(i)));
}

async function runBatch(deps: ActivityDeps, activityInput: FetchChildrenInput, info: ConstructorParameters<typeof MockActivityEnvironment>[0] = {}) {
  // the run that owns the staging key `wf/run` (a batch refuses another run's key, as fetchPages does)
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf', runId: 'run' }, ...info }, { logger: new DefaultLogger('ERROR') });
  const beats: ChildBatchCheckpoint[] = [];
  env.on('heartbeat', (d: ChildBatchCheckpoint) => beats.push(d));
  const result = (await env.run(fetchPages(deps), activityInput)) as FetchChildrenResult;
  return { result, beats };
}

const idsOf = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => largePage(from + i).map((r) => r.id)).flat();

describe('fetchPages', () => {
  it('fetches a batch, stages it in groups and hands the last page back un-stepped', async () => {
    const deps = depsWithFolder();
    const { result, beats } = await run(deps, input({ maxPages: 120 }));
    expect(api.requests).toHaveLength(120);
    expect(result).toMatchObject({ pages: 120, fetched: 120, resumed: false, records: idsOf(1, 120).length });
    expect(result.state.pages).toBe(119); // page 120 waits for the workflow's nextStep
    expect(result.pending).toEqual({ pageNo: 120, result: expect.anything() }); // no children: no list
    expect(result.schema).toEqual({ large_items: ['id', 'page', 'value', 'even'] });
    expect(await stagedIds(deps)).toEqual(idsOf(1, 120));
    const keys = (await stageStoreOf(deps).list('wf/run/r')).map((k) => parsePageKey(k)!);
    expect(keys.at(-1)).toMatchObject({ firstPage: 120, lastPage: 120 });
    // every resume point sent is the end of a stored group (a keepalive beat before the first one carries none)
    for (const beat of beats) if (beat !== undefined && beat.state.pages > 0) expect(keys.some((k) => k.lastPage === beat.state.pages)).toBe(true);
  });

  it('runs to the end of pagination when the batch allows it', async () => {
    const deps = depsWithFolder();
    const { result } = await run(deps, input());
    expect(result.pending).toBeNull();
    expect(result.state).toMatchObject({ next: null, pages: PAGES, stopReason: 'empty-cursor' });
    expect(await stagedIds(deps)).toEqual(idsOf(1, PAGES));
  });

  it('on a retry resumes from the heartbeat, deletes what the dead attempt staged after it, and stages every page once', async () => {
    const deps = depsWithFolder();
    const first = await run(deps, input({ maxPages: 180 }));
    const checkpoint = first.beats.filter((b) => b.state.pages > 0 && b.state.pages < 150).at(-1)!;
    expect(checkpoint).toBeDefined();
    api.clearRequests();
    const second = await run(deps, input(), { attempt: 2, heartbeatDetails: checkpoint });
    expect(second.result.resumed).toBe(true);
    expect(Number(api.requests[0]!.query.page)).toBe(checkpoint.state.pages + 1);
    expect(second.result.pages).toBe(PAGES); // totals carried over from the checkpoint
    expect(await stagedIds(deps)).toEqual(idsOf(1, PAGES));
  });

  it('stops at a page with child runs and returns them in order', async () => {
    const deps = depsWithFolder();
    const { result } = await run(
      deps,
      input({}, [{ endpoint: 'users', dataField: 'users', children: [{ endpoint: 'users/{uid}/orders', dataField: 'orders', placeholders: { uid: 'id' } }] }]),
    );
    expect(api.requests).toHaveLength(1);
    // the child runs are staged, not returned: the result carries their list's reference
    expect(result.pending?.children).toEqual({ key: 'wf/run/children/r0000000001-p0000000001/', count: 10, next: 0 });
    const staged = await stagedChildren(deps, result.pending!.children!);
    expect(staged.map((c) => c.endpoint)).toEqual(Array.from({ length: 10 }, (_, i) => `users/${i + 1}/orders`));
    expect(staged[2]).toMatchObject({ jobId: '0.0', parentColumns: { parent_id: '3' } });
  });

  describe('a batch of child runs', () => {
    const usersJobs = [
      { endpoint: 'users', dataField: 'users', children: [{ endpoint: 'users/{uid}/orders', dataField: 'orders', placeholders: { uid: 'id' } }] },
    ];
    /** The users page's child list staged (run 1, page 1), and the input of a batch from child `from`. */
    async function listed(deps: ActivityDeps) {
      const parent = input({}, usersJobs);
      const { result } = await run(deps, parent);
      const ref = result.pending!.children!;
      const config = parseExtractorConfig({
        parameters: {
          api: { baseUrl: api.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
          config: { jobs: usersJobs },
        },
      });
      api.clearRequests();
      const batch = (from: number, firstRunNo: number, overrides: Partial<FetchChildrenInput> = {}): FetchChildrenInput => ({
        runKey: 'wf/run',
        children: { ref: { ...ref, next: from }, firstRunNo },
        jobs: { '0.0': config.config.jobs[0]!.children[0]! },
        api: config.api,
        scope: functionScopeOf(config),
        maxPages: 1000,
        maxMs: 60_000,
        fetch: { baseDelayMs: 1, maxDelayMs: 5 },
        ...overrides,
      });
      return { ref, batch };
    }
    const orderIds = (users: number[]) => users.flatMap((id) => ordersOf(id).map((o) => o.orderId));
    const userIds = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    /** The `users/{id}/orders?page=` requests, as `id:page`. */
    const childRequests = () => api.requests.map((r) => `${r.path.split('/')[2]}:${(r.query.page as string | undefined) ?? 1}`);

    it('runs consecutive child runs, each fully paginated, in the list order, numbered from firstRunNo', async () => {
      const deps = depsWithFolder();
      const { batch } = await listed(deps);
      const { result } = await runBatch(deps, batch(0, 2));
      // users 1..10 have id % 4 orders, two per page: users 3 and 7 take two pages
      expect(childRequests()).toEqual(['1:1', '2:1', '3:1', '3:2', '4:1', '5:1', '6:1', '7:1', '7:2', '8:1', '9:1', '10:1']);
      expect(result.batch).toEqual({ done: 10, stopReasons: { '0.0': { 'empty-cursor': 10 } } });
      expect(result).toMatchObject({ pages: 12, fetched: 12, records: orderIds(userIds(1, 10)).length, resumed: false });
      expect(await stagedField(deps, 'orderId')).toEqual(orderIds(userIds(1, 10)));
      expect((await stagedRuns(deps)).filter((r) => r > 1)).toEqual([2, 3, 4, 6, 7, 8, 10, 11]); // users 4 and 8 (runs 5, 9) have no orders
    });

    it("stops at the call's page limit inside a run and hands that run back; the next batch goes on after it", async () => {
      const deps = depsWithFolder();
      const { batch } = await listed(deps);
      const first = await runBatch(deps, batch(0, 2, { maxPages: 3 }));
      // users 1, 2 done (runs 2, 3); the limit came on user 3's first page (run 4): stepped, handed back to go on with
      expect(childRequests()).toEqual(['1:1', '2:1', '3:1']);
      expect(first.result.batch).toMatchObject({ done: 2, open: { spec: { endpoint: 'users/3/orders' }, state: { pages: 1 }, pending: null } });
      expect(first.result.batch.open!.state.next?.url).toContain('users/3/orders?page=2');
      api.clearRequests();
      // a run that ends on the limit's page is done: users 4, 5, 6 (6's single page is the third)
      const second = await runBatch(deps, batch(3, 5, { maxPages: 3 }));
      expect(childRequests()).toEqual(['4:1', '5:1', '6:1']);
      expect(second.result.batch).toEqual({ done: 3, stopReasons: { '0.0': { 'empty-cursor': 3 } } });
    });

    it('a retry resumes after the run its heartbeat names and stages every row once, replacing what the dead attempt staged after it', async () => {
      const deps = depsWithFolder();
      const { batch } = await listed(deps);
      // the first attempt ran every child (and staged them all), but its last heartbeat to reach the server was the
      // one at the end of user 7's run (run 8, child 6)
      const first = await runBatch(deps, batch(0, 2));
      const beat = first.beats.find((b) => b?.child === 6 && b.state !== null && b.state.next === null);
      expect(beat).toMatchObject({ tag: 'c2:0', child: 6, state: { pages: 2 }, stopReasons: { '0.0': { 'empty-cursor': 6 } } });
      api.clearRequests();
      const second = await runBatch(deps, batch(0, 2), { attempt: 2, heartbeatDetails: beat });
      expect(second.result.resumed).toBe(true);
      expect(childRequests()).toEqual(['8:1', '9:1', '10:1']);
      expect(second.result).toMatchObject({
        pages: 12,
        records: orderIds(userIds(1, 10)).length,
        batch: { done: 10, stopReasons: { '0.0': { 'empty-cursor': 10 } } },
      });
      expect(await stagedField(deps, 'orderId')).toEqual(orderIds(userIds(1, 10)));
    });

    it('a heartbeat of another batch is not resumed from', async () => {
      const deps = depsWithFolder();
      const { batch } = await listed(deps);
      const first = await runBatch(deps, batch(0, 2));
      const beat = first.beats.find((b) => b?.child === 6);
      api.clearRequests();
      const other = await runBatch(deps, batch(3, 5), { attempt: 2, heartbeatDetails: beat });
      expect(other.result.resumed).toBe(false);
      expect(childRequests()[0]).toBe('4:1');
      expect(await stagedField(deps, 'orderId')).toEqual(orderIds(userIds(1, 10)));
    });

    it("refuses a list outside the extraction's own staging, before any request", async () => {
      const deps = depsWithFolder();
      const { batch } = await listed(deps);
      const foreign = batch(0, 2);
      foreign.children.ref = { ...foreign.children.ref, key: 'other/run/children/r0000000001-p0000000001/' };
      await expect(runBatch(deps, foreign)).rejects.toMatchObject({ type: 'SAPI_INVALID_INPUT', nonRetryable: true });
      expect(api.requests).toEqual([]);
    });

    it('a retry without a heartbeat starts the batch over, replacing what the dead attempt staged', async () => {
      const deps = depsWithFolder();
      const { batch } = await listed(deps);
      api.misbehave({ kind: 'html', path: '/users/9/orders' });
      await expect(runBatch(deps, batch(0, 2))).rejects.toMatchObject({ type: 'SAPI_EXTRACT_NOT_JSON' });
      api.behave();
      api.clearRequests();
      const second = await runBatch(deps, batch(0, 2), { attempt: 2 });
      expect(second.result.resumed).toBe(false);
      expect(childRequests()[0]).toBe('1:1');
      expect(await stagedField(deps, 'orderId')).toEqual(orderIds(userIds(1, 10)));
    });

    it('with page checkpoints resumes from the newest marker of the run it was in', async () => {
      const deps = depsWithFolder();
      const { batch } = await listed(deps);
      api.misbehave({ kind: 'html', path: '/users/7/orders', after: 1 }); // dies on user 7's second page
      await expect(runBatch(deps, batch(0, 2, { pageCheckpoints: true }))).rejects.toMatchObject({ type: 'SAPI_EXTRACT_NOT_JSON' });
      api.behave();
      api.clearRequests();
      const second = await runBatch(deps, batch(0, 2, { pageCheckpoints: true }), { attempt: 2, heartbeatDetails: undefined });
      // no heartbeat reached the server: the markers of the batch's first run (user 1, run 2) say it is done; the
      // runs after it start over, replacing what the dead attempt staged for them
      expect(second.result.resumed).toBe(true);
      expect(childRequests()[0]).toBe('2:1');
      expect(await stagedField(deps, 'orderId')).toEqual(orderIds(userIds(1, 10)));
      expect(second.result.batch.done).toBe(10);
    });
  });

  it('returns a long Retry-After instead of waiting, with the pages before it staged', async () => {
    const deps = depsWithFolder();
    api.misbehave({ kind: 'rate-limit', path: '/large/items', after: 3, retryAfter: 30 });
    const { result } = await run(deps, input());
    expect(result).toMatchObject({ rateLimitedMs: 30_000, pending: null, pages: 3 });
    expect(result.state.pages).toBe(3);
    expect(result.state.next?.url).toContain('page=4');
    expect(await stagedIds(deps)).toEqual(idsOf(1, 3));
  });

  it('fails a page that is not JSON with the URL and status, non-retryable', async () => {
    api.misbehave({ kind: 'html', path: '/large/items', after: 1 });
    const failure = await run(depsWithFolder(), input()).catch((e: unknown) => e);
    expect(failure).toMatchObject({ type: 'SAPI_EXTRACT_NOT_JSON', nonRetryable: true });
    expect((failure as Error).message).toContain(`GET ${api.url}large/items?page=2 answered HTTP 200`);
  });

  it('carries the renamed parent columns from the input through its pages and returns them for the next batch', async () => {
    const jobs = [{ endpoint: 'large/items', dataField: 'items', userData: { value: 'mine', flag: 'f' } }];
    // 'value' clashes with a field of every item: renamed on page 1, then remembered; 'flag' was renamed earlier in the run
    const { result } = await run(depsWithFolder(), input({ maxPages: 3, context: { parentAliases: { flag: 'flag_u0' } } }, jobs));
    expect(result.parentAliases).toEqual({ flag: 'flag_u0', value: 'value_u0' });
    expect(result.schema.large_items).toEqual(['id', 'page', 'value', 'even', `${PARENT_KEY_MARK}value_u0`, `${PARENT_KEY_MARK}flag_u0`]);
  });

  describe('with page checkpoints (page mode)', () => {
    it('logs every page with its resume point, then stages the call as a group with its marker (the handed-back page alone)', async () => {
      const deps = depsWithFolder();
      const { result } = await run(deps, input({ maxPages: 30, pageCheckpoints: true }));
      expect(result).toMatchObject({ pages: 30, fetched: 30, pending: { pageNo: 30 } });
      const keys = await stageStoreOf(deps).list('wf/run/r');
      expect(keys.filter(isPageLogKey)).toEqual([]); // the log is gone once its groups are staged
      const markers = keys.filter((k) => k.endsWith('/.checkpoint.json'));
      expect(markers.map((k) => parseGroupKey(k)!)).toEqual([
        { runNo: 1, firstPage: 1, lastPage: 29 },
        { runNo: 1, firstPage: 30, lastPage: 30 },
      ]);
      // a marker holds the resume point after its pages; the handed-back last page's is the one before it
      const read = async (key: string) => JSON.parse(await readText(stageStoreOf(deps), key)) as { checkpoint: FetchPagesCheckpoint; tables: string[] };
      expect(await read(markers[0]!)).toMatchObject({ tag: '1:0', checkpoint: { state: { pages: 29 }, totals: { pages: 29 } }, tables: ['large_items'] });
      expect(await read(markers[1]!)).toMatchObject({ checkpoint: { state: { pages: 29 } }, tables: ['large_items'] });
      expect(await stagedIds(deps)).toEqual(idsOf(1, 30));
    });

    it('a retry that got no heartbeat resumes after the last staged page: only the page in flight is fetched again, none is staged twice', async () => {
      const deps = depsWithFolder();
      api.misbehave({ kind: 'html', path: '/large/items', after: 40 }); // the first attempt dies fetching page 41
      await expect(run(deps, input({ pageCheckpoints: true }))).rejects.toMatchObject({ type: 'SAPI_EXTRACT_NOT_JSON' });
      // …and its log holds pages 1-40, one per line; had it been killed writing page 41's line, that line is torn
      const log = join(stageStoreOf(deps).container, ...pageLogKey('wf/run', 1, 1, 1).split('/'));
      expect(readFileSync(log, 'utf8').split('\n')).toHaveLength(41);
      appendFileSync(log, `{"tag":"1:0","first":41,"last":41,"tables":{"large_items":"{\\"id\\":\\"torn`);
      // …and a group of page 41 staged without its marker (the layout of a store that cannot append)
      await stageStoreOf(deps).put(pageKey('wf/run', 1, 41, 41, 'large_items'), `${JSON.stringify({ id: 'half-staged' })}\n`);
      api.behave();
      api.clearRequests();
      const second = await run(deps, input({ pageCheckpoints: true }), { attempt: 2 });
      expect(second.result.resumed).toBe(true);
      expect(Number(api.requests[0]!.query.page)).toBe(41);
      expect(api.requests).toHaveLength(PAGES - 40);
      expect(second.result.pages).toBe(PAGES); // totals carried over from the marker
      expect(await stagedIds(deps)).toEqual(idsOf(1, PAGES));
      expect((await stageStoreOf(deps).list('wf/run/r')).filter(isPageLogKey)).toEqual([]);
    });

    it('without page checkpoints the same retry starts over (it only has the heartbeat)', async () => {
      const deps = depsWithFolder();
      api.misbehave({ kind: 'html', path: '/large/items', after: 40 });
      await expect(run(deps, input())).rejects.toMatchObject({ type: 'SAPI_EXTRACT_NOT_JSON' });
      api.behave();
      api.clearRequests();
      const second = await run(deps, input(), { attempt: 2 });
      expect(second.result.resumed).toBe(false);
      expect(api.requests[0]!.query.page).toBeUndefined(); // page 1
      expect(await stagedIds(deps)).toEqual(idsOf(1, PAGES));
    });
  });
});
