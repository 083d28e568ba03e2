import { ActivityFailure, ApplicationFailure, TimeoutFailure, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import { SapiErrorCode, NON_RETRYABLE_ERROR_CODES } from '../errors';
import { DEFAULT_OUTAGE_BUDGET_MS } from '../contracts/transfer';

/** Start-to-close of a short Storage API call (prepare, start a job, poll, checks). */
const SHORT_CALL_MS = 5 * 60 * 1000;
/** Start-to-close of one attempt of an upload or a download. */
const TRANSFER_ATTEMPT_MS = 12 * 60 * 60 * 1000;

/**
 * How a call is retried: after 1 s, doubling up to a minute between attempts, as long as its time allows (no count of
 * attempts: an outage is waited out by time, whatever the service sends, `Retry-After` or not); never for the error
 * codes that mean the input is wrong.
 */
export function outageRetry(nonRetryable: readonly string[] = NON_RETRYABLE_ERROR_CODES): RetryPolicy {
  return { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: [...nonRetryable] };
}

/** The outage budget of a run's input (ms): a positive number, else the default (1 hour). */
export function outageBudget(ms: number | undefined): number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_OUTAGE_BUDGET_MS;
}

/**
 * Short Storage API calls (prepare, start a job, poll): a few minutes each, retried through an outage for up to the
 * run's outage budget (`budgetMs`) after the call's own time, typed non-retryables. They heartbeat while they run
 * (see `asActivity`), so a worker that dies mid-call is noticed within the heartbeat timeout and another worker takes
 * over (within ~10 s, not after the 5-minute start-to-close timeout).
 */
export function activityOptions(budgetMs: number = DEFAULT_OUTAGE_BUDGET_MS): ActivityOptions {
  return {
    startToCloseTimeout: SHORT_CALL_MS,
    scheduleToCloseTimeout: SHORT_CALL_MS + budgetMs,
    heartbeatTimeout: '10 seconds',
    retry: outageRetry(),
  };
}

/**
 * Polls of a started job: like {@link activityOptions}, but an outage is waited out for at least `atLeastMs` (the time
 * left to the job's deadline): a job that runs on the service is never given up for an outage of the API in front.
 */
export function pollOptions(budgetMs: number, atLeastMs: number): ActivityOptions {
  return activityOptions(Math.max(budgetMs, atLeastMs));
}

/**
 * How long `awaitJob` may go without a heartbeat reaching Temporal: 10 minutes. The activity heartbeats once per
 * 80 % of it (its keep-alive, every 8 minutes, about 7.5 an hour; a poll only notes the job's status for the next
 * one) whatever the poll rate: Temporal Cloud bills each heartbeat it receives as an action, so a job of hours costs
 * a few actions an hour, not one per poll. What it trades: a worker that dies while awaiting a job is noticed within 10 minutes (another worker then
 * resumes the wait; the job itself runs on the service all along), and the activity learns of a cancel at its next
 * heartbeat (the run does not wait for that: it is cancelled at once, the activity's last polls are read-only).
 */
export const AWAIT_JOB_HEARTBEAT_TIMEOUT_MS = 10 * 60_000;

/**
 * The activity that polls a long job until it ends or `deadlineAt` (ms since epoch, workflow time): its one attempt may
 * last until the deadline; it notes the job's status after every poll for its heartbeat (one every 8 minutes, see
 * {@link AWAIT_JOB_HEARTBEAT_TIMEOUT_MS}); an outage is waited out for the run's budget beyond that.
 */
export function awaitJobOptions(budgetMs: number, untilDeadlineMs: number): ActivityOptions {
  const attemptMs = Math.max(0, untilDeadlineMs) + SHORT_CALL_MS;
  return {
    startToCloseTimeout: attemptMs,
    scheduleToCloseTimeout: attemptMs + budgetMs,
    heartbeatTimeout: AWAIT_JOB_HEARTBEAT_TIMEOUT_MS,
    retry: outageRetry(),
  };
}

/**
 * Uploads and downloads: long, heartbeating (a dead worker is noticed within the heartbeat timeout and the retry
 * resumes from the last heartbeat), retried through an outage for up to `budgetMs` beyond one attempt's time.
 * Expired upload credentials are not retried here: they belong to the prepared file, so the workflow prepares again.
 * A download fetches its read credentials in every attempt, so for a download (`kind: 'download'`) an expiry is
 * retried like any transient fault and the retry resumes with fresh ones.
 */
export function transferOptions(taskQueue?: string, kind: 'upload' | 'download' = 'upload', budgetMs: number = DEFAULT_OUTAGE_BUDGET_MS): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: TRANSFER_ATTEMPT_MS,
    scheduleToCloseTimeout: TRANSFER_ATTEMPT_MS + budgetMs,
    heartbeatTimeout: '20 seconds',
    retry: outageRetry(kind === 'upload' ? [...NON_RETRYABLE_ERROR_CODES, SapiErrorCode.CREDENTIALS_EXPIRED] : NON_RETRYABLE_ERROR_CODES),
  };
}

/**
 * Short calls that must run where the sources are (checks of a local file, a small upload): {@link activityOptions} on
 * that queue, `alsoNonRetryable` codes coming back to the workflow at once.
 */
export function shortTransferOptions(
  taskQueue?: string,
  budgetMs: number = DEFAULT_OUTAGE_BUDGET_MS,
  alsoNonRetryable: readonly string[] = [],
): ActivityOptions {
  return {
    ...activityOptions(budgetMs),
    taskQueue,
    ...(alsoNonRetryable.length ? { retry: outageRetry([...NON_RETRYABLE_ERROR_CODES, ...alsoNonRetryable]) } : {}),
  };
}

/**
 * A call whose outage budget ran out (its schedule-to-close passed while Temporal retried it) as the run's failure:
 * the last failure's code and message, saying the budget was spent (Temporal reports the activity's retry state as
 * TIMEOUT, its cause the last failure or a schedule-to-close timeout over it). Any other error is returned as it is.
 */
export function budgetSpent(err: unknown): unknown {
  if (!(err instanceof ActivityFailure) || err.retryState !== 'TIMEOUT') return err;
  const timedOut = err.cause instanceof TimeoutFailure ? err.cause : undefined;
  if (timedOut && timedOut.timeoutType !== 'SCHEDULE_TO_CLOSE') return err;
  const last = timedOut ? timedOut.cause : err.cause;
  const type = last instanceof ApplicationFailure ? last.type : undefined;
  return ApplicationFailure.create({
    type: type ?? SapiErrorCode.SERVER_ERROR,
    message: `${err.activityType} gave up: the service stayed unavailable for the run's whole outage budget (outageBudgetMs); last failure: ${last?.message ?? err.message}`,
    nonRetryable: true,
    cause: last,
  });
}
