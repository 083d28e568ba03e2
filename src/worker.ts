import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { NativeConnection, Runtime, Worker, type NativeConnectionPlugin, type WorkerDeploymentOptions, type WorkerOptions } from '@temporalio/worker';
import { packageVersion } from './version';
import { loadSettings, temporalConnectionOptions, type Settings, type TemporalConnectionSettings } from './config';
import { probeConnection } from './config/connection-probe';
import { configureWorkerRuntime, type WorkerRuntimeOptions } from './observability';
import { SapiPlugin, workflowsPath } from './plugin';
import { METRIC_SCHEDULE_RUNS_SKIPPED, watchScheduleSkips } from './observability/schedule-metrics';
import { transportCause } from './storage-api/retry-policy';
import { WorkerStartError } from './worker-checks';
import { WORKER_HEARTBEAT_THROTTLE } from './activities/context';
import { childBundling } from './worker-bundle';
import { isSapiError } from './errors';

export { checkConnections, checkNamespace, WorkerStartError, START_CHECK_TIMEOUT_MS } from './worker-checks';

/**
 * Sets the Temporal worker runtime's log level once per process (`SAPI_LOG_LEVEL`: TRACE, DEBUG, INFO, WARN, ERROR;
 * default INFO for a plain worker), in the `SAPI_LOG_FORMAT` (`text` or `json`), with the metrics endpoint of
 * `SAPI_METRICS_ADDRESS` when set. Call before the first worker or native connection; later calls are ignored.
 */
export function configureWorkerLogging(
  level: string = process.env.SAPI_LOG_LEVEL ?? 'INFO',
  settings?: Settings,
  runtime: Pick<WorkerRuntimeOptions, 'shutdownSignals'> = {},
): void {
  // without settings (the demo), read the two variables directly: a log must not fail on another setting
  const observability = settings?.observability ?? {
    logFormat: process.env.SAPI_LOG_FORMAT?.toLowerCase() === 'json' ? ('json' as const) : ('text' as const),
    metricsAddress: process.env.SAPI_METRICS_ADDRESS || undefined,
  };
  configureWorkerRuntime({ logLevel: level, logFormat: observability.logFormat, metricsAddress: observability.metricsAddress, ...runtime });
}

/** After the first SIGINT/SIGTERM, how long tasks in flight may take to finish before the worker stops hard (ms). */
export const WORKER_STOP_GRACE_MS = 30_000;
/** Exit code after a stop signal ended the process before a graceful stop could (128 + SIGINT). */
export const WORKER_INTERRUPTED_EXIT_CODE = 130;

/**
 * V8 flags {@link startWorker} sets for its process before the first connection: WebAssembly stays on V8's baseline
 * compiler (Liftoff). undici parses HTTP with llhttp compiled to WebAssembly, and V8 otherwise recompiles llhttp's
 * parser function with its optimizing compiler once it is hot: ~200 ms of CPU and up to 30 MB of compiler memory at
 * once (42 MB in all) on a V8 background thread, in each thread that makes requests (the main thread, each download
 * thread). glibc keeps that memory in the thread's malloc arena; on the main one (the brk heap) later allocations
 * above it pinned it: the idle worker's brk heap was 29–43 MB instead of 7–15 MB in about a third of the runs
 * (docs/deploying.md has the figures). The baseline
 * code parses a response's body in one step per socket chunk, as the optimized code does. A worker of your own can
 * pass them to node (`node --no-wasm-dynamic-tiering --no-wasm-tier-up …`; NODE_OPTIONS does not take them).
 */
export const WORKER_V8_FLAGS: readonly string[] = ['--no-wasm-dynamic-tiering', '--no-wasm-tier-up'];

