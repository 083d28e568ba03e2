/**
 * A long Storage job is polled inside one heartbeating activity once it has been waited for `inActivityAfterMs`
 * (default 2 minutes): the history grows by a few events however long the job runs, the job's end is still seen on
 * the workflow's schedule, and a cancel still reaches the wait (through its heartbeat) and ends the run cancelled.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportTableResult, ImportTableResult, TransferProgress } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { historyShape } from '../../harness/history';
import { eventually } from '../../harness/processes';

describe('long jobs polled in one activity', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('long-job')));
  afterAll(() => env?.stop());
  // polls every 200–500 ms; in the activity after 1 s of waiting
  const polling = { initialMs: 200, maxMs: 500, inActivityAfterMs: 1000 };

  it('imports and exports through a 12 s job with its polls in one activity (a handful of events, not ten per poll)', async () => {
    const source = join(env.dataDir, 'long.csv');
    writeFileSync(source, 'id,v\n1,a\n2,b\n3,c\n');
    env.emulator.faults.slowJob({ operationName: 'tableCreate', ms: 12_000, times: 1 });
    const imported = env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `long-import-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-long', createBucket: true, table: 't', polling }],
    });
    const handle = await imported;
    expect(((await handle.result()) as ImportTableResult).importedRowsCount).toBe(3);
    const shape = historyShape((await handle.fetchHistory()).events ?? []);
    expect(shape.activityTypes).toContain('awaitJob');
    // 12 s of polls at ≤ 500 ms in the workflow would be 24+ getJob calls and ~10 events each
    expect(shape.activityTypes.filter((t) => t === 'getJob').length).toBeLessThanOrEqual(3);
    expect(shape.events).toBeLessThan(60);
    expect((await env.emulator.readTable('in.c-long.t')).rows).toHaveLength(3);

    env.emulator.faults.slowJob({ operationName: 'tableExport', ms: 6_000, times: 1 });
    const exported = await env.client.workflow.execute('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `long-export-${Date.now()}`,
      args: [{ tableId: 'in.c-long.t', destination: join(env.dataDir, 'out', 't.csv'), polling }],
    });
    expect((exported as ExportTableResult).bytes).toBeGreaterThan(0);
  });

  it('ends an import cancelled while its job is awaited in the activity', async () => {
    const source = join(env.dataDir, 'cancel.csv');
    writeFileSync(source, 'id\n1\n');
    env.emulator.faults.slowJob({ operationName: 'tableCreate', ms: 60_000, times: 1 });
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `long-cancel-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-long', table: 'cancelled', polling }],
    });
    await eventually(async () => {
      const described = await handle.describe();
      return (described.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'awaitJob');
    }, 60_000, 'the job was never awaited in the activity');
    expect((await handle.query<TransferProgress>('progress')).phase).toBe('importing');
    await handle.cancel();
    await expect(handle.result()).rejects.toMatchObject({ cause: { name: 'CancelledFailure' } });
    expect((await handle.describe()).status.name).toBe('CANCELLED');
  });
});
