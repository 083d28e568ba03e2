import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { request } from 'undici';
import type { ImportTableResult, TransferProgress } from '../../src/contracts/transfer';
import { startSapiTestEnv, startWorkerProcess, type SapiTestEnv } from '../harness/sapi-env';
import { eventually } from '../harness/processes';

const EventType = temporal.api.enums.v1.EventType;

/** Issue 9, defect 5: a worker killed during a short Storage call is replaced within 30 s, not after 5 minutes. */
describe('a worker killed during a short Storage call', () => {
  let env: SapiTestEnv;
  const children: ChildProcess[] = [];
  beforeAll(async () => (env = await startSapiTestEnv('short-kill', { worker: false })));
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  afterAll(() => env?.stop());

  async function startWorker(identity: string): Promise<ChildProcess> {
    const child = await startWorkerProcess(env, identity);
    children.push(child);
    return child;
  }

  it('is taken over by another worker once its heartbeat stops (not after the start-to-close), and the table is created once', async () => {
    const source = join(env.dataDir, 'short.csv');
    writeFileSync(source, `id\n${Array.from({ length: 40 }, (_, i) => i).join('\n')}\n`);
    // tables-async answers slowly: the worker is killed while it waits for the answer (the job is created meanwhile)
    env.emulator.faults.add({ method: 'POST', path: 'tables-async$', times: 1, action: { type: 'delay', ms: 3_000 } });
    const first = await startWorker('short-first');
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `short-kill-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-short', createBucket: true, table: 't', polling: { initialMs: 300, maxMs: 1000 } }],
    });
    await eventually(async () => (await handle.query<TransferProgress>('progress')).phase === 'importing', 60_000, 'import never reached tables-async');
    first.kill('SIGKILL');
    await startWorker('short-second');
    const result = (await handle.result()) as ImportTableResult;
    expect(result.importedRowsCount).toBe(40);
    expect((await env.emulator.readTable('in.c-short.t')).rows).toHaveLength(40);

    // the attempt that completed the job's start (createTableAsync; uploadAndStartJob on the short path) is the second, and it started within 30 s of the kill
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.find(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        ['createTableAsync', 'uploadAndStartJob'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
    );
    const started = events.find(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
    );
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(2);
    // taken over because the dead worker's heartbeat stopped (a 10 s timeout), not after the 5-minute start-to-close
    expect(started?.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    // the first attempt's request created the job; the second found it by its marker instead of creating another
    const jobs = (await (
      await request(`${env.emulator.url}/v2/storage/jobs?limit=100`, { headers: { 'x-storageapi-token': env.emulator.token } })
    ).body.json()) as Array<{
      operationName: string;
      operationParams: { bucketId?: string };
    }>;
    expect(jobs.filter((j) => j.operationName === 'tableCreate' && j.operationParams.bucketId === 'in.c-short')).toHaveLength(1);
  });
});