export interface RunWorkerOptions {
  settings?: Settings;
  /** Overrides merged into the worker options (e.g. `workflowBundle` in tests). */
  worker?: Partial<WorkerOptions>;
  /** Also poll `settings.hostTaskQueue` (work bound to this host's files). Default true when configured. */
  hostQueue?: boolean;
  /**
   * Run the plugin's start checks (Storage connections reachable with a valid token, the namespace exists; see
   * `SapiPluginOptions.startChecks`): a failed one rejects with one line naming the setting. Default true.
   */
  checkConnections?: boolean;
  /**
   * Signals that stop the worker, from the moment `startWorker` is called: the first stops it gracefully (tasks in
   * flight get {@link WORKER_STOP_GRACE_MS}, then it stops hard and `done` rejects); while it is still starting, or
   * on a second signal, the process exits at once with {@link WORKER_INTERRUPTED_EXIT_CODE}. `false`: the caller
   * handles signals (the SDK's runtime then does, as in any worker). Default `['SIGINT', 'SIGTERM']`.
   */
  stopSignals?: NodeJS.Signals[] | false;
  /** Called on the first stop signal, before the graceful stop (the CLI says what it does). */
  onStopping?(signal: NodeJS.Signals, phase: 'starting' | 'running'): void;
}

export interface RunningWorker {
  /** Resolves when every worker has stopped (rejects when one failed or had to be stopped hard). */
  done: Promise<void>;
  /** Graceful stop: finish in-flight tasks, then close connections and clients. */
  stop(): Promise<void>;
  taskQueues: string[];
}

/**
 * A ready worker for the plugin, configured from the environment (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_TASK_QUEUE`, `SAPI_URL`, `SAPI_TOKEN`, …; see docs/configuration.md). With `SAPI_HOST_TASK_QUEUE` it also polls a
 * queue meant for this host, so work on local paths can be routed here. It fails fast: an unreachable Temporal, a
 * missing namespace, no or an unreachable Storage connection, a rejected token reject within seconds with a
 * {@link WorkerStartError} naming the setting, and every connection it opened is closed.
 */
