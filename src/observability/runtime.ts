import { Runtime, type LogLevel } from '@temporalio/worker';
import { createWorkerLogger, DEFAULT_LOG_FORMAT, type LogFormat } from './logging';
import { JOB_WAIT_BUCKETS_SECONDS, METRIC_JOB_WAIT } from './metrics';
import { WorkerStartError } from '../errors';

export interface WorkerRuntimeOptions {
  /** `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR` (`SAPI_LOG_LEVEL`). Default `INFO`. */
  logLevel?: string;
  /** `text` or `json` (`SAPI_LOG_FORMAT`). Default `text`. */
  logFormat?: LogFormat;
  /** `host:port` of the Prometheus endpoint (`SAPI_METRICS_ADDRESS`, served at `/metrics`). Unset: no metrics. */
  metricsAddress?: string;
  /**
   * Signals on which the SDK's runtime shuts its workers down (its default: SIGINT, SIGTERM, SIGQUIT, SIGUSR2).
   * `startWorker` passes none and handles SIGINT/SIGTERM itself, also while the worker is still starting.
   */
  shutdownSignals?: NodeJS.Signals[];
}

/** What {@link configureWorkerRuntime} did. */
export interface WorkerRuntimeResult {
  /** False when a runtime was already installed in this process (its logger and metrics stay as they are). */
  installed: boolean;
}

/** What {@link configureWorkerRuntime} installed in this process; undefined while it installed none. */
let installedHere: { logFormat: LogFormat; metricsAddress?: string } | undefined;

/**
 * Installs the Temporal worker runtime once per process: its logger (level, text or JSON) and, with a metrics
 * address, the SDK's Prometheus exporter, which serves the SDK's metrics (`temporal_…`) and the plugin's
 * (`sapi_…`, recorded on the SDK's metric meter) on the same `/metrics`. Call before the first worker or native
 * connection. When a runtime is already installed, nothing changes; a metrics address or the JSON format it does not
 * have then gets a warning on that runtime's logger (not served, not used), naming the fix. A metrics address the
 * exporter cannot bind (in use by another worker on this host, not an address of this host) fails with
 * `SAPI_WORKER_CONFIG` naming `SAPI_METRICS_ADDRESS` and the cause: a worker asked to serve metrics does not start
 * without them.
 */
export function configureWorkerRuntime(options: WorkerRuntimeOptions = {}): WorkerRuntimeResult {
  const level = (options.logLevel ?? 'INFO').toUpperCase() as LogLevel;
  const logFormat = options.logFormat ?? DEFAULT_LOG_FORMAT;
  try {
    Runtime.install({
      logger: createWorkerLogger(level, logFormat),
      shutdownSignals: options.shutdownSignals,
      telemetryOptions: {
        // the core's own log lines through the logger above (its format, one JSON object a line with json), not
        // printed by the core to the console in its own format beside ours
        logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
        ...(options.metricsAddress
          ? {
              metrics: {
                prometheus: {
                  bindAddress: options.metricsAddress,
                  useSecondsForDurations: true,
                  histogramBucketOverrides: { [METRIC_JOB_WAIT]: JOB_WAIT_BUCKETS_SECONDS },
                },
              },
            }
          : {}),
      },
    });
    installedHere = { logFormat, metricsAddress: options.metricsAddress };
    return { installed: true };
  } catch (err) {
    if (!isAlreadyInstalled(err)) {
      if (options.metricsAddress) throw metricsEndpointError(options.metricsAddress, err);
      throw err;
    }
    const unmet = [
      options.metricsAddress && installedHere?.metricsAddress !== options.metricsAddress
        ? `metrics endpoint ${options.metricsAddress} (SAPI_METRICS_ADDRESS) not served`
        : '',
      logFormat === 'json' && installedHere?.logFormat !== 'json' ? 'log format json (SAPI_LOG_FORMAT) not used' : '',
    ].filter(Boolean);
    if (unmet.length) {
      Runtime.instance().logger.warn(
        `${unmet.join('; ')}: the Temporal runtime was installed before the worker's settings were read (a NativeConnection or Worker made before ` +
          "the SapiPlugin, or a Runtime.install of your own); give the plugin to the worker's connection (connectWorker(settings.temporal, { plugins: [plugin] })), or install the runtime with " +
          'configureWorkerRuntime (or Runtime.install with telemetryOptions.metrics and your logger) first',
        { sdkComponent: 'worker' },
      );
    }
    return { installed: false };
  }
}

/** True for the SDK's refusal to install a second runtime (`IllegalStateError: Runtime singleton has already been …`). */
function isAlreadyInstalled(err: unknown): boolean {
  return err instanceof Error && err.name === 'IllegalStateError';
}

/**
 * `SAPI_WORKER_CONFIG` for an exporter that could not bind: the core says `Failed to start prometheus metrics
 * exporter: Address already in use (os error 98)`.
 */
export function metricsEndpointError(address: string, err: unknown): WorkerStartError {
  const message = err instanceof Error ? err.message : String(err);
  const reason = /address already in use|os error (48|98|10048)\b/i.test(message)
    ? `the address is in use: another process on this host serves there (a second worker with the same SAPI_METRICS_ADDRESS?); give each worker its own port, or unset SAPI_METRICS_ADDRESS to run without metrics`
    : /cannot assign requested address|address not available|os error (49|99|10049)\b/i.test(message)
      ? 'not an address of this host; bind 0.0.0.0:<port> (all interfaces) or 127.0.0.1:<port>'
      : /permission denied|os error 13\b/i.test(message)
        ? 'permission denied (ports below 1024 need privileges); pick a port above 1024'
        : message;
  return new WorkerStartError(`SAPI_METRICS_ADDRESS ${address}: cannot serve metrics: ${reason}`, { cause: err });
}

/**
 * What the plugin does to the process, from its `configureNativeConnection` (before the worker's connection makes the
 * runtime, in the README's order) and again from its `configureWorker` (a warning when the runtime came first): the
 * runtime of the worker's settings when they ask for what the SDK's default runtime lacks (`SAPI_METRICS_ADDRESS`,
 * `SAPI_LOG_FORMAT=json`; level `SAPI_LOG_LEVEL`), else nothing (a runtime installed already gets a warning, see
 * {@link configureWorkerRuntime}); and the AWS SDK's notice that its releases after January 2027 need Node 22 off
 * (8 lines at every start, nothing a worker's operator can act on; `AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED`
 * set to anything keeps it as set).
 */
export function configurePluginRuntime(observability: { logFormat: LogFormat; metricsAddress?: string }): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (observability.metricsAddress === undefined && observability.logFormat !== 'json') return;
  configureWorkerRuntime({ logLevel: process.env.SAPI_LOG_LEVEL, logFormat: observability.logFormat, metricsAddress: observability.metricsAddress });
}
