/**
 * importTableWorkflow on the time-skipping test server with fake activities (FakeProject): every path and branch,
 * asserting what the project holds afterwards (tables and rows, files, buckets) and the calls the workflow made.
 * Hours of polling and retry backoff pass in skipped time.
 */
import type { WorkflowFailedError, WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SMALL_IMPORT_MAX_BYTES } from '../../src/activities/prepare-import';
import { SapiErrorCode } from '../../src/errors';
import type { ImportTableInput, ImportTableResult } from '../../src/contracts/transfer';
import { extendDeadlineUpdate, importTableWorkflow, progressQuery, transferCancelUpdate } from '../../src/workflows';
import { FakeProject, outage, type ActivityName } from './harness/fake-project';
import { startTimeSkipping, withWorker } from './harness/env';
import { codeOf, failureOf, refusalOf, settled, type Settled } from './harness/outcome';

const HOUR = 60 * 60 * 1000;
const BIG = '/data/big.csv';

// a test server per test (up in well under a second): no test's time skipping or leftover work reaches another
let env: TestWorkflowEnvironment;
beforeEach(async () => {
  env = await startTimeSkipping();
});
afterEach(async () => {
  await env?.teardown();
});

let seq = 0;
/**
 * The polls of a job on the workflow's timers (what most tests here count as `getJob` calls); a test of the polling
 * in one activity (`awaitJob`) sets `inActivityAfterMs` itself.
 */
const TIMER_POLLING = { inActivityAfterMs: -1 };

/** A project with a small source (short path) and a big one (long path). */
function project(): FakeProject {
  const p = new FakeProject();
  p.sources.set(BIG, { rows: 1000, bytes: SMALL_IMPORT_MAX_BYTES + 1 });
  return p;
}

function run(p: FakeProject, input: Partial<ImportTableInput>) {
  return withWorker(env, p, (taskQueue) =>
    env.client.workflow.execute(importTableWorkflow, {
      taskQueue,
      workflowId: `import-${++seq}`,
      args: [{ source: '/data/small.csv', bucketId: 'in.c-main', table: 't', ...input, polling: { ...TIMER_POLLING, ...input.polling } }],
    }),
  );
}

/** Starts the import, then runs `during` with its handle while the worker is up; the result or failure after. */
function runWith<T>(
  p: FakeProject,
  input: Partial<ImportTableInput>,
  during: (handle: WorkflowHandle<typeof importTableWorkflow>, ending: () => Promise<Settled<ImportTableResult>>) => Promise<T>,
) {
  return withWorker(env, p, async (taskQueue) => {
    const handle = await env.client.workflow.start(importTableWorkflow, {
      taskQueue,
      workflowId: `import-${++seq}`,
      args: [{ source: '/data/small.csv', bucketId: 'in.c-main', table: 't', ...input, polling: { ...TIMER_POLLING, ...input.polling } }],
    });
    // one wait for the result (it lets the test server skip time while it lasts): `during` may start it early
    let result: Promise<Settled<ImportTableResult>> | undefined;
    const ending = () => (result ??= settled(handle.result()));
    const seen = await during(handle, ending);
    return { ...(await ending()), seen, handle };
  });
}

const names = (p: FakeProject) => p.calls.filter((c) => c.name !== 'registeredSearchAttributes').map((c) => c.name);

