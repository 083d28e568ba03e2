import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import type { StorageClient } from '../storage-api';
import { activityMeter, recordJobWait, SeenJobs } from '../observability/metrics';

/**
 * The activity dependencies with every Storage client's `getJob` observed: a job seen ended records its wait
 * ({@link recordJobWait}, from the job's own `createdTime`/`endTime`, which the activities' job summaries leave
 * out) on the running activity's metric meter. Whichever worker polls a job last records it, so replicas need not
 * share state. Everything else passes through; `close` closes the original clients.
 */
export function withJobTiming(deps: ActivityDeps, seen: SeenJobs = new SeenJobs()): ActivityDeps {
  const observed = new Map<string, StorageClient>();
  return {
    ...deps,
    storage(connection) {
      const name = connection ?? '';
      let client = observed.get(name);
      if (!client) {
        const inner = deps.storage(connection);
        client = {
          ...inner,
          async getJob(input) {
            const job = await inner.getJob(input);
            try {
              recordJobWait(activityMeter(Context.current().info), job, seen);
            } catch {
              /* outside an activity, or the metric failed: the job is what matters */
            }
            return job;
          },
        };
        observed.set(name, client);
      }
      return client;
    },
  };
}
