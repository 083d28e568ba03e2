import { Context } from '@temporalio/activity';
import { activityAttemptDeadlineMs } from '../http';
import { toApplicationFailure } from '../errors';
import type { ProgressReport } from '../contracts/transfer';

/**
/**
 * How often a running activity re-sends its last heartbeat at least (ms): every activity heartbeats while it runs, so
 * a worker that dies is noticed within the activity's heartbeat timeout, not its start-to-close timeout (minutes).
 * See {@link keepAliveIntervalMs}.
 */
export const KEEPALIVE_INTERVAL_MS = 2_000;
/** Longest time a heartbeat (a resume point) waits before the worker sends it to the server (its `maxHeartbeatThrottleInterval`). */
export const WORKER_HEARTBEAT_THROTTLE = '3 seconds';
/** The share of a heartbeat timeout of seconds between two keep-alive beats (4 s for 10 s). */
const KEEPALIVE_TIMEOUT_SHARE = 0.4;
/** From this heartbeat timeout on, the keep-alive beats once per 80 % of it (less at least a minute of slack). */
const LONG_HEARTBEAT_TIMEOUT_MS = 5 * 60_000;

/**
 * The keep-alive interval of an activity whose heartbeat timeout is `heartbeatTimeoutMs`: for a timeout of seconds
 * {@link KEEPALIVE_TIMEOUT_SHARE} of it, between {@link KEEPALIVE_INTERVAL_MS} and a minute (a late beat on a busy
 * event loop must not cost the attempt; a beat more often only costs a call into the SDK, whose throttle sends at most
 * one per 3 s); for a timeout of minutes (`awaitJob`'s 10) 80 % of it less at least a minute of slack: one every 8
 * minutes, ~7.5 an hour, each a billed action on Temporal Cloud (every 2 s it was one per 3 s that reached the server,
 * ~1,200 an hour). Without a timeout: the short interval (the SDK throttles it to its default).
 */
export function keepAliveIntervalMs(heartbeatTimeoutMs: number | undefined): number {
  if (!heartbeatTimeoutMs || heartbeatTimeoutMs <= 0) return KEEPALIVE_INTERVAL_MS;
  if (heartbeatTimeoutMs >= LONG_HEARTBEAT_TIMEOUT_MS) return Math.min(0.8 * heartbeatTimeoutMs, heartbeatTimeoutMs - 60_000);
  return Math.min(60_000, Math.max(KEEPALIVE_INTERVAL_MS, heartbeatTimeoutMs * KEEPALIVE_TIMEOUT_SHARE));
}

/** The last details each running activity heartbeated (what the keep-alive re-sends). */
const lastDetails = new WeakMap<Context, { details: unknown }>();
/** When each running attempt's body started (this process's clock): its start-to-close counts from about then. */
const startedAt = new WeakMap<Context, number>();

/**
 * Runs an activity body and turns whatever it throws into an `ApplicationFailure` typed by our error code. While
 * it runs, the activity heartbeats every {@link keepAliveIntervalMs} of its heartbeat timeout, re-sending the last
 * details given to {@link heartbeat} or {@link noteHeartbeat} (or the previous attempt's, so a keep-alive never
 * erases a resume point).
 */
export async function asActivity<T>(body: () => Promise<T>): Promise<T> {
  const context = activeContext();
  if (context) startedAt.set(context, Date.now());
  const timer = context
    ? setInterval(
        () => context.heartbeat(lastDetails.get(context)?.details ?? context.info.heartbeatDetails),
        keepAliveIntervalMs(context.info.heartbeatTimeoutMs),
      )
    : undefined;
  try {
    return await body();
  } catch (err) {
    throw toApplicationFailure(err);
  } finally {
    clearInterval(timer);
  }
}

/** Heartbeats `details` (the resume point of a retry) and keeps them for the keep-alive of {@link asActivity}. */
export function heartbeat(details: unknown, context: Context = Context.current()): void {
  lastDetails.set(context, { details });
  context.heartbeat(details);
}

/**
 * Keeps `details` for the next keep-alive of {@link asActivity} without heartbeating now: for details only shown
 * (a long job's status), where a heartbeat per change would be a billed action each.
 */
export function noteHeartbeat(details: unknown, context: Context = Context.current()): void {
  lastDetails.set(context, { details });
}

/**
 * A marker unique to this activity (stable across its attempts): sent as `X-KBC-RunId` on the requests that create
 * jobs or files, so a retry after a lost response can prove which job or file is its own (see `reconcile.ts`).
 */
export function activityMarker(): string {
  const info = Context.current().info;
  const run = info.workflowExecution?.runId ?? info.activityId;
  return `sapi-temporal.${run}.${info.activityId}`;
}

/**
 * The end of the running activity attempt (ms since epoch; see `activityAttemptDeadlineMs`), what in-process retries
 * must finish by; undefined outside an activity body run by {@link asActivity}, or without timeouts.
 */
export function activityDeadline(): number | undefined {
  const context = activeContext();
  const started = context && startedAt.get(context);
  return context && started !== undefined ? activityAttemptDeadlineMs(context.info, started) : undefined;
}

function activeContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called outside an activity (unit tests of the body)
  }
}

/** Details of the last heartbeat of a previous attempt (what a retry resumes from), if any. */
export function lastHeartbeat<T>(): T | undefined {
  return Context.current().info.heartbeatDetails as T | undefined;
}

/**
 * A heartbeat that reaches the SDK at most every `intervalMs` unless forced (`0`: every call; the SDK throttles what
 * reaches the server further). Keeps the details for the keep-alive of {@link asActivity}, like {@link heartbeat}.
 */
export function throttledHeartbeat(intervalMs: number, context: Context = Context.current()): (details: unknown, force?: boolean) => void {
  let lastBeatAt = 0;
  return (details, force = false) => {
    const now = Date.now();
    if (!force && intervalMs > 0 && now - lastBeatAt < intervalMs) return;
    lastBeatAt = now;
    heartbeat(details, context);
  };
}

/**
 * Heartbeats `state` on every call (the SDK throttles what reaches the server; our worker sends at least every
 * 3 s), with the byte count under `progress`: `{...state, progress: {bytes, …}}`. Whoever
 * wants live bytes reads the pending activity's heartbeat details (`sapi-temporal` follow/status, the Temporal UI's
 * pending activities); nothing reaches history per report. A resume reads the state's
 * own fields and ignores `progress`.
 */
export function progressReporter(): (state: unknown, report: ProgressReport, force?: boolean) => void {
  const context = Context.current();
  const beat = throttledHeartbeat(0, context);
  return (state, report) => {
    beat(state !== null && typeof state === 'object' && !Array.isArray(state) ? { ...state, progress: report } : state);
  };
}