describe('importTableWorkflow: paths', () => {
  it('short path: a small source is checked and prepared in one activity, uploaded, its job started and its receipt written in a second', async () => {
    const p = project();
    const result = await run(p, {});
    expect(result).toMatchObject({ tableId: 'in.c-main.t', importedRowsCount: 2, bytes: 20, receipt: { status: 'written' } });
    expect(p.tables.get('in.c-main.t')?.rows).toBe(2);
    expect(names(p)).toEqual(['prepareImport', 'uploadAndStartJob']);
    expect(p.receipts.size).toBe(1);
  });

  it('short path, job still running after the first wait: polled with durable timers until it ends', async () => {
    const p = project();
    p.jobRunsMs = 40 * 60 * 1000;
    const result = await run(p, {});
    expect(result.importedRowsCount).toBe(2);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(2);
    const polls = p.callsOf('getJob');
    expect(polls.length).toBeGreaterThan(3);
    // the last poll came after the job's end (40 min of skipped time), not long after it (25 % bound on the wait)
    const job = [...p.jobs.values()][0]!;
    const last = polls[polls.length - 1]!.at;
    expect(last).toBeGreaterThanOrEqual(job.createdAt + p.jobRunsMs);
    expect(last - (job.createdAt + p.jobRunsMs)).toBeLessThanOrEqual(0.25 * p.jobRunsMs + 1000);
  });

  it("a job still running after inActivityAfterMs is polled through awaitJob; a busy worker's early answer is followed by a timer, not a hot loop", async () => {
    // the fake answers awaitJob after one look, as a worker whose awaitJob slots are taken does
    const p = project();
    p.jobRunsMs = 40 * 60 * 1000;
    const result = await run(p, { polling: { inActivityAfterMs: 60_000 } });
    expect(result.importedRowsCount).toBe(2);
    const awaited = p.callsOf('awaitJob');
    expect(awaited.length).toBeGreaterThan(3);
    // the first after a minute of waiting; between two calls a poll interval passed (20 s at most, never a hot loop)
    const job = [...p.jobs.values()][0]!;
    expect(awaited[0]!.at - job.createdAt).toBeGreaterThanOrEqual(60_000);
    for (let i = 1; i < awaited.length; i++) expect(awaited[i]!.at - awaited[i - 1]!.at).toBeGreaterThanOrEqual(900);
    expect(awaited.at(-1)!.at).toBeGreaterThanOrEqual(job.createdAt + p.jobRunsMs);
  });

  it('long path: a source above the small limit goes to the prepared file, then tables-async, then polling', async () => {
    const p = project();
    p.jobRunsMs = 5 * 60 * 1000;
    const result = await run(p, { source: BIG });
    expect(result).toMatchObject({ importedRowsCount: 1000, bytes: SMALL_IMPORT_MAX_BYTES + 1 });
    expect(p.tables.get('in.c-main.t')?.rows).toBe(1000);
    expect(names(p).slice(0, 3)).toEqual(['prepareImport', 'uploadFile', 'createTableAsync']);
    expect(new Set(names(p).slice(3, -1))).toEqual(new Set(['getJob']));
    expect(names(p).at(-1)).toBe('writeReceipt');
    expect(p.files.size).toBe(1);
  });

  it('load, incremental: the rows are added to the existing table (import-async)', async () => {
    const p = project();
    p.tables.set('in.c-main.t', { rows: 5, typed: false, columns: ['id', 'name'], metadata: {} });
    const result = await run(p, { mode: 'load', incremental: true });
    expect(result.importedRowsCount).toBe(2);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(7);
    expect(p.jobs.size).toBe(1);
    expect([...p.jobs.values()][0]!.operationName).toBe('tableImport');
  });

  it('via the importer: checks, then one upload, then the job', async () => {
    const p = project();
    const result = await run(p, { via: 'importer' });
    expect(result.importedRowsCount).toBe(2);
    expect(names(p)).toEqual(['checkImportTarget', 'inspectSource', 'uploadViaImporter', 'createTableAsync', 'getJob', 'writeReceipt']);
  });

  it('sliced: the slices are uploaded as one file and loaded', async () => {
    const p = project();
    p.sources.set('/data/part-1.csv', { rows: 3, bytes: 30 });
    p.sources.set('/data/part-2.csv', { rows: 4, bytes: 40 });
    const result = await run(p, { source: '', slices: ['/data/part-1.csv', '/data/part-2.csv'], columns: ['id', 'name'] });
    expect(result.importedRowsCount).toBe(7);
    expect(names(p).slice(0, 5)).toEqual(['checkImportTarget', 'inspectSource', 'prepareFile', 'uploadSlices', 'createTableAsync']);
  });

  it('typed table: defined from its columns, then loaded; metadata set after the load', async () => {
    const p = project();
    const result = await run(p, {
      typedColumns: [
        { name: 'id', definition: { type: 'INTEGER' } },
        { name: 'name', definition: { type: 'VARCHAR' } },
      ],
      description: 'people',
      metadata: { owner: 'team-a' },
    });
    expect(result).toMatchObject({ typed: true, importedRowsCount: 2, metadataSet: 2 });
    expect(p.tables.get('in.c-main.t')).toMatchObject({ rows: 2, typed: true, metadata: { owner: 'team-a', 'KBC.description': 'people' } });
    expect(names(p).slice(0, 5)).toEqual(['checkImportTarget', 'inspectSource', 'prepareFile', 'uploadFile', 'createTableDefinition']);
    expect(names(p)).toContain('loadTableAsync');
  });

  it('creates the bucket when asked (createBucket)', async () => {
    const p = project();
    await run(p, { bucketId: 'in.c-new', createBucket: true });
    expect(p.buckets.has('in.c-new')).toBe(true);
    expect(p.tables.get('in.c-new.t')?.rows).toBe(2);
  });

  it('invalid input fails before any activity, with SAPI_INVALID_INPUT', async () => {
    const p = project();
    const err = await failureOf(run(p, { bucketId: 'nope', table: 'bad name' }));
    expect(codeOf(err)).toBe(SapiErrorCode.INVALID_INPUT);
    expect(names(p)).toEqual([]);
  });
});

