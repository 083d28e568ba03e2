import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { activityMeter, recordActivityFailure, recordActivityResult, SeenJobs } from './metrics';

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

function safely(record: () => void): void {
  try {
    record();
  } catch {
    /* a metric that cannot be recorded is not the activity's failure */
  }
}
