/**
 * A long Storage job is polled inside one heartbeating activity once it has been waited for `inActivityAfterMs`
 * (default 2 minutes): the history grows by a few events however long the job runs, the job's end is still seen on
 * the workflow's schedule, and a cancel still reaches the wait (through its heartbeat) and ends the run cancelled.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportTableResult, ImportTableResult, TransferProgress } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { historyShape, type HistoryShape } from '../../harness/history';
import { eventually } from '../../harness/processes';

describe('long jobs polled in one activity', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('long-job')));
  afterAll(() => env?.stop());
  // polls every 200–500 ms; in the activity after 1 s of waiting
  const polling = { initialMs: 200, maxMs: 500, inActivityAfterMs: 1000 };

  /** Resolves once the emulator has answered `count` polls of the job it holds for `operationName`. */
  async function heldJobPolled(operationName: string, count: number): Promise<void> {
    const job = await env.emulator.faults.jobHeld(operationName);
    const polls = () => env.emulator.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/jobs/${job.id}`)).length;
    await eventually(() => polls() >= count, 120_000, `the held ${operationName} job ${job.id} was polled ${polls()} times, not ${count}`);
  }

  it('imports and exports through jobs polled a dozen times, their polls in one activity (a handful of events, not ten per poll)', async () => {
    const source = join(env.dataDir, 'long.csv');
    writeFileSync(source, 'id,v\n1,a\n2,b\n3,c\n');
    // the job runs until it has been polled 12 times (6 s at 500 ms)
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `long-import-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-long', createBucket: true, table: 't', polling }],
    });
    await heldJobPolled('tableCreate', 12);
    env.emulator.faults.releaseJobs('tableCreate');
    expect(((await handle.result()) as ImportTableResult).importedRowsCount).toBe(3);
    const shape = historyShape((await handle.fetchHistory()).events ?? []);
    expect(shape.activityTypes).toContain('awaitJob');
    // 12 polls in the workflow would be 12 getJob calls and ~10 events each
    expect(shape.activityTypes.filter((t) => t === 'getJob').length).toBeLessThanOrEqual(3);
    expect(shape.events).toBeLessThan(60);
    expect((await env.emulator.readTable('in.c-long.t')).rows).toHaveLength(3);

    env.emulator.faults.holdJob({ operationName: 'tableExport', times: 1 });
    const exportId = `long-export-${Date.now()}`;
    const exporting = env.client.workflow.execute('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: exportId,
      args: [{ tableId: 'in.c-long.t', destination: join(env.dataDir, 'out', 't.csv'), polling }],
    });
    const exportHandle = () => env.client.workflow.getHandle(exportId).describe();
    // the export's job runs until the run waits for it in the activity
    await heldJobPolled('tableExport', 1);
    await eventually(
      async () => ((await exportHandle()).raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'awaitJob'),
      60_000,
      'the export job was never awaited in the activity',
    );
    env.emulator.faults.releaseJobs('tableExport');
    expect(((await exporting) as ExportTableResult).bytes).toBeGreaterThan(0);
  });

  it('ends an import cancelled while its job is awaited in the activity', async () => {
    const source = join(env.dataDir, 'cancel.csv');
    writeFileSync(source, 'id\n1\n');
    // the job runs until the test releases it, after the run was cancelled
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `long-cancel-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-long', table: 'cancelled', polling }],
    });
    await eventually(
      async () => {
        const described = await handle.describe();
        return (described.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'awaitJob');
      },
      60_000,
      'the job was never awaited in the activity',
    );
    expect((await handle.query<TransferProgress>('progress')).phase).toBe('importing');
    await handle.cancel();
    await expect(handle.result()).rejects.toMatchObject({ cause: { name: 'CancelledFailure' } });
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    env.emulator.faults.releaseJobs('tableCreate');
  });

  it("keeps at most a quarter of a worker's activity slots waiting on jobs: the rest poll on timers", async () => {
    // 4 activity slots: one awaitJob waits, the others answer after one poll and their runs wait on timers
    const busy = await startSapiTestEnv('long-job-busy', { env: { SAPI_MAX_CONCURRENT_ACTIVITIES: '4' } });
    try {
      env.emulator.faults.clear();
      // the three jobs run until one run has been answered early and waited on its own timer before its next awaitJob
      busy.emulator.faults.holdJob({ operationName: 'tableCreate', times: 3 });
      const runs = await Promise.all(
        [1, 2, 3].map((n) => {
          const source = join(busy.dataDir, `busy-${n}.csv`);
          writeFileSync(source, `id\n${n}\n`);
          return busy.client.workflow.start('importTableWorkflow', {
            taskQueue: busy.taskQueue,
            workflowId: `long-busy-${n}-${Date.now()}`,
            args: [{ source, bucketId: 'in.c-busy', createBucket: true, table: `t${n}`, polling }],
          });
        }),
      );
      const answeredEarly = (shape: HistoryShape) => shape.activityTypes.filter((t) => t === 'awaitJob').length > 1 && shape.timers > 0;
      await eventually(
        async () => (await Promise.all(runs.map(async (r) => answeredEarly(historyShape((await r.fetchHistory()).events ?? []))))).some(Boolean),
        120_000,
        'no run was answered early and waited on a timer',
      );
      busy.emulator.faults.releaseJobs('tableCreate');
      const results = (await Promise.all(runs.map((r) => r.result()))) as ImportTableResult[];
      expect(results.map((r) => r.importedRowsCount)).toEqual([1, 1, 1]);
      const shapes = await Promise.all(runs.map(async (r) => historyShape((await r.fetchHistory()).events ?? [])));
      // every run used the activity; at least one was answered early and waited on its own timers in between
      for (const shape of shapes) expect(shape.activityTypes).toContain('awaitJob');
      expect(shapes.some(answeredEarly)).toBe(true);
    } finally {
      await busy.stop();
    }
  });
});
