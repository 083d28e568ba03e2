import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel, type WorkerOptions } from '@temporalio/worker';
import { loadSettings, type Settings } from './config';
import { SapiPlugin, workflowsPath } from './plugin';

/** Longest time a heartbeat (a resume point) waits before it is sent to the server. */
export const WORKER_HEARTBEAT_THROTTLE = '3 seconds';

/**
 * Sets the Temporal worker runtime's log level once per process (`SAPI_LOG_LEVEL`: TRACE, DEBUG, INFO, WARN, ERROR;
 * default INFO for a plain worker). Call before the first worker or native connection; later calls are ignored.
 */
export function configureWorkerLogging(level: string = process.env.SAPI_LOG_LEVEL ?? 'INFO'): void {
  try {
    Runtime.install({ logger: new DefaultLogger(level.toUpperCase() as LogLevel) });
  } catch {
    /* the runtime is already installed: keep its logger */
  }
}

export interface RunWorkerOptions {
  settings?: Settings;
  /** Overrides merged into the worker options (e.g. `workflowBundle` in tests). */
  worker?: Partial<WorkerOptions>;
  /** Also poll `settings.hostTaskQueue` (work bound to this host's files). Default true when configured. */
  hostQueue?: boolean;
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
  const plugin = new SapiPlugin({ settings });
  const connection = await NativeConnection.connect({ address: settings.temporal.address });
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
