/**
 * exportTableWorkflow on the time-skipping test server with fake activities (FakeProject): the export, its job
 * polled in skipped time, the download; the destination check, a failed job, the deadline and `extendDeadline`,
 * cancel (update), and the one-hour outage of issue 36.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SapiErrorCode } from '../../src/errors';
import type { ExportTableInput, ExportTableResult } from '../../src/contracts/transfer';
import { exportTableWorkflow, extendDeadlineUpdate, progressQuery, transferCancelUpdate } from '../../src/workflows';
import { FakeProject, outage, type ActivityName } from './harness/fake-project';
import { startTimeSkipping, withWorker } from './harness/env';
import { codeOf, failureOf, refusalOf, settled, type Settled } from './harness/outcome';

const HOUR = 60 * 60 * 1000;

// a test server per test (up in well under a second): no test's time skipping or leftover work reaches another
let env: TestWorkflowEnvironment;
beforeEach(async () => {
  env = await startTimeSkipping();
});
afterEach(async () => {
  await env?.teardown();
});

let seq = 0;
/** A project whose table in.c-main.orders has 42 rows. */
function project(): FakeProject {
  const p = new FakeProject();
  p.tables.set('in.c-main.orders', { rows: 42, typed: false, columns: ['id', 'name'], metadata: {} });
  return p;
}

// the job polled on the workflow's timers (counted as getJob calls); the activity's polling has its own test in the import's
const input = (over: Partial<ExportTableInput> = {}): ExportTableInput => ({
  tableId: 'in.c-main.orders',
  destination: '/out/orders.csv',
  ...over,
  polling: { inActivityAfterMs: -1, ...over.polling },
});

function run(p: FakeProject, over: Partial<ExportTableInput> = {}) {
  return withWorker(env, p, (taskQueue) => env.client.workflow.execute(exportTableWorkflow, { taskQueue, workflowId: `export-${++seq}`, args: [input(over)] }));
}

function runWith<T>(
  p: FakeProject,
  over: Partial<ExportTableInput>,
  during: (handle: WorkflowHandle<typeof exportTableWorkflow>, ending: () => Promise<Settled<ExportTableResult>>) => Promise<T>,
) {
  return withWorker(env, p, async (taskQueue) => {
    const handle = await env.client.workflow.start(exportTableWorkflow, { taskQueue, workflowId: `export-${++seq}`, args: [input(over)] });
    // one wait for the result (it lets the test server skip time while it lasts): `during` may start it early
    let result: Promise<Settled<ExportTableResult>> | undefined;
    const ending = () => (result ??= settled(handle.result()));
    const seen = await during(handle, ending);
    return { ...(await ending()), seen };
  });
}