describe('importTableWorkflow: credential refresh', () => {
  const expired = () => ApplicationFailure.retryable('the upload credentials expired', SapiErrorCode.CREDENTIALS_EXPIRED);

  it('short path: credentials expired before the upload → the file is removed and a fresh one prepared', async () => {
    const p = project();
    p.failTimes('uploadAndStartJob', 1, expired);
    const result = await run(p, {});
    expect(result.importedRowsCount).toBe(2);
    expect(names(p)).toEqual([
      'prepareImport',
      'uploadAndStartJob',
      'cleanUpImport',
      'prepareFile',
      'uploadFile',
      'createTableAsync',
      'getJob',
      'writeReceipt',
    ]);
    // the expired file resource is gone, the table's file is the fresh one
    expect([...p.files.keys()]).toEqual([result.fileId]);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(2);
  });

  it('long path: two expiries are refreshed, each expired file removed', async () => {
    const p = project();
    p.failTimes('uploadFile', 2, expired);
    const result = await run(p, { source: BIG });
    expect(result.importedRowsCount).toBe(1000);
    expect(p.callsOf('prepareFile')).toHaveLength(2);
    expect(p.callsOf('cleanUpImport')).toHaveLength(2);
    expect([...p.files.keys()]).toEqual([result.fileId]);
  });

  it(`gives up after ${3} expiries with SAPI_CREDENTIALS_EXPIRED, leaving no file and no bucket it created`, async () => {
    const p = project();
    p.fail('uploadFile', () => {
      throw expired();
    });
    const err = await failureOf(run(p, { source: BIG, bucketId: 'in.c-new', createBucket: true }));
    expect(codeOf(err)).toBe(SapiErrorCode.CREDENTIALS_EXPIRED);
    expect(p.callsOf('uploadFile')).toHaveLength(3);
    expect(p.files.size).toBe(0);
    expect(p.buckets.has('in.c-new')).toBe(false);
    expect(p.tables.size).toBe(0);
  });
});

