/**
 * What a long job's wait costs in heartbeats (issue 41 target 3): Temporal Cloud bills each heartbeat that reaches
 * the server, so `awaitJob` (heartbeat timeout 10 minutes) must not heartbeat per poll: a poll notes the job's status
 * for the keep-alive, which runs once per 80 % of the timeout (its interval: keep-alive.test.ts).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { awaitJob } from '../../../src/activities/await-job';
import { AWAIT_JOB_HEARTBEAT_TIMEOUT_MS } from '../../../src/workflows/options';

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
