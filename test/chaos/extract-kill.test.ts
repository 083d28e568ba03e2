/**
 * The worker running an extraction is SIGKILLed mid-pagination (after N pages; while a page's request is in
 * flight; right after the API answered a page and before its checkpoint). A new worker process takes over and the
 * tables end with every record exactly once. Pages are staged on S3 (MinIO) so any worker can resume. The cases run
 * side by side, each on its own task queue with its own workers.
 */
import { type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { FetchPagesCheckpoint, FetchPagesResult } from '../../src/activities/extract-activities';
import { createSampleApi, largePage, makeUsers, ordersOf, type SampleApi } from '../../src/sample-api';
import type { ExtractOptions, ExtractResult } from '../../src/contracts/extract';
import { activityResults, pendingHeartbeat } from '../harness/history';
import { eventually, spawnTs, waitForLine } from '../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../harness/stack-state';
import { startGate } from '../harness/api-gate';

const PAGES = 300;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const largeIds = (pages: number[]) => pages.flatMap((p) => largePage(p).map((r) => r.id)).sort();

describe('extraction survives SIGKILL of its worker mid-pagination', () => {
  const stagingPrefix = `chaos-${Date.now().toString(36)}`;
  let env: SapiTestEnv;
  let api: SampleApi;
  /** Every worker process started (each case kills its own; afterAll whatever a failed case left). */
  const children: ChildProcess[] = [];
  let n = 0;

  beforeAll(async () => {
    [env, api] = await Promise.all([
      startSapiTestEnv('chaos-extract', { worker: false }),
      createSampleApi({ records: 40, pageSize: 10, largePages: PAGES, logRequests: false }),
    ]);
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await api?.close();
    await env?.stop();
  });

  /**
   * One case's own task queue and workers: the cases run side by side (`it.concurrent`), and a case's workers (the
   * killed one and its takeover) are the only ones that take its run.
   */
  function caseRun() {
    const taskQueue = uniqueTaskQueue('chaos-extract');
    const mine: ChildProcess[] = [];
    return {
      async startWorkerProcess(identity: string): Promise<ChildProcess> {
        const stack = testStack();
        const child = spawnTs('test/harness/worker-child.ts', [], {
          ...stack.env,
          TEMPORAL_TASK_QUEUE: taskQueue,
          SAPI_URL: env.emulator.url,
          SAPI_TOKEN: env.emulator.token,
          SAPI_WORK_DIR: join(env.dataDir, `work-${identity}`),
          SAPI_STAGING_URL: `s3://extract-chaos/${stagingPrefix}`,
          SAPI_STAGING_TOKEN: 'unused', // loadSettings reads SAPI_<NAME>_URL as a connection and wants its token
          AWS_ACCESS_KEY_ID: stack.minio.accessKeyId,
          AWS_SECRET_ACCESS_KEY: stack.minio.secretAccessKey,
          SAPI_TEST_WORKFLOW_BUNDLE: stack.workflowBundlePath,
          SAPI_TEST_WORKER_IDENTITY: identity,
        });
        children.push(child);
        mine.push(child);
        await waitForLine(child, /^READY$/, 60_000);
        return child;
      },
      start(config: unknown, options: ExtractOptions = {}): Promise<WorkflowHandle> {
        return env.client.workflow.start('extractWorkflow', {
          taskQueue,
          workflowId: `chaos-extract-${Date.now()}-${++n}`,
          args: [
            {
              config,
              options: { heartbeatTimeoutMs: 5_000, fetch: { baseDelayMs: 5, maxDelayMs: 20 }, polling: { initialMs: 200, maxMs: 1000 }, ...options },
            },
          ],
        });
      },
      stop() {
        for (const child of mine) child.kill('SIGKILL');
      },
    };
  }

  function large(gate: { url: string }, bucket: string): Record<string, unknown> {
    return {
      parameters: {
        api: { baseUrl: gate.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
        config: { outputBucket: bucket, jobs: [{ endpoint: 'large/items', dataField: 'items' }] },
      },
    };
  }

  const pageOf = (url: string) => Number(new URL(url, 'http://x').searchParams.get('page') ?? 1);

  async function expectEveryPageOnce(handle: WorkflowHandle, bucket: string): Promise<ExtractResult> {
    const result = (await handle.result()) as ExtractResult;
    expect(result.pages).toBe(PAGES);
    const table = await env.emulator.readTable(`in.c-${bucket}.large_items`);
    const ids = table.rows.map((r) => r[table.columns.indexOf('id')]!).sort();
    expect(ids).toEqual(largeIds(range(1, PAGES)));
    expect(result.tables).toEqual([expect.objectContaining({ name: 'large_items', rows: ids.length, stagedRows: ids.length })]);
    return result;
  }

  it.concurrent('after N pages seen by the API, a new worker resumes from the last heartbeat and every record lands once', async () => {
    const gate = await startGate(api.url, 25); // slow enough that the first pages fill groups (1 s each) before the hold
    const run = caseRun();
    try {
      // the answer to page 120 is held until the kill: the batch cannot end before it, however slow the heartbeats
      // are to reach the server
      let answered = false;
      let release = () => {};
      gate.hold({ match: (url) => pageOf(url) === 120, answered: () => (answered = true), release: new Promise<void>((ok) => (release = ok)) });
      const first = await run.startWorkerProcess('pages-first');
      const handle = await run.start(large(gate, 'chaos-pages'));
      await eventually(() => answered, 60_000, 'the API never saw 120 pages');
      // killed once the server holds a checkpoint past the first page (the SDK sends heartbeats at most every 80% of
      // the heartbeat timeout: on a loaded machine the server could still hold only the starting point)
      await eventually(
        async () => ((await pendingHeartbeat<FetchPagesCheckpoint>(handle, 'fetchPages'))?.state.pages ?? 0) > 0,
        30_000,
        'no checkpoint reached the server',
      );
      first.kill('SIGKILL');
      const seenAtKill = gate.seen.length;
      release(); // the held answer goes nowhere; the takeover asks for that page again
      expect(seenAtKill).toBeLessThan(PAGES); // killed mid-batch
      await run.startWorkerProcess('pages-second');
      await expectEveryPageOnce(handle, 'chaos-pages');
      const pages = gate.seen.map(pageOf);
      expect(new Set(pages)).toEqual(new Set(range(1, PAGES)));
      // the takeover fetched again only what the dead worker had not checkpointed, not the whole batch
      const fetches = await activityResults<FetchPagesResult>(handle, 'fetchPages');
      expect(fetches.some((f) => f.resumed)).toBe(true);
      expect(pages.length).toBeLessThan(PAGES + seenAtKill); // a restart of the batch would fetch all of them again
    } finally {
      run.stop();
      await gate.close();
    }
  });

  it.concurrent('while a page request is in flight, the page is fetched again by the new worker and stored once', async () => {
    const gate = await startGate(api.url, 5);
    const run = caseRun();
    try {
      let answered!: () => void;
      const upstreamAnswered = new Promise<void>((r) => (answered = r));
      let release!: () => void;
      gate.hold({ match: (url) => pageOf(url) === 150, answered, release: new Promise<void>((r) => (release = r)) });
      const first = await run.startWorkerProcess('inflight-first');
      const handle = await run.start(large(gate, 'chaos-inflight'));
      await upstreamAnswered; // page 150 answered by the API, the answer held: the worker waits for it
      first.kill('SIGKILL');
      release();
      await run.startWorkerProcess('inflight-second');
      await expectEveryPageOnce(handle, 'chaos-inflight');
      expect(gate.seen.map(pageOf).filter((p) => p === 150).length).toBe(2);
    } finally {
      run.stop();
      await gate.close();
    }
  });

  it.concurrent('right after the API answered a page (fetched, not yet checkpointed), the page is stored once', async () => {
    const gate = await startGate(api.url, 5);
    const run = caseRun();
    try {
      const worker: { first?: ChildProcess } = {};
      // kill the moment page 200's answer is handed to the worker's socket: it has (or is reading) the page but
      // cannot have staged and checkpointed it
      const killed = new Promise<void>((ok) => {
        gate.hold({
          match: (url) => pageOf(url) === 200,
          sent: () => {
            worker.first?.kill('SIGKILL');
            ok();
          },
        });
      });
      worker.first = await run.startWorkerProcess('answered-first');
      const handle = await run.start(large(gate, 'chaos-answered'));
      await killed;
      await run.startWorkerProcess('answered-second');
      await expectEveryPageOnce(handle, 'chaos-answered');
      expect(gate.seen.map(pageOf).filter((p) => p === 200).length).toBe(2);
    } finally {
      run.stop();
      await gate.close();
    }
  });

  it.concurrent.each(['page', 'batch'] as const)(
    'while child jobs run between parent pages (%s mode, child runs in batches), the takeover leaves every parent and child row exactly once',
    async (mode) => {
      const gate = await startGate(api.url, 15);
      const bucket = `chaos-children-${mode}`;
      const run = caseRun();
      try {
        const config = {
          parameters: {
            api: { baseUrl: gate.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
            config: {
              outputBucket: bucket,
              jobs: [
                {
                  endpoint: 'users',
                  dataField: 'users',
                  dataType: 'users',
                  children: [{ endpoint: 'users/{id}/orders', dataField: 'orders', dataType: 'orders', placeholders: { id: 'id' } }],
                },
              ],
            },
          },
        };
        const first = await run.startWorkerProcess(`children-${mode}-first`);
        const handle = await run.start(config, { mode });
        await eventually(() => gate.seen.some((u) => u.startsWith('/users/15/orders')), 60_000, 'the children of page 2 never started');
        first.kill('SIGKILL');
        await run.startWorkerProcess(`children-${mode}-second`);
        const result = (await handle.result()) as ExtractResult;
        expect(result.records).toBe(40 + makeUsers(40).reduce((sum, u) => sum + ordersOf(u.id).length, 0));
        const users = await env.emulator.readTable(`in.c-${bucket}.users`);
        expect(users.rows.map((r) => Number(r[0]))).toEqual(range(1, 40));
        const orders = await env.emulator.readTable(`in.c-${bucket}.orders`);
        expect(orders.rows.map((r) => r[orders.columns.indexOf('orderId')])).toEqual(makeUsers(40).flatMap((u) => ordersOf(u.id).map((o) => o.orderId)));
        expect(orders.rows.every((r) => r[orders.columns.indexOf('parent_id')] === r[orders.columns.indexOf('userId')])).toBe(true);
      } finally {
        run.stop();
        await gate.close();
      }
    },
  );
});
