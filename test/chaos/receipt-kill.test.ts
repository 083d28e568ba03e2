import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import type { ImportTableResult } from '../../src/contracts/transfer';
import { DEFAULT_RECEIPTS_TABLE } from '../../src/contracts/receipts';
import { startSapiTestEnv, startWorkerProcess, type SapiTestEnv } from '../harness/sapi-env';
import { eventually } from '../harness/processes';
import { listJobs, receiptsWhere, tableRows } from '../harness/matrix/checks';

const EventType = temporal.api.enums.v1.EventType;

/**
 * Issue 42: a receipt is written exactly once per load. A small import's receipt is written by the short path's
 * `uploadAndStartJob` once it saw its job end. A worker killed after the receipt row is in the table but before that
 * activity completed: the retry on another worker finds the job the first attempt started (no second upload or job),
 * and writes the same receipt again, an upsert of the same row (its key is workflow id + run id + table + job id).
 */
describe('a worker killed while it writes a load receipt', () => {
  let env: SapiTestEnv;
  const children: ChildProcess[] = [];
  beforeAll(async () => (env = await startSapiTestEnv('receipt-kill', { worker: false })));
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  afterAll(() => env?.stop());

  async function startWorker(identity: string): Promise<ChildProcess> {
    const child = await startWorkerProcess(env, identity);
    children.push(child);
    return child;
  }

  it('leaves exactly one receipt row after the retry, and the table loaded once', async () => {
    const source = join(env.dataDir, 'receipted.csv');
    writeFileSync(source, `id\n${Array.from({ length: 25 }, (_, i) => i).join('\n')}\n`);
    // the receipt's last request (removing its uploaded file) is held: the row is in the table, the activity not done
    env.emulator.faults.add({ method: 'DELETE', path: '^/v2/storage/files/\\d+$', times: 1, action: { type: 'delay', ms: 20_000 } });
    const first = await startWorker('receipt-first');
    const workflowId = `receipt-kill-${Date.now()}`;
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId,
      args: [{ source, bucketId: 'in.c-rk', createBucket: true, table: 't', polling: { initialMs: 300, maxMs: 1000 } }],
    });
    await eventually(async () => (await receiptsWhere(env.emulator, 'workflow_id', workflowId)).length > 0, 90_000, 'the receipt row never appeared');
    first.kill('SIGKILL');
    await startWorker('receipt-second');
    const result = (await handle.result()) as ImportTableResult;

    expect(result).toMatchObject({ importedRowsCount: 25, receipt: { status: 'written', table: DEFAULT_RECEIPTS_TABLE } });
    expect(await tableRows(env.emulator, 'in.c-rk.t')).toHaveLength(25);
    const receipts = await receiptsWhere(env.emulator, 'workflow_id', workflowId);
    expect(receipts.map((r) => ({ tableId: r.tableId, jobId: r.jobId, rows: r.rows }))).toEqual([{ tableId: 'in.c-rk.t', jobId: result.jobId, rows: 25 }]);
    // the receipt was written twice (the first attempt's row, the retry's upsert) into one row
    const jobs = await listJobs(env.emulator);
    expect(jobs.filter((j) => j.operationName === 'tableCreate' && j.tableId === 'in.c-rk.t')).toHaveLength(1);
    expect(jobs.filter((j) => j.tableId === DEFAULT_RECEIPTS_TABLE && j.status === 'success').map((j) => j.operationName)).toEqual([
      'tableCreate',
      'tableImport',
    ]);
    // the second attempt of uploadAndStartJob did it, after the dead worker's heartbeat stopped; no writeReceipt
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduledOf = (name: string) =>
      events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes?.activityType?.name === name);
    expect(scheduledOf('writeReceipt')).toHaveLength(0);
    const scheduled = scheduledOf('uploadAndStartJob')[0];
    const started = events.find(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
    );
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(2);
  });
});
