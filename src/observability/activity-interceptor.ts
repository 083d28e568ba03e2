import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { NON_RETRYABLE_ERROR_CODES } from '../errors';
import { CALL_WAITING_SIGNAL, CALL_WAITING_WORKFLOW_TYPES, reportsAttempt, type CallWaiting } from '../contracts/call-waiting';
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
          throw err;
        }
        safely(() => recordActivityResult(activityMeter(ctx.info), ctx.info.activityType, result, seen));
        return result;
      },
    },
  });
}

/**
 * Activity interceptors that make an outage visible while Temporal retries a failed call: one WARN line per failed
 * attempt that will be retried ({@link waitingLine}), and the run told where it waits (`waitingFor` in its progress):
 * a {@link CALL_WAITING_SIGNAL} to the activity's workflow on the attempts {@link reportsAttempt} picks (about 17 in
 * an hour's outage), for this package's workflows only. Telling the run never fails or delays the activity's own
 * failure by more than a few seconds.
 */
export function outageInterceptors(signalTimeoutMs = 5_000): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        try {
          return await next(input);
        } catch (err) {
          const waiting = safelyGet(() => callWaiting(ctx.info, err));
          if (waiting) {
            ctx.log.warn(waitingLine(waiting), { attempt: ctx.info.attempt, activityType: ctx.info.activityType });
            const run = ctx.info.workflowExecution;
            if (run && !ctx.info.isLocal && CALL_WAITING_WORKFLOW_TYPES.has(ctx.info.workflowType ?? '') && reportsAttempt(ctx.info.attempt))
              await tellRun(ctx, run, waiting, signalTimeoutMs);
          }
          throw err;
        }
      },
    },
  });
}

/**
 * Where a failed attempt leaves its call, when Temporal retries it (undefined for a failure that ends the call: a
 * non-retryable type or a cancellation): the call, its attempt, the failure, since when the call waits and when its
 * outage budget (its schedule-to-close) ends.
 */
export function callWaiting(info: Context['info'], err: unknown): CallWaiting | undefined {
  const type = failureType(err);
  const nonRetryable = (err as { nonRetryable?: unknown } | null)?.nonRetryable === true || NON_RETRYABLE_ERROR_CODES.includes(type) || type === 'CANCELLED';
  if (nonRetryable) return undefined;
  const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  return {
    call: info.activityType,
    attempt: info.attempt,
    since: new Date(info.scheduledTimestampMs).toISOString(),
    lastAttemptAt: new Date(info.currentAttemptScheduledTimestampMs).toISOString(),
    lastFailure: `${type} ${message}`.slice(0, 500),
    ...(info.scheduleToCloseTimeoutMs ? { budgetEndsAt: new Date(info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs).toISOString() } : {}),
  };
}

/** The WARN line of a failed attempt: the call, its attempt, the failure, since when and how much budget is left. */
export function waitingLine(w: CallWaiting, now: number = Date.now()): string {
  const left =
    w.budgetEndsAt === undefined ? 'no limit' : `${Math.max(0, Math.round((Date.parse(w.budgetEndsAt) - now) / 60_000))} min of its outage budget left`;
  const [type, ...rest] = w.lastFailure.split(' ');
  return `${w.call} attempt ${w.attempt} failed [${type}] ${rest.join(' ')}; retried by Temporal, waiting since ${w.since}, ${left}`;
}

/** Signals the activity's run where it waits; a run that cannot be told (gone, Temporal slow) is logged, not failed. */
async function tellRun(ctx: Context, { workflowId, runId }: { workflowId: string; runId: string }, waiting: CallWaiting, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const signal = ctx.client.workflow.getHandle(workflowId, runId).signal(CALL_WAITING_SIGNAL, waiting);
    await Promise.race([signal, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)))]);
  } catch (err) {
    ctx.log.debug(`could not tell workflow ${workflowId} that ${waiting.call} waits: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

function safelyGet<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}

function safely(record: () => void): void {
  try {
    record();
  } catch {
    /* a metric that cannot be recorded is not the activity's failure */
  }
}