describe('exportTableWorkflow', () => {
  it('exports the table, polls its job in skipped time, downloads the file to the destination', async () => {
    const p = project();
    p.jobRunsMs = 20 * 60 * 1000;
    const result = await run(p);
    expect(result.path).toBe('/out/orders.csv');
    expect(p.downloads.get('/out/orders.csv')).toEqual({ fileId: result.fileId, rows: 42 });
    expect(p.calls.filter((c) => c.name !== 'registeredSearchAttributes' && c.name !== 'getJob').map((c) => c.name)).toEqual([
      'checkDestination',
      'exportTableAsync',
      'downloadFile',
    ]);
    expect(p.callsOf('getJob').length).toBeGreaterThan(3);
  });

  it('an existing destination without overwrite fails the run before the export starts', async () => {
    const p = project();
    p.downloads.set('/out/orders.csv', { fileId: 1, rows: 1 });
    const err = await failureOf(run(p));
    expect(codeOf(err)).toBe(SapiErrorCode.ALREADY_EXISTS);
    expect(p.jobs.size).toBe(0);
    expect(p.downloads.get('/out/orders.csv')).toEqual({ fileId: 1, rows: 1 });
  });

  it('with overwrite, the existing destination is replaced', async () => {
    const p = project();
    p.downloads.set('/out/orders.csv', { fileId: 1, rows: 1 });
    const result = await run(p, { overwrite: true });
    expect(p.downloads.get('/out/orders.csv')).toEqual({ fileId: result.fileId, rows: 42 });
  });

  it('a failed export job fails the run with SAPI_JOB_FAILED and downloads nothing', async () => {
    const p = project();
    p.nextJobFails = 'export failed: warehouse error';
    const err = await failureOf(run(p));
    expect(codeOf(err)).toBe(SapiErrorCode.JOB_FAILED);
    expect(p.downloads.size).toBe(0);
  });

  it('invalid input (no destination) fails with SAPI_INVALID_INPUT before any call', async () => {
    const p = project();
    const err = await failureOf(run(p, { destination: '' }));
    expect(codeOf(err)).toBe(SapiErrorCode.INVALID_INPUT);
    expect(p.calls.filter((c) => c.name !== 'registeredSearchAttributes')).toEqual([]);
  });

  it('a job still running at the deadline fails the run with SAPI_JOB_DEADLINE', async () => {
    const p = project();
    p.holdJobs = true;
    const err = await failureOf(run(p, { polling: { deadlineMs: 2 * HOUR } }));
    expect(codeOf(err)).toBe(SapiErrorCode.JOB_DEADLINE);
    expect(p.downloads.size).toBe(0);
  });

  it('extendDeadline lets a job longer than the first deadline finish; refused once downloading', async () => {
    const p = project().hold('downloadFile');
    p.jobRunsMs = 3 * HOUR;
    const { result, seen } = await runWith(p, { polling: { deadlineMs: HOUR } }, async (handle, ending) => {
      await p.waitFor('getJob');
      const { deadlineAt } = await handle.query(progressQuery);
      const extended = await handle.executeUpdate(extendDeadlineUpdate, { args: [{ until: new Date(deadlineAt! + 3 * HOUR).toISOString() }] });
      // waiting for the result lets the test server skip the job's hours
      const end = ending();
      await p.waitFor('downloadFile');
      const late = await refusalOf(handle.executeUpdate(extendDeadlineUpdate, { args: [{ until: Date.now() + 100 * HOUR }] }));
      p.open('downloadFile');
      await end;
      return { deadlineAt, extended, late };
    });
    expect(seen.extended.deadlineAt).toBe(seen.deadlineAt! + 3 * HOUR);
    expect(seen.late).toBe('no Storage job is being polled');
    expect(p.downloads.get('/out/orders.csv')?.rows).toBe(42);
    expect(result?.path).toBe('/out/orders.csv');
  });

  it('cancel (update) while downloading: the run ends SAPI_CANCELLED', async () => {
    const p = project().hold('downloadFile');
    const { failure, seen } = await runWith(p, {}, async (handle) => {
      await p.waitFor('downloadFile');
      const answered = await handle.executeUpdate(transferCancelUpdate, { args: [{ reason: 'not needed' }] });
      p.open('downloadFile');
      return answered;
    });
    expect(seen).toMatchObject({ phase: 'downloading', cancelling: 'not needed' });
    expect(codeOf(failure)).toBe(SapiErrorCode.CANCELLED);
  });

  it('a retryable download failure is retried (fresh read credentials each attempt)', async () => {
    const p = project();
    p.failTimes('downloadFile', 2, () => ApplicationFailure.retryable('the read credentials expired', SapiErrorCode.CREDENTIALS_EXPIRED));
    const result = await run(p);
    expect(p.callsOf('downloadFile').map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(p.downloads.get('/out/orders.csv')).toEqual({ fileId: result.fileId, rows: 42 });
  });
});

describe('exportTableWorkflow: a one-hour Storage API outage in each phase ends COMPLETED (issue 36)', () => {
  // every call is retried for the run's outage budget (1 hour by default) beyond its own time, whatever the service sends
  const phases: Array<[string, ActivityName]> = [
    ['starting the export', 'exportTableAsync'],
    ['polling the job', 'getJob'],
    ['downloading', 'downloadFile'],
  ];
  it.each(phases)('%s', async (_phase, activity) => {
    const p = project();
    p.jobRunsMs = 60_000;
    const started = await env.currentTimeMs();
    p.fail(activity, outage(started, started + HOUR));
    const result = await run(p);
    expect(p.downloads.get('/out/orders.csv')).toEqual({ fileId: result.fileId, rows: 42 });
    expect(p.jobs.size).toBe(1);
    expect(p.callsOf(activity).at(-1)!.at).toBeGreaterThanOrEqual(started + HOUR);
  });
});
