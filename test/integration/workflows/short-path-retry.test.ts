/**
 * The short path's second activity (`uploadAndStartJob`) retried after its job started: the retry finds the job of
 * the earlier attempt before it uploads anything. Here the earlier attempt's job started (its answer lost as a 500
 * and the job list unreachable for a while, so the attempt failed), and the prepared file's credentials expire before
 * the retry: uploading again would fail on them, send the workflow to a fresh file and a second load job, and load
 * the rows twice.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportTableResult } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { historyShape } from '../../harness/history';
import { listJobs, receiptsWhere } from '../../harness/matrix/checks';

describe('a retried short-path upload whose job already started', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('short-retry')));
  afterAll(() => env?.stop());

  it("adopts the earlier attempt's job instead of uploading again: one job, the rows once", async () => {
    const base = join(env.dataDir, 'base.csv');
    writeFileSync(base, 'id,v\n1,a\n');
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `short-retry-base-${Date.now()}`,
      args: [{ source: base, bucketId: 'in.c-retry', createBucket: true, table: 't' }],
    });

    const source = join(env.dataDir, 'more.csv');
    writeFileSync(source, 'id,v\n2,b\n3,c\n');
    // fresh for 4 s (the client refuses credentials within 5 minutes of their expiry)
    env.emulator.faults.expireCredentials({ access: 'upload', expiresInSeconds: 304, times: 1 });
    env.emulator.faults.add({
      method: 'POST',
      path: '/tables/in\\.c-retry\\.t/import-async$',
      times: 1,
      action: { type: 'status-after-success', status: 500 },
    });
    env.emulator.faults.add({ method: 'GET', path: '^/v2/storage/jobs$', untilMs: 20_000, action: { type: 'status', status: 503 } });
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `short-retry-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-retry', table: 't', mode: 'load', incremental: true, polling: { initialMs: 200 } }],
    });
    const result = (await handle.result()) as ImportTableResult;
    expect(result.importedRowsCount).toBe(2);
    const ids = (await env.emulator.readTable('in.c-retry.t')).rows.map((r) => r[0]).sort();
    expect(ids).toEqual(['1', '2', '3']);
    expect((await listJobs(env.emulator)).filter((j) => j.operationName === 'tableImport' && j.tableId === 'in.c-retry.t')).toHaveLength(1);
    const events = (await handle.fetchHistory()).events ?? [];
    // the retry happened, and the run went no other way (no fresh file, no second job)
    expect(events.find((e) => e.activityTaskStartedEventAttributes && (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1)).toBeDefined();
    // the retry saw the job end and wrote the load's receipt itself: one row
    expect(historyShape(events).activityTypes).toEqual(['prepareImport', 'uploadAndStartJob']);
    expect((await receiptsWhere(env.emulator, 'workflow_id', handle.workflowId)).map((r) => [r.tableId, r.jobId, r.rows])).toEqual([
      ['in.c-retry.t', result.jobId, 2],
    ]);
  });
});
