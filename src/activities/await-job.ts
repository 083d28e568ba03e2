import { Context } from '@temporalio/activity';
import type { JobSummary } from '../contracts/transfer';
import { nextPollDelay, type PollSchedule } from '../contracts/poll-schedule';
import type { ActivityDeps } from './deps';
import { asActivity, noteHeartbeat } from './context';
import { summarizeJob } from './job-summary';

/** Input of {@link awaitJob}. */
export interface AwaitJobInput {
  connection?: string;
  jobId: number;
  /** When the wait for the job began (ms since epoch): the poll schedule's 25 % bound counts from there. */
  startedAt: number;
  /** Return the job as it is at this time (ms since epoch), ended or not: the workflow decides about the deadline. */
  deadlineAt: number;
  /** The workflow's poll count so far: the schedule carries on from it. */
  attempt: number;
  schedule?: Partial<PollSchedule>;
}

/** The `awaitJob` calls waiting in this process, per set of dependencies (one per worker). */
const waiting = new WeakMap<ActivityDeps, number>();

/**
 * How many `awaitJob` calls one worker keeps waiting at once: a quarter of its activity slots (`SAPI_MAX_CONCURRENT_ACTIVITIES`),
 * so jobs that run for hours never take the slots the transfers need.
 */
export function awaitJobLimit(deps: Pick<ActivityDeps, 'settings'>): number {
  return Math.max(1, Math.floor(deps.settings.worker.maxConcurrentActivities / 4));
}

/**
 * Polls a long job inside one activity, on the workflow's schedule (every `maxMs` at most, and within 25 % of the time
 * waited), heartbeating its status after each poll, until the job ends or `deadlineAt` comes; answers the job as
 * last seen. A job that runs for hours costs a few history events instead of about ten per poll, and a few heartbeats
 * an hour (the keep-alive's, one per 8 minutes with `AWAIT_JOB_HEARTBEAT_TIMEOUT_MS`; a poll only notes its status
 * for the next one). The run is cancelled at once; this activity learns of it at its next heartbeat sent (within
 * 8 minutes: its polls only read, so nothing is changed meanwhile); a worker that dies is noticed within the heartbeat
 * timeout and the retry starts polling again (polls read, never change, so a retry is harmless). When the worker
 * already has {@link awaitJobLimit} of them waiting, it answers after one poll: the workflow then waits a poll interval
 * on its own timer before it asks again.
 */
export function awaitJob(deps: ActivityDeps) {
  return (input: AwaitJobInput): Promise<JobSummary> =>
    asActivity(async () => {
      const context = Context.current();
      const storage = deps.storage(input.connection);
      const busy = (waiting.get(deps) ?? 0) >= awaitJobLimit(deps);
      if (busy) return summarizeJob(await storage.getJob({ jobId: input.jobId }));
      waiting.set(deps, (waiting.get(deps) ?? 0) + 1);
      try {
        for (let attempt = input.attempt; ; attempt++) {
          const job = summarizeJob(await storage.getJob({ jobId: input.jobId }));
          // shown with the next keep-alive (every 8 minutes with the 10-minute heartbeat timeout), not sent per poll
          noteHeartbeat({ jobId: job.id, status: job.status, polls: attempt - input.attempt + 1 });
          const now = Date.now();
          if ((job.status !== 'waiting' && job.status !== 'processing') || now >= input.deadlineAt) return job;
          await context.sleep(
            Math.max(1, nextPollDelay({ attempt, nowMs: now, elapsedMs: now - input.startedAt, deadlineAtMs: input.deadlineAt, schedule: input.schedule })),
          );
        }
      } finally {
        waiting.set(deps, (waiting.get(deps) ?? 1) - 1);
      }
    });
}