export async function startWorker(options: RunWorkerOptions = {}): Promise<RunningWorker> {
  const settings = options.settings ?? loadSettings();
  // before any connection: undici compiles its parser at the first one (see WORKER_V8_FLAGS)
  for (const flag of WORKER_V8_FLAGS) setFlagsFromString(flag);
  const signals = options.stopSignals === false ? [] : (options.stopSignals ?? ['SIGINT', 'SIGTERM']);
  let workers: Worker[] | undefined;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping || !workers) {
      // nothing to drain yet (connecting, checking, bundling), or asked twice: the user wants the prompt back
      if (!stopping) options.onStopping?.(signal, 'starting');
      process.exit(WORKER_INTERRUPTED_EXIT_CODE);
    }
    stopping = true;
    options.onStopping?.(signal, 'running');
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  for (const signal of signals) process.on(signal, onSignal);
  const release = () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
  // the runtime (logger, metrics endpoint) before the first connection; a runtime installed earlier stays. With our
  // own signal handling the SDK's is off: it ignores a signal that comes while the worker is still starting.
  let plugin: SapiPlugin;
  try {
    configureWorkerLogging(undefined, settings, signals.length ? { shutdownSignals: [] } : {});
    plugin = new SapiPlugin({ settings, startChecks: options.checkConnections ?? true });
  } catch (err) {
    release(); // a metrics address in use, …: nothing opened yet
    throw err;
  }
  let connection: NativeConnection | undefined;
  const given = options.worker?.workflowBundle;
  // without a bundle given: bundled once in a child process (webpack never loaded here; it starts now and loads while
  // the worker connects and checks), the deployment's version named after its code
  const bundling = given
    ? undefined
    : childBundling(plugin, plugin.tracingOptions !== undefined, (code, compiled) =>
        settings.deployment.name ? { ...compiled, workerDeploymentOptions: deploymentOptions(settings.deployment, plugin, code) } : compiled,
      );
  try {
    connection = await connectWorker(settings.temporal);
    const versioned = settings.deployment.name && given ? versionedBundle(settings.deployment, plugin, given) : undefined;
    const queues = [settings.temporal.taskQueue];
    if ((options.hostQueue ?? true) && settings.hostTaskQueue) queues.push(settings.hostTaskQueue);
    const created: Worker[] = [];
    for (const taskQueue of queues) {
      created.push(
        await Worker.create({
          connection,
          namespace: settings.temporal.namespace,
          taskQueue,
          plugins: bundling ? [plugin, bundling] : [plugin],
          // heartbeats carry resume points (finished parts/slices/pages): send them often enough to be worth it
          maxHeartbeatThrottleInterval: WORKER_HEARTBEAT_THROTTLE,
          // how much one process takes on (its memory); more throughput: more processes on the same task queue
          maxCachedWorkflows: settings.worker.maxCachedWorkflows,
          maxConcurrentActivityTaskExecutions: settings.worker.maxConcurrentActivities,
          // (the SDK caps workflow tasks at the cache size, with a warning; a cache of 0 is off)
          maxConcurrentWorkflowTaskExecutions:
            settings.worker.maxCachedWorkflows === 0
              ? settings.worker.maxConcurrentWorkflowTasks
              : Math.min(settings.worker.maxConcurrentWorkflowTasks, settings.worker.maxCachedWorkflows),
          // a graceful stop that cannot finish in time ends the run (done rejects) rather than holding the process
          shutdownForceTime: WORKER_STOP_GRACE_MS,
          ...(options.worker?.workflowBundle ? {} : { workflowsPath }),
          ...options.worker,
          ...(versioned ? { workflowBundle: versioned.bundle, workerDeploymentOptions: versioned.deployment } : {}),
        }),
      );
    }
    bundling?.close(); // not taken: the workers had a bundle of their own options
    workers = created;
    const opened = connection;
    // the runs schedules skipped, on the metrics endpoint (Temporal counts them only in each schedule's description)
    const interval = settings.observability.scheduleMetricsIntervalS;
    const skips =
      settings.observability.metricsAddress && interval > 0
        ? watchScheduleSkips({
            connection,
            namespace: settings.temporal.namespace,
            taskQueues: queues,
            meter: Runtime.instance().metricMeter,
            intervalMs: interval * 1000,
            onError: (err) =>
              Runtime.instance().logger.warn(
                `${METRIC_SCHEDULE_RUNS_SKIPPED}: cannot read the schedules' counts (tried again every ${interval} s): ${err instanceof Error ? err.message : String(err)}`,
              ),
          })
        : undefined;
    const stopAll = () => {
      for (const worker of created) if (worker.getState() === 'RUNNING') worker.shutdown();
    };
    // one worker failing stops the others: the process must not poll half its queues
    const done = Promise.all(created.map((worker) => worker.run().catch((err: unknown) => (stopAll(), Promise.reject(err)))))
      .then(() => undefined)
      .finally(async () => {
        release();
        await skips?.stop();
        await opened.close().catch(() => undefined);
        await plugin.close();
      });
    return {
      done,
      taskQueues: queues,
      async stop() {
        stopping = true;
        stopAll();
        await done;
      },
    };
  } catch (err) {
    release();
    bundling?.close();
    await connection?.close().catch(() => undefined);
    await plugin.close();
    throw err;
  }
}

/**
 * `NativeConnection.connect` with the worker's Temporal settings (address, namespace's API key, TLS, gRPC headers), a
 * failure explained as the CLI explains it: a rejected {@link WorkerStartError} (`SAPI_WORKER_CONFIG`) naming
 * `TEMPORAL_ADDRESS` and, for a TLS fault, what is wrong and the setting that fixes it (the server's certificate not
 * signed by the CA given, not for the name connected to, or a client certificate the server wants), not the core's
 * transport error. Use it in your own worker in place of `NativeConnection.connect` (the README does). `plugins`: the
 * connection's (`NativeConnectionOptions.plugins`; a worker on the connection takes them too): the {@link SapiPlugin}
 * there installs the Temporal runtime of the worker's settings (`SAPI_METRICS_ADDRESS`, `SAPI_LOG_FORMAT`) before the
 * connection makes the default one.
 */