describe('importTableWorkflow: clean-up after a failure', () => {
  it('a job that fails: its file and the bucket the run created are removed, no table', async () => {
    const p = project();
    p.nextJobFails = 'Load error: column count mismatch';
    const err = await failureOf(run(p, { bucketId: 'in.c-new', createBucket: true }));
    expect(codeOf(err)).toBe(SapiErrorCode.JOB_FAILED);
    expect(String((err as WorkflowFailedError).cause?.message)).toContain('column count mismatch');
    expect(p.files.size).toBe(0);
    expect(p.buckets.has('in.c-new')).toBe(false);
    expect(p.tables.size).toBe(0);
  });

  it('an upload that fails for good (long path): the prepared file and the created bucket are removed', async () => {
    const p = project();
    p.fail('uploadFile', () => {
      throw ApplicationFailure.nonRetryable('the source went away', SapiErrorCode.INVALID_INPUT);
    });
    const err = await failureOf(run(p, { source: BIG, bucketId: 'in.c-new', createBucket: true }));
    expect(codeOf(err)).toBe(SapiErrorCode.INVALID_INPUT);
    expect(p.callsOf('cleanUpImport').map((c) => c.input)).toEqual([{ fileId: expect.any(Number), bucketId: 'in.c-new' }]);
    expect(p.files.size).toBe(0);
    expect(p.buckets.has('in.c-new')).toBe(false);
  });

  it('a failed check creates nothing and removes nothing (mode create into an existing table)', async () => {
    const p = project();
    p.tables.set('in.c-main.t', { rows: 5, typed: false, columns: ['id', 'name'], metadata: {} });
    const err = await failureOf(run(p, {}));
    expect(codeOf(err)).toBe(SapiErrorCode.ALREADY_EXISTS);
    expect(names(p)).toEqual(['prepareImport']);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(5);
    expect(p.files.size).toBe(0);
  });

  it('a typed table whose load fails is dropped again', async () => {
    const p = project();
    const typedColumns = [
      { name: 'id', definition: { type: 'INTEGER' } },
      { name: 'name', definition: { type: 'VARCHAR' } },
    ];
    // the definition job succeeds, the load fails
    p.fail('loadTableAsync', () => void (p.nextJobFails = 'value "x" is not an INTEGER'));
    const err = await failureOf(run(p, { typedColumns }));
    expect(codeOf(err)).toBe(SapiErrorCode.JOB_FAILED);
    expect(p.callsOf('cleanUpImport').map((c) => c.input)).toEqual([{ fileId: expect.any(Number), tableId: 'in.c-main.t' }]);
    expect(p.tables.size).toBe(0);
    expect(p.files.size).toBe(0);
  });

  it('failure after commit: metadata refused after a load into an existing table keeps the rows and says they are loaded', async () => {
    const p = project();
    p.tables.set('in.c-main.t', { rows: 5, typed: false, columns: ['id', 'name'], metadata: {} });
    p.fail('setTableMetadata', () => {
      throw ApplicationFailure.nonRetryable('metadata key refused', SapiErrorCode.VALIDATION);
    });
    const err = await failureOf(run(p, { mode: 'load', incremental: true, metadata: { owner: 'x' } }));
    expect(codeOf(err)).toBe(SapiErrorCode.VALIDATION);
    expect((err as WorkflowFailedError).cause?.message).toMatch(/^the rows were loaded into in\.c-main\.t, but its metadata was not set/);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(7);
    expect(p.callsOf('cleanUpImport')).toHaveLength(0);
  });

  it('failure after commit: metadata refused on a table the run created → the table goes again (no half-made table)', async () => {
    const p = project();
    p.fail('setTableMetadata', () => {
      throw ApplicationFailure.nonRetryable('metadata key refused', SapiErrorCode.VALIDATION);
    });
    const typedColumns = [
      { name: 'id', definition: { type: 'INTEGER' } },
      { name: 'name', definition: { type: 'VARCHAR' } },
    ];
    const err = await failureOf(run(p, { typedColumns, description: 'd' }));
    expect(codeOf(err)).toBe(SapiErrorCode.VALIDATION);
    expect(p.tables.size).toBe(0);
    expect(p.files.size).toBe(0);
  });
});

