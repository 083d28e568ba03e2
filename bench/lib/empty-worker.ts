// The worker options of the bench's empty SDK worker (bench/empty-worker-child.ts), worked out in the bench process:
// the child itself loads the SDK and nothing of ours (our config module would bring zod and undici, ~5 MB of heap an
// empty SDK worker does not have, into the floor).
import { DEFAULT_MAX_CACHED_WORKFLOWS, DEFAULT_MAX_CONCURRENT_ACTIVITIES, DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS } from '../../src/config';
import { WORKER_HEARTBEAT_THROTTLE } from '../../src/activities/context';

/** Environment variable carrying the options (JSON). */
export const EMPTY_WORKER_OPTIONS_ENV = 'BENCH_EMPTY_WORKER_OPTIONS';

/** The options `sapi-temporal worker` gives its worker (cache size, concurrency, heartbeat throttle), as the child's environment. */
export function emptyWorkerEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const cached = Number(env.SAPI_MAX_CACHED_WORKFLOWS ?? DEFAULT_MAX_CACHED_WORKFLOWS);
  const options = {
    maxHeartbeatThrottleInterval: WORKER_HEARTBEAT_THROTTLE,
    maxCachedWorkflows: cached,
    maxConcurrentActivityTaskExecutions: Number(env.SAPI_MAX_CONCURRENT_ACTIVITIES ?? DEFAULT_MAX_CONCURRENT_ACTIVITIES),
    maxConcurrentWorkflowTaskExecutions: Math.min(Number(env.SAPI_MAX_CONCURRENT_WORKFLOW_TASKS ?? DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS), cached || Infinity),
  };
  return { [EMPTY_WORKER_OPTIONS_ENV]: JSON.stringify(options) };
}
