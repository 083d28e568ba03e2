/**
 * What a long job's wait costs in heartbeats (issue 41 target 3): Temporal Cloud bills each heartbeat that reaches
 * the server, so `awaitJob` (heartbeat timeout 10 minutes) must not heartbeat per poll: a poll notes the job's status
 * for the keep-alive, which runs once per 80 % of the timeout. Activities with a timeout of seconds keep their 2 s
 * keep-alive (a late beat on a busy loop must not cost the attempt).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { awaitJob } from '../../../src/activities/await-job';
import { KEEPALIVE_INTERVAL_MS, keepAliveIntervalMs } from '../../../src/activities/context';
import { AWAIT_JOB_HEARTBEAT_TIMEOUT_MS } from '../../../src/workflows/options';

describe('keep-alive interval', () => {
  it('is 2 s for heartbeat timeouts of seconds and 80 % (at least a minute short) of a timeout of minutes', () => {
    expect(keepAliveIntervalMs(undefined)).toBe(KEEPALIVE_INTERVAL_MS);
    expect(keepAliveIntervalMs(10_000)).toBe(KEEPALIVE_INTERVAL_MS);
    expect(keepAliveIntervalMs(20_000)).toBe(KEEPALIVE_INTERVAL_MS);
    expect(keepAliveIntervalMs(2 * 60_000)).toBe(60_000);
    expect(keepAliveIntervalMs(AWAIT_JOB_HEARTBEAT_TIMEOUT_MS)).toBe(8 * 60_000);
    // about 7.5 heartbeats an hour of a long job's wait
    expect(3_600_000 / keepAliveIntervalMs(AWAIT_JOB_HEARTBEAT_TIMEOUT_MS)).toBe(7.5);
  });
});

describe('awaitJob', () => {
  it('polls a job 30 times without heartbeating per poll, and answers the ended job', async () => {
    let polls = 0;
    const storage = {
      getJob: async ({ jobId }: { jobId: number }) => {
        polls++;
        return { id: jobId, status: polls < 30 ? 'processing' : 'success', operationName: 'tableImport', results: { importedRowsCount: 3 } };
      },
    };
    const deps = { settings: { worker: { maxConcurrentActivities: 8 } }, storage: () => storage } as unknown as ActivityDeps;
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: AWAIT_JOB_HEARTBEAT_TIMEOUT_MS }, { logger: new DefaultLogger('ERROR') });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const now = Date.now();
    const job = await env.run(awaitJob(deps), {
      jobId: 7,
      startedAt: now,
      deadlineAt: now + 3_600_000,
      attempt: 1,
      schedule: { initialMs: 1, maxMs: 1, factor: 1 },
    });
    expect(job).toMatchObject({ id: 7, status: 'success' });
    expect(polls).toBe(30);
    // one heartbeat per poll before (30); now only the keep-alive's, every 8 minutes: none in a wait this short
    expect(beats).toEqual([]);
  });
});