describe('importTableWorkflow: job deadline and extendDeadline', () => {
  it('a job still running at the deadline fails the run with SAPI_JOB_DEADLINE and keeps its file (it may still finish)', async () => {
    const p = project();
    p.holdJobs = true;
    const err = await failureOf(run(p, { source: BIG }));
    expect(codeOf(err)).toBe(SapiErrorCode.JOB_DEADLINE);
    const job = [...p.jobs.values()][0]!;
    const last = p.callsOf('getJob').at(-1)!.at;
    // 6 hours of skipped time
    expect(last - job.createdAt).toBeGreaterThanOrEqual(6 * HOUR - 60_000);
    expect(p.files.size).toBe(1);
    expect(p.callsOf('cleanUpImport')).toHaveLength(0);
  });

  it('extendDeadline moves the deadline of the job being polled: a job longer than the first deadline completes', async () => {
    const p = project();
    p.jobRunsMs = 2 * HOUR;
    const { result, failure, seen } = await runWith(p, { source: BIG, polling: { deadlineMs: HOUR } }, async (handle) => {
      await p.waitFor('getJob');
      const before = await handle.query(progressQuery);
      const until = before.deadlineAt! + 2 * HOUR;
      const answered = await handle.executeUpdate(extendDeadlineUpdate, { args: [{ until }] });
      return { before, answered, until };
    });
    expect(failure).toBeUndefined();
    expect(result?.importedRowsCount).toBe(1000);
    expect(seen.answered.deadlineAt).toBe(seen.until);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(1000);
  });

  it('extendDeadline refusals: a time not later than the deadline, in the past, or not a time; nothing changes', async () => {
    const p = project();
    p.jobRunsMs = 30 * 60 * 1000;
    const { result, seen } = await runWith(p, { source: BIG }, async (handle) => {
      await p.waitFor('getJob');
      const { deadlineAt } = await handle.query(progressQuery);
      const refusals: string[] = [];
      for (const until of [deadlineAt! - 1000, 1000, 'tomorrow']) {
        refusals.push(await refusalOf(handle.executeUpdate(extendDeadlineUpdate, { args: [{ until }] })));
      }
      return { refusals, deadlineAt, after: (await handle.query(progressQuery)).deadlineAt };
    });
    expect(seen.refusals[0]).toMatch(/is not later than the current deadline/);
    expect(seen.refusals[1]).toMatch(/is in the past/);
    expect(seen.refusals[2]).toMatch(/until must be an ISO time or ms since epoch/);
    expect(seen.after).toBe(seen.deadlineAt);
    expect(result?.importedRowsCount).toBe(1000);
  });

  it('extendDeadline is refused while no job is polled (during the upload)', async () => {
    const p = project().hold('uploadFile');
    const { result, seen } = await runWith(p, { source: BIG }, async (handle) => {
      await p.waitFor('uploadFile');
      const refusal = await refusalOf(handle.executeUpdate(extendDeadlineUpdate, { args: [{ until: Date.now() + 10 * HOUR }] }));
      p.open('uploadFile');
      return refusal;
    });
    expect(seen).toBe('no Storage job is being polled');
    expect(result?.importedRowsCount).toBe(1000);
  });
});

