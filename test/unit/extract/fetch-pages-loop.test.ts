/**
 * The page loop of `fetchPages` runs in a thread of its own and sends a page's successor before it flattens the
 * page's rows (see extract-page-loop.ts). What that must not change, seen from a local API that checks the staging
 * folder when each request arrives: with page checkpoints a page is staged (rows and marker) before the next one is
 * requested; a page whose rows fail after its successor went out is never part of a resume point; the rows of a
 * batch arrive staged in page order; a process that ran an extraction exits on its own (the thread never holds it).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { createHttpPools } from '../../../src/http';
import { fetchPages, type FetchPagesCheckpoint, type FetchPagesInput, type FetchPagesResult } from '../../../src/activities/extract-fetch-pages';
import { jobRunPrefix, pageLogKey, parsePageKey, readText, stageStoreOf } from '../../../src/object-storage/stage-store';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createScrollerState } from '../../../src/extractor/scroller';

const PAGES = 120;
/** Page whose second item changes `value` from a scalar to an object (the JSON parser refuses it). */
let badPage = 0;
/** Called with the page number of each request as it arrives. */
let onRequest: (page: number) => void = () => undefined;
const requested: number[] = [];

function pageBody(page: number): unknown {
  const items = [
    { id: `${page}-a`, value: page },
    { id: `${page}-b`, value: page === badPage ? { nested: page } : page + 0.5 },
  ];
  return { items, next_page: page < PAGES ? page + 1 : null };
}

let server: Server;
let baseUrl = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
    requested.push(page);
    onRequest(page);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(pageBody(page)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  badPage = 0;
  onRequest = () => undefined;
  requested.length = 0;
});

const http = createHttpPools();
afterAll(() => http.close());

function depsWithFolder(): ActivityDeps {
  return { settings: { stagingUrl: mkdtempSync(join(tmpdir(), 'fetch-pages-loop-')) }, userS3: () => undefined, http } as unknown as ActivityDeps;
}

function input(overrides: Partial<FetchPagesInput> = {}): FetchPagesInput {
  const config = parseExtractorConfig({
    parameters: {
      api: { baseUrl, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
      config: { jobs: [{ endpoint: 'items', dataField: 'items' }] },
    },
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

async function run(deps: ActivityDeps, activityInput: FetchPagesInput) {
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf', runId: 'run' } }, { logger: new DefaultLogger('ERROR') });
  const beats: FetchPagesCheckpoint[] = [];
  env.on('heartbeat', (d: FetchPagesCheckpoint) => beats.push(d));
  const outcome = env.run(fetchPages(deps), activityInput) as Promise<FetchPagesResult>;
  return { outcome, beats };
}

/** Staged row ids in key order (page order). */
async function stagedIds(deps: ActivityDeps): Promise<string[]> {
  const store = stageStoreOf(deps);
  const ids: string[] = [];
  for (const key of await store.list('wf/run/r')) {
    if (!parsePageKey(key)) continue;
    for (const line of (await readText(store, key)).split('\n')) if (line) ids.push(JSON.parse(line).id as string);
  }
  return ids;
}

const idsOf = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => [`${from + i}-a`, `${from + i}-b`]).flat();

describe('fetchPages page loop', () => {
  it('with page checkpoints requests a page only once the page before is in the log with its resume point', async () => {
    const deps = depsWithFolder();
    const log = join(stageStoreOf(deps).container, ...pageLogKey('wf/run', 1, 1, 1).split('/'));
    const early: number[] = [];
    onRequest = (page) => {
      if (page === 1) return;
      const last = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).at(-1) : undefined;
      const logged = last === undefined ? undefined : (JSON.parse(last) as { last: number; checkpoint: { state: { pages: number } } });
      if (logged?.last !== page - 1 || logged.checkpoint.state.pages !== page - 1) early.push(page);
    };
    const { outcome } = await run(deps, input({ maxPages: 40, pageCheckpoints: true }));
    expect(await outcome).toMatchObject({ pages: 40, pending: { pageNo: 40 } });
    expect(requested).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(early).toEqual([]);
    expect(await stagedIds(deps)).toEqual(idsOf(1, 40));
  });

  it('a batch requests pages ahead of its staging, and stages every page once, in order', async () => {
    const deps = depsWithFolder();
    const root = stageStoreOf(deps).container;
    const ahead: number[] = [];
    onRequest = (page) => {
      if (page > 1 && !existsSync(join(root, ...jobRunPrefix('wf/run', 1).split('/')))) ahead.push(page);
    };
    const { outcome } = await run(deps, input());
    expect(await outcome).toMatchObject({ pages: PAGES, pending: null, state: { next: null } });
    expect(requested).toEqual(Array.from({ length: PAGES }, (_, i) => i + 1)); // each page once, none after the last
    expect(ahead.length).toBeGreaterThan(0); // the loop did not wait for the staging
    expect(await stagedIds(deps)).toEqual(idsOf(1, PAGES));
  });

  it('a page whose rows fail after its successor was requested is never part of a resume point', async () => {
    badPage = 101; // pages 1-100 fill at most a group (100 pages); page 101's rows fail after page 102 was requested
    const deps = depsWithFolder();
    const { outcome, beats } = await run(deps, input());
    await expect(outcome).rejects.toMatchObject({ type: 'SAPI_EXTRACT_DATA_INVALID', nonRetryable: true });
    expect(requested).toContain(102); // the successor went out before the rows of page 101 were flattened
    expect(beats.length).toBeGreaterThan(0);
    // groups close at 100 pages or after 1 s, so on a slow machine the last resume point may be an earlier group's end
    // (a retry discards what was staged after it); page 101 is never in a resume point nor staged
    const resumePoint = Math.max(...beats.map((b) => b.state.pages));
    const staged = await stagedIds(deps);
    const stagedPages = staged.length / 2;
    expect(staged).toEqual(idsOf(1, stagedPages));
    expect(stagedPages).toBeLessThanOrEqual(100);
    expect(resumePoint).toBeGreaterThan(0);
    expect(resumePoint).toBeLessThanOrEqual(stagedPages);
  });

  it('a process that extracted pages exits on its own: the page-loop thread does not hold it', async () => {
    const root = join(__dirname, '..', '..', '..');
    const script = `
      const { startPageLoop, secretsOf } = require(${JSON.stringify(join(root, 'src/activities/extract-page-loop.ts'))});
      const { parseExtractorConfig } = require(${JSON.stringify(join(root, 'src/extractor/config-schema.ts'))});
      const { createScrollerState } = require(${JSON.stringify(join(root, 'src/extractor/scroller.ts'))});
      const config = parseExtractorConfig(${JSON.stringify({ parameters: { api: { baseUrl, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } }, config: { jobs: [{ endpoint: 'items', dataField: 'items' }] } } })});
      const job = config.config.jobs[0];
      const state = createScrollerState(job, config.api, Date.now());
      const loop = startPageLoop({ job, context: {}, state, fetched: 0, maxPages: 5, maxMs: 60000, startedAt: Date.now(), secrets: secretsOf(process.env), ahead: 2 }, () => {}, new AbortController().signal);
      (async () => { let pages = 0; for (;;) { const r = await loop.next(); pages += r.pages.length + (r.pending ? 1 : 0); if (r.pending) break; loop.ack(r.pages.at(-1).pageNo); } loop.stop(); console.log('pages', pages); })();
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['-r', join(root, 'scripts/ts-register.js'), '-e', script], { timeout: 30_000 });
    expect(stdout.trim()).toBe('pages 5');
  });
});