export async function connectWorker(temporal: TemporalConnectionSettings, options: { plugins?: NativeConnectionPlugin[] } = {}): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect({ ...temporalConnectionOptions(temporal).native, plugins: options.plugins });
  } catch (err) {
    // a plugin's own refusal (the SapiPlugin's metrics address in use): not the connection's
    if (isSapiError(err)) throw err;
    // the core says `tonic::transport::Error(Transport, …InvalidCertificate(UnknownIssuer)…)`: dial as it did to name the cause
    const diagnosis = await probeConnection(temporal).catch(() => undefined);
    // a server that does not answer may be down for a while (an outage) or the address may be wrong: say both, and
    // that a supervisor should start the worker again (deploy/: restart with backoff)
    const unreachable = diagnosis !== undefined && ['refused', 'timeout', 'network'].includes(diagnosis.cause);
    const cause = diagnosis?.cause.startsWith('tls')
      ? diagnosis.message
      : unreachable
        ? `unreachable (a Temporal outage, or a wrong address): ${diagnosis.message}; run the worker under a supervisor that starts it again with a backoff`
        : (transportCause(err) ?? temporalCause(err));
    throw new WorkerStartError(`TEMPORAL_ADDRESS ${temporal.address}: ${cause}`, { cause: err });
  }
}

/** The message of a Temporal connection failure without the core's dump (`Status { code: …, details: b"…" }`). */
function temporalCause(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return /message: "([^"]*)"/.exec(message)?.[1] ?? message.split('\n')[0]!;
}

if (require.main === module) {
  startWorker()
    .then((running) => {
      process.stdout.write(`worker polling ${running.taskQueues.join(', ')}\n`);
      return running.done;
    })
    .catch((err: unknown) => {
      process.stderr.write(`sapi-temporal worker: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    });
}

/**
 * With `SAPI_DEPLOYMENT_NAME` and a bundle given (without one, the worker's own bundle, built in a child process by
 * `childBundling`, gets its version from {@link deploymentOptions} the same way): the bundle and the deployment
 * version the worker polls as: `SAPI_BUILD_ID`, else the package version and a hash of the bundle
 * (`0.1.0+3f2a9c1b7d4e`), so a deploy that changes workflow code is a new version and one that does not is not.
 * Runs are `PINNED` to the version that started them (an extraction moves on at a continue-as-new, see extract.ts).
 */
function versionedBundle(
  deployment: Settings['deployment'],
  plugin: SapiPlugin,
  given: NonNullable<WorkerOptions['workflowBundle']>,
): { bundle: { code: string }; deployment: WorkerDeploymentOptions } {
  const bundle = 'code' in given ? given : { code: readFileSync(given.codePath, 'utf8') };
  return { bundle, deployment: deploymentOptions(deployment, plugin, bundle.code) };
}

/** The deployment version of a worker running `bundleCode`: see {@link versionedBundle}. */
function deploymentOptions(deployment: Settings['deployment'], plugin: SapiPlugin, bundleCode: string): WorkerDeploymentOptions {
  // a traced worker's bundle issues its commands in a different order around updates (see replay-check --tracing): a
  // build id of one's own gets the switch too, so turning tracing on or off is always a new version
  const buildId = deployment.buildId !== undefined ? tracedBuildId(deployment.buildId, plugin.tracingOptions !== undefined) : defaultBuildId(bundleCode);
  return { version: { deploymentName: deployment.name!, buildId }, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

/** `SAPI_BUILD_ID` as the worker polls with it: `<id>+traced` when tracing is on. */
export function tracedBuildId(buildId: string, tracing: boolean): string {
  return tracing ? `${buildId}+traced` : buildId;
}

/** `<package version>+<12 hex digits of the bundle's SHA-256>` (the bundle holds the tracing interceptors when on). */
export function defaultBuildId(bundleCode: string): string {
  return `${packageVersion()}+${createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}