describe('importTableWorkflow: cancel (update)', () => {
  it('while the job is polled: the run ends SAPI_CANCELLED, the job and its file are left to the service', async () => {
    const p = project();
    p.holdJobs = true;
    const { failure, seen } = await runWith(p, { source: BIG }, async (handle) => {
      await p.waitFor('getJob');
      return handle.executeUpdate(transferCancelUpdate, { args: [{ reason: 'operator' }] });
    });
    expect(seen.cancelling).toBe('operator');
    expect(codeOf(failure)).toBe(SapiErrorCode.CANCELLED);
    expect(String((failure as WorkflowFailedError).cause?.message)).toContain('cancelled: operator');
    expect(p.files.size).toBe(1);
    expect(p.callsOf('cleanUpImport')).toHaveLength(0);
  });

  it('during the upload: the upload is cancelled and what the run created (file, bucket) is removed', async () => {
    const p = project().hold('uploadFile');
    const { failure } = await runWith(p, { source: BIG, bucketId: 'in.c-new', createBucket: true }, async (handle) => {
      await p.waitFor('uploadFile');
      await handle.executeUpdate(transferCancelUpdate, { args: [{}] });
      p.open('uploadFile');
    });
    expect(codeOf(failure)).toBe(SapiErrorCode.CANCELLED);
    expect(p.files.size).toBe(0);
    expect(p.buckets.has('in.c-new')).toBe(false);
    expect(p.tables.size).toBe(0);
    expect(p.jobs.size).toBe(0);
  });

  it('while the short path prepares: the cancel acts after prepareImport, before anything is uploaded', async () => {
    const p = project().hold('prepareImport');
    const { failure } = await runWith(p, { bucketId: 'in.c-new', createBucket: true }, async (handle) => {
      await p.waitFor('prepareImport');
      await handle.executeUpdate(transferCancelUpdate, { args: [{ reason: 'stop' }] });
      p.open('prepareImport');
    });
    expect(codeOf(failure)).toBe(SapiErrorCode.CANCELLED);
    expect(p.callsOf('uploadAndStartJob')).toHaveLength(0);
    expect(p.files.size).toBe(0);
    expect(p.buckets.has('in.c-new')).toBe(false);
  });

  it('a cancellation request (workflow cancel) while the short path prepares: the progress says so until the run acts on it', async () => {
    const p = project().hold('prepareImport');
    const { failure, seen } = await runWith(p, { bucketId: 'in.c-new', createBucket: true }, async (handle) => {
      await p.waitFor('prepareImport');
      await handle.cancel();
      const progress = await handle.query(progressQuery);
      p.open('prepareImport');
      return progress;
    });
    expect(seen).toMatchObject({ phase: 'checking', cancelling: 'cancellation requested' });
    expect(failure).toBeDefined();
    expect(p.callsOf('uploadAndStartJob')).toHaveLength(0);
    expect(p.buckets.has('in.c-new')).toBe(false);
  });

  it('refusals: a reason that is not a string; a cancel once the job ended (setting metadata)', async () => {
    const p = project();
    p.holdJobs = true;
    const { failure, seen } = await runWith(p, { source: BIG, metadata: { k: 'v' } }, async (handle) => {
      await p.waitFor('getJob');
      const bad = await refusalOf(handle.executeUpdate(transferCancelUpdate, { args: [{ reason: 5 as unknown as string }] }));
      // the metadata step is past cancelling: hold it, let the job end, then ask
      p.hold('setTableMetadata');
      p.release();
      await p.waitFor('setTableMetadata');
      const late = await refusalOf(handle.executeUpdate(transferCancelUpdate, { args: [{}] }));
      p.open('setTableMetadata');
      return { bad, late };
    });
    expect(seen.bad).toBe('reason must be a string');
    expect(seen.late).toBe('too late to cancel: the run is past its Storage job');
    expect(failure).toBeUndefined();
    expect(p.tables.get('in.c-main.t')?.rows).toBe(1000);
  });

  it('a second cancel is refused while the first is acted on', async () => {
    const p = project().hold('uploadFile');
    const { failure, seen } = await runWith(p, { source: BIG }, async (handle) => {
      await p.waitFor('uploadFile');
      // the clean-up after the cancel is held: the run is still cancelling when the second cancel comes
      p.hold('cleanUpImport');
      await handle.executeUpdate(transferCancelUpdate, { args: [{ reason: 'first' }] });
      await p.waitFor('cleanUpImport');
      const second = await refusalOf(handle.executeUpdate(transferCancelUpdate, { args: [{ reason: 'second' }] }));
      p.open('cleanUpImport');
      p.open('uploadFile');
      return second;
    });
    expect(seen).toBe('already being cancelled (first)');
    expect(codeOf(failure)).toBe(SapiErrorCode.CANCELLED);
  });
});

