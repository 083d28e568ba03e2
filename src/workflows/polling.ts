import { ApplicationFailure, sleep } from '@temporalio/workflow';
import type { JobSummary, PollingOptions } from '../contracts/transfer';
import { nextPollDelay, type PollSchedule } from '../contracts/poll-schedule';
import { describeJobFailure, SapiErrorCode } from '../errors';

/** Default deadline for a Storage job (ms): 6 hours. */
export const DEFAULT_JOB_DEADLINE_MS = 6 * 60 * 60 * 1000;

/** After how long (ms) the polling of a job moves into one heartbeating activity (`PollingOptions.inActivityAfterMs`). */
export const DEFAULT_IN_ACTIVITY_AFTER_MS = 2 * 60 * 1000;

/** Polls a job inside one activity until it ends or `deadlineAt` (see the `awaitJob` activity). */
export type AwaitJob = (request: {
  jobId: number;
  attempt: number;
  startedAt: number;
  deadlineAt: number;
  schedule: Partial<PollSchedule>;
}) => Promise<JobSummary>;

/**
 * Polls a job with durable timers until it ends. Waits grow 1 s ×2 up to 20 s by default, and never exceed 25 % of
 * the time waited so far (so a job's end is noticed within max(1 s, 25 % of its duration)); the deadline ends the
 * workflow with a non-retryable `SAPI_JOB_DEADLINE` failure. A job in `error` (also right in the first answer)
 * ends it with a non-retryable `SAPI_JOB_FAILED` carrying the job's message, code and exceptionId.
 * `startedAt` (workflow time, ms) is when the wait began: a run continued-as-new passes the first run's, so the
 * deadline and the 25 % bound count from there, not from the new run. With `awaitJob`, a job still running after
 * `inActivityAfterMs` is polled on the same schedule inside one heartbeating activity, which answers when the job ends
 * or the deadline comes (an `extendDeadline` meanwhile: the next call waits for the new one).
 */
export async function waitForJob(
  first: JobSummary,
  getJob: (jobId: number) => Promise<JobSummary>,
  options: PollingOptions = {},
  onStatus: (job: JobSummary) => void = () => undefined,
  startedAt: number = Date.now(),
  awaitJob?: AwaitJob,
): Promise<JobSummary> {
  const inActivityAfter = options.inActivityAfterMs ?? DEFAULT_IN_ACTIVITY_AFTER_MS;
  // read again each turn: the `extendDeadline` update moves it while the job is polled
  const deadline = () => startedAt + (options.deadlineMs ?? DEFAULT_JOB_DEADLINE_MS);
  const schedule = { initialMs: options.initialMs, factor: options.factor, maxMs: options.maxMs, elapsedFraction: options.elapsedFraction };
  let job = first;
  let awaitedEarly = false;
  for (let attempt = 0; ; attempt++) {
    onStatus(job);
    if (job.status === 'success') return job;
    if (job.status === 'error') throw jobFailure(job);
    if (job.status !== 'waiting' && job.status !== 'processing') {
      throw ApplicationFailure.nonRetryable(`job ${job.id} reports an unknown status "${job.status}"`, SapiErrorCode.INVALID_RESPONSE, { jobId: job.id });
    }
    const now = Date.now();
    const deadlineAt = deadline();
    if (now >= deadlineAt) {
      throw ApplicationFailure.nonRetryable(
        `job ${job.id} (${job.operationName ?? 'job'}) still ${job.status} after ${Math.round((now - startedAt) / 1000)} s; ` +
          `deadline ${Math.round((deadlineAt - startedAt) / 1000)} s (polling.deadlineMs). The job may still finish on the service.`,
        SapiErrorCode.JOB_DEADLINE,
        { jobId: job.id, status: job.status },
      );
    }
    // the activity answers a running job only at the deadline, or at once when its worker has enough of them waiting:
    // then a poll interval passes on a timer here before it is asked again
    const delay = Math.max(1, nextPollDelay({ attempt, nowMs: now, elapsedMs: now - startedAt, deadlineAtMs: deadlineAt, schedule }));
    if (awaitJob && inActivityAfter >= 0 && now - startedAt >= inActivityAfter) {
      if (awaitedEarly) await sleep(delay);
      job = await awaitJob({ jobId: job.id, attempt, startedAt, deadlineAt: deadline(), schedule });
      awaitedEarly = (job.status === 'waiting' || job.status === 'processing') && Date.now() < deadline();
      continue;
    }
    await sleep(delay);
    job = await getJob(job.id);
  }
}

/**
 * A job that already ended well, as {@link waitForJob} would answer it (`onStatus` told of it); undefined for any other
 * status (then call `waitForJob`, which fails the run on an `error` and polls a running job).
 */
export function endedWell(job: JobSummary, onStatus: (job: JobSummary) => void): JobSummary | undefined {
  if (job.status !== 'success') return undefined;
  onStatus(job);
  return job;
}

function jobFailure(job: JobSummary): ApplicationFailure {
  const error = job.error ?? { message: 'job failed without a message' };
  return ApplicationFailure.create({
    type: SapiErrorCode.JOB_FAILED,
    message: describeJobFailure({ ...job, ...error }),
    nonRetryable: true,
    details: [{ jobId: job.id, code: error.code, exceptionId: error.exceptionId, message: error.message }],
  });
}
