import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { NON_RETRYABLE_ERROR_CODES } from '../errors';
import { activityMeter, failureType, recordActivityFailure, recordActivityResult, SeenJobs } from './metrics';

/**
 * Activity interceptors that record the plugin's metrics from what every activity receives, returns and throws
 * (see `metrics.ts`), on the activity context's metric meter: the metrics go wherever the worker runtime sends the
 * SDK's own (its Prometheus endpoint with `SAPI_METRICS_ADDRESS`), tagged `namespace`, `task_queue` and
 * `activity_type` like the SDK's own. Recording never fails an activity.
 */
export function metricsInterceptors(seen: SeenJobs = new SeenJobs()): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        let result: unknown;
        try {
          result = await next(input);
        } catch (err) {
          safely(() => recordActivityFailure(activityMeter(ctx.info), err));
          safely(() => logWaiting(ctx, err));
          throw err;
        }
        safely(() => recordActivityResult(activityMeter(ctx.info), ctx.info.activityType, result, seen));
        return result;
      },
    },
  });
}

/**
 * One WARN line per failed attempt that Temporal retries (an outage being waited out; at most about one a minute
 * with the retry backoff): the call, its attempt, the failure, since when it has been failing and how much of its
 * outage budget is left (its schedule-to-close).
 */
export function waitingLine(info: Context['info'], err: unknown, now: number = Date.now()): string | undefined {
  const type = failureType(err);
  const nonRetryable = (err as { nonRetryable?: unknown } | null)?.nonRetryable === true || NON_RETRYABLE_ERROR_CODES.includes(type) || type === 'CANCELLED';
  if (nonRetryable) return undefined;
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  const since = new Date(info.scheduledTimestampMs).toISOString();
  const budgetEnd = info.scheduleToCloseTimeoutMs ? info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs : undefined;
  const left = budgetEnd === undefined ? 'no limit' : `${Math.max(0, Math.round((budgetEnd - now) / 60_000))} min of its outage budget left`;
  return `${info.activityType} attempt ${info.attempt} failed [${type}] ${message}; retried by Temporal, waiting since ${since}, ${left}`;
}

function logWaiting(ctx: Context, err: unknown): void {
  const line = waitingLine(ctx.info, err);
  if (line) ctx.log.warn(line, { attempt: ctx.info.attempt, activityType: ctx.info.activityType });
}

function safely(record: () => void): void {
  try {
    record();
  } catch {
    /* a metric that cannot be recorded is not the activity's failure */
  }
}