describe('importTableWorkflow: a one-hour Storage API outage in each phase ends COMPLETED (issue 36)', () => {
  // every call is retried for the run's outage budget (1 hour by default) beyond its own time, not a count of attempts
  const phases: Array<[string, ActivityName, Partial<ImportTableInput>]> = [
    ['checking and preparing (short path)', 'prepareImport', {}],
    ['uploading and starting the job (short path)', 'uploadAndStartJob', {}],
    ['uploading (long path)', 'uploadFile', { source: BIG }],
    ['starting the job (long path)', 'createTableAsync', { source: BIG }],
    ['polling the job', 'getJob', { source: BIG }],
  ];
  it.each(phases)('%s', async (_phase, activity, input) => {
    const p = project();
    p.jobRunsMs = 60_000;
    const started = await env.currentTimeMs();
    p.fail(activity, outage(started, started + HOUR));
    const result = await run(p, input);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(result.importedRowsCount);
    expect(p.jobs.size).toBe(1);
    expect(p.files.size).toBe(1);
    // the outage was waited out: the activity kept being retried through the whole hour
    expect(p.callsOf(activity).at(-1)!.at).toBeGreaterThanOrEqual(started + HOUR);
  });

  it("an outage longer than a small budget ends the run with the outage's error, and what it created is removed", async () => {
    const p = project();
    const started = await env.currentTimeMs();
    p.fail('uploadAndStartJob', outage(started, started + HOUR));
    const { failure } = await runWith(p, { bucketId: 'in.c-new', createBucket: true, outageBudgetMs: 5 * 60_000 }, async () => undefined);
    expect(codeOf(failure)).toBe(SapiErrorCode.MAINTENANCE);
    expect(String((failure as Error & { cause?: Error }).cause?.message)).toMatch(
      /uploadAndStartJob gave up: the service stayed unavailable for the run's whole outage budget.*503/,
    );
    // retried for about the budget (plus the call's own time), not the hour
    const last = p.callsOf('uploadAndStartJob').at(-1)!.at;
    expect(last - started).toBeGreaterThanOrEqual(5 * 60_000);
    expect(last - started).toBeLessThan(15 * 60_000);
    // nothing half done: no job, the prepared file and the bucket this run created removed
    expect(p.jobs.size).toBe(0);
    expect(p.files.size).toBe(0);
    expect(p.buckets.has('in.c-new')).toBe(false);
  });

  it('while it lasts, the progress query says which call waits, its attempt, its last failure and since when; cleared once the call succeeds', async () => {
    const p = project();
    p.jobRunsMs = 60_000;
    const started = await env.currentTimeMs();
    p.fail('getJob', outage(started, started + HOUR));
    const { result, seen } = await runWith(p, { source: BIG }, async (handle, ending) => {
      // (time is not skipped until the test waits for the result: the first retries pass in real seconds)
      await p.waitFor('getJob', (c) => c.attempt >= 3);
      const waiting = (await handle.query(progressQuery)).waitingFor;
      await ending();
      // asked while the worker is still up (a query of an ended run is answered by replaying it)
      return { waiting, after: (await handle.query(progressQuery)).waitingFor };
    });
    expect(result?.importedRowsCount).toBe(1000);
    // the worker told the run of each failed attempt before Temporal retried it
    expect(seen.waiting).toMatchObject({ call: 'getJob', lastFailure: expect.stringMatching(/^SAPI_MAINTENANCE getJob failed: 503/) as unknown });
    expect(seen.waiting!.attempt).toBeGreaterThanOrEqual(2);
    expect(Date.parse(seen.waiting!.lastAttemptAt)).toBeGreaterThan(Date.parse(seen.waiting!.since));
    expect(Date.parse(seen.waiting!.budgetEndsAt!)).toBeGreaterThan(started + HOUR);
    expect(seen.after).toBeUndefined();
  });

  it("a 3-minute outage while polling is waited out (the poll is retried until the job's deadline)", async () => {
    const p = project();
    p.jobRunsMs = 60_000;
    const started = await env.currentTimeMs();
    p.fail('getJob', outage(started, started + 3 * 60_000));
    const result = await run(p, { source: BIG });
    expect(result.importedRowsCount).toBe(1000);
    expect(p.tables.get('in.c-main.t')?.rows).toBe(1000);
    expect(p.callsOf('getJob').some((c) => c.outcome === 'failed')).toBe(true);
  });
});
