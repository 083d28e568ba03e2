/**
 * Continue-as-new while polling a long Storage job (import and export) and between extraction batches, when the
 * server suggests it. The time-skipping test server never suggests continue-as-new, so these run on the Temporal
 * CLI's dev server with `limit.historyCount.suggestContinueAsNew` set low (real time: the polling waits are set to
 * milliseconds), with the same fake activities. Each test waits for the event it needs (a poll from a later run), then
 * lets the job end. The tests run side by side (`it.concurrent`: each has its own fake project, worker and task queue),
 * so their real-time deadlines pass together.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SapiErrorCode } from '../../src/errors';
import type { ExtractResult } from '../../src/contracts/extract';
import { exportTableWorkflow, extendDeadlineUpdate, extractWorkflow, importTableWorkflow, progressQuery } from '../../src/workflows';
import { FakeProject } from './harness/fake-project';
import { startDevServer, withWorker } from './harness/env';
import { codeOf, settled } from './harness/outcome';
import { SMALL_IMPORT_MAX_BYTES } from '../../src/activities/prepare-import';

const FAST = { initialMs: 10, maxMs: 50, elapsedFraction: 0, inActivityAfterMs: -1 };
const BIG = '/data/big.csv';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await startDevServer(40);
});
afterAll(async () => {
  await env?.teardown();
});

let seq = 0;
function project(): FakeProject {
  const p = new FakeProject();
  p.sources.set(BIG, { rows: 1000, bytes: SMALL_IMPORT_MAX_BYTES + 1 });
  p.tables.set('in.c-main.orders', { rows: 42, typed: false, columns: ['id', 'name'], metadata: {} });
  p.holdJobs = true;
  return p;
}

/** The distinct runs that polled the job, in order. */
const pollingRuns = (p: FakeProject) => [...new Set(p.callsOf('getJob').map((c) => c.runId))];

describe('continue-as-new while polling a long job', () => {
  it.concurrent(
    'import: the run continues as new while it polls, carries its file and job, and the table gets its rows once (and one receipt, keyed by the first run)',
    async () => {
      const p = project();
      let firstRunId = '';
      const result = await withWorker(env, p, async (taskQueue) => {
        const handle = await env.client.workflow.start(importTableWorkflow, {
          taskQueue,
          workflowId: `can-import-${++seq}`,
          args: [{ source: BIG, bucketId: 'in.c-main', table: 't', polling: FAST }],
        });
        firstRunId = handle.firstExecutionRunId;
        // a poll from a third run: two continue-as-new happened while the job was processing
        await p.waitFor('getJob', () => pollingRuns(p).length >= 3);
        p.release();
        return handle.result();
      });
      expect([...p.receipts.values()].map(({ receipt }) => [receipt.runId, receipt.rows, receipt.jobId])).toEqual([[firstRunId, 1000, result.jobId]]);
      expect(result.importedRowsCount).toBe(1000);
      expect(p.tables.get('in.c-main.t')?.rows).toBe(1000);
      expect(p.jobs.size).toBe(1);
      expect(p.files.size).toBe(1);
      expect(p.callsOf('uploadFile')).toHaveLength(1);
      expect(pollingRuns(p).length).toBeGreaterThanOrEqual(3);
    },
  );

  it.concurrent('import: the deadline counts from the first run (a continued run does not restart it)', async () => {
    const p = project();
    const { failure } = await withWorker(env, p, async (taskQueue) => {
      const handle = await env.client.workflow.start(importTableWorkflow, {
        taskQueue,
        workflowId: `can-deadline-${++seq}`,
        args: [{ source: BIG, bucketId: 'in.c-main', table: 't', polling: { ...FAST, deadlineMs: 10_000 } }],
      });
      return settled(handle.result());
    });
    expect(codeOf(failure)).toBe(SapiErrorCode.JOB_DEADLINE);
    expect(pollingRuns(p).length).toBeGreaterThanOrEqual(2);
    expect(p.files.size).toBe(1);
  });

  it.concurrent('import: a deadline moved by extendDeadline is carried into the continued runs', async () => {
    const p = project();
    const result = await withWorker(env, p, async (taskQueue) => {
      const handle = await env.client.workflow.start(importTableWorkflow, {
        taskQueue,
        workflowId: `can-extend-${++seq}`,
        args: [{ source: BIG, bucketId: 'in.c-main', table: 't', polling: { ...FAST, deadlineMs: 5000 } }],
      });
      await p.waitFor('getJob');
      const { deadlineAt } = await handle.query(progressQuery);
      await handle.executeUpdate(extendDeadlineUpdate, { args: [{ until: deadlineAt! + 60 * 60 * 1000 }] });
      // past the first deadline, in a later run: the extension was carried
      const first = p.callsOf('getJob')[0]!;
      await p.waitFor('getJob', (c) => c.at > first.at + 6000 && pollingRuns(p).length >= 2);
      p.release();
      return handle.result();
    });
    expect(result.importedRowsCount).toBe(1000);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(1000);
  });

  it.concurrent('export: continues as new while it polls, then downloads the file once', async () => {
    const p = project();
    const result = await withWorker(env, p, async (taskQueue) => {
      const handle = await env.client.workflow.start(exportTableWorkflow, {
        taskQueue,
        workflowId: `can-export-${++seq}`,
        args: [{ tableId: 'in.c-main.orders', destination: '/out/o.csv', polling: FAST }],
      });
      await p.waitFor('getJob', () => pollingRuns(p).length >= 3);
      p.release();
      return handle.result();
    });
    expect(p.downloads.get('/out/o.csv')).toEqual({ fileId: result.fileId, rows: 42 });
    expect(p.callsOf('exportTableAsync')).toHaveLength(1);
    expect(p.callsOf('checkDestination')).toHaveLength(1);
  });

  it.concurrent('extraction: continues as new between batches when the server suggests it; every page once', async () => {
    const p = project();
    p.holdJobs = false;
    p.api.set('users', 30);
    const result = (await withWorker(env, p, (taskQueue) =>
      env.client.workflow.execute(extractWorkflow, {
        taskQueue,
        workflowId: `can-extract-${++seq}`,
        args: [
          {
            config: {
              parameters: { api: { baseUrl: 'https://api.example.com/' }, config: { outputBucket: 'ex', jobs: [{ endpoint: 'users', dataType: 'users' }] } },
            },
            options: { bucketId: 'in.c-ex', batchPages: 1, polling: FAST },
          },
        ],
      }),
    )) as ExtractResult;
    expect(result.runs).toBeGreaterThanOrEqual(2);
    expect(result.pages).toBe(30);
    expect(p.tables.get('in.c-ex.users')?.rows).toBe(300);
    expect(p.callsOf('fetchPages').filter((c) => c.outcome === 'ok')).toHaveLength(30);
  });
});
