import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { connectionVariable, loadSettings, temporalConnectionOptions, type Settings } from './config';
import { SapiErrorCode, isSapiError } from './errors';
import { configureWorkerRuntime } from './observability';
import { SapiPlugin, workflowsPath } from './plugin';
import { createStorageClient } from './storage-api';

/** Longest time a heartbeat (a resume point) waits before it is sent to the server. */
export const WORKER_HEARTBEAT_THROTTLE = '3 seconds';

/**
 * Sets the Temporal worker runtime's log level once per process (`SAPI_LOG_LEVEL`: TRACE, DEBUG, INFO, WARN, ERROR;
 * default INFO for a plain worker), in the `SAPI_LOG_FORMAT` (`text` or `json`), with the metrics endpoint of
 * `SAPI_METRICS_ADDRESS` when set. Call before the first worker or native connection; later calls are ignored.
 */
export function configureWorkerLogging(level: string = process.env.SAPI_LOG_LEVEL ?? 'INFO', settings?: Settings): void {
  // without settings (the demo), read the two variables directly: a log must not fail on another setting
  const observability = settings?.observability ?? {
    logFormat: process.env.SAPI_LOG_FORMAT?.toLowerCase() === 'json' ? ('json' as const) : ('text' as const),
    metricsAddress: process.env.SAPI_METRICS_ADDRESS || undefined,
  };
  configureWorkerRuntime({ logLevel: level, logFormat: observability.logFormat, metricsAddress: observability.metricsAddress });
}

export interface RunWorkerOptions {
  settings?: Settings;
  /** Overrides merged into the worker options (e.g. `workflowBundle` in tests). */
  worker?: Partial<WorkerOptions>;
  /** Also poll `settings.hostTaskQueue` (work bound to this host's files). Default true when configured. */
  hostQueue?: boolean;
  /**
   * Check the Storage connections before polling (see {@link checkConnections}): none configured, or a token the
   * service rejects, stops the worker at start. Default true.
   */
  checkConnections?: boolean;
}

/**
 * Fails fast on a worker that could only fail later: no Storage connection configured, or a token the service
 * rejects (`GET tokens/verify` answers 401/403). A service that cannot be reached is not a reason to refuse to
 * start (it may be in maintenance): the activities retry then.
 */
export async function checkConnections(settings: Settings): Promise<void> {
  const names = Object.keys(settings.connections);
  if (names.length === 0) {
    throw new Error('no Storage connection configured: set SAPI_URL and SAPI_TOKEN (or SAPI_<NAME>_URL and SAPI_<NAME>_TOKEN) in the worker\'s environment');
  }
  await Promise.all(
    names.map(async (name) => {
      const { url, token, branchId } = settings.connections[name]!;
      const client = createStorageClient({ url, token, branchId, retry: { maxAttempts: 1 } });
      try {
        await client.verifyToken();
      } catch (err) {
        if (isSapiError(err) && err.code === SapiErrorCode.UNAUTHORIZED) {
          throw new Error(`Storage connection "${name}" (${url}) rejects its token: ${err.message}; check ${connectionVariable(name, 'token')}`);
        }
        // unreachable or failing service: start anyway, activities retry
      } finally {
        await client.close();
      }
    }),
  );
}

export interface RunningWorker {
  /** Resolves when every worker has stopped. */
  done: Promise<void>;
  /** Graceful stop: finish in-flight tasks, then close connections and clients. */
  stop(): Promise<void>;
  taskQueues: string[];
}

/**
 * A ready worker for the plugin, configured from the environment (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_TASK_QUEUE`, `SAPI_URL`, `SAPI_TOKEN`, …; see README). With `SAPI_HOST_TASK_QUEUE` it also polls a
 * queue meant for this host, so work on local paths can be routed here.
 */
export async function startWorker(options: RunWorkerOptions = {}): Promise<RunningWorker> {
  const settings = options.settings ?? loadSettings();
  if (options.checkConnections ?? true) await checkConnections(settings);
  // the runtime (logger, metrics endpoint) before the first connection; a runtime installed earlier stays
  configureWorkerLogging(undefined, settings);
  const plugin = new SapiPlugin({ settings });
  const connection = await NativeConnection.connect(temporalConnectionOptions(settings.temporal).native);
  const queues = [settings.temporal.taskQueue];
  if ((options.hostQueue ?? true) && settings.hostTaskQueue) queues.push(settings.hostTaskQueue);
  const workers = await Promise.all(
    queues.map((taskQueue) =>
      Worker.create({
        connection,
        namespace: settings.temporal.namespace,
        taskQueue,
        plugins: [plugin],
        // heartbeats carry resume points (finished parts/slices/pages): send them often enough to be worth it
        maxHeartbeatThrottleInterval: WORKER_HEARTBEAT_THROTTLE,
        // how much one process takes on (its memory); more throughput: more processes on the same task queue
        maxCachedWorkflows: settings.worker.maxCachedWorkflows,
        maxConcurrentActivityTaskExecutions: settings.worker.maxConcurrentActivities,
        // (the SDK caps workflow tasks at the cache size, with a warning; a cache of 0 is off)
        maxConcurrentWorkflowTaskExecutions:
          settings.worker.maxCachedWorkflows === 0 ? settings.worker.maxConcurrentWorkflowTasks : Math.min(settings.worker.maxConcurrentWorkflowTasks, settings.worker.maxCachedWorkflows),
        ...(options.worker?.workflowBundle ? {} : { workflowsPath }),
        ...options.worker,
      }),
    ),
  );
  const done = Promise.all(workers.map((worker) => worker.run())).then(async () => {
    await connection.close();
    await plugin.close();
  });
  return {
    done,
    taskQueues: queues,
    async stop() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

if (require.main === module) {
  startWorker()
    .then((running) => {
      process.stdout.write(`worker polling ${running.taskQueues.join(', ')}\n`);
      const stop = () => void running.stop();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return running.done;
    })
    .catch((err: unknown) => {
      process.stderr.write(`sapi-temporal worker: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    });
}
