import { Runtime, type LogLevel } from '@temporalio/worker';
import { createWorkerLogger, DEFAULT_LOG_FORMAT, type LogFormat } from './logging';
import { JOB_WAIT_BUCKETS_SECONDS, METRIC_JOB_WAIT } from './metrics';

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

/**
 * Installs the Temporal worker runtime once per process: its logger (level, text or JSON) and, with a metrics
 * address, the SDK's Prometheus exporter, which serves the SDK's metrics (`temporal_…`) and the plugin's
 * (`sapi_…`, recorded on the SDK's metric meter) on the same `/metrics`. Call before the first worker or native
 * connection. When a runtime is already installed, nothing changes; a metrics address then gets a warning on that
 * runtime's logger (the endpoint is not served).
 */
export function configureWorkerRuntime(options: WorkerRuntimeOptions = {}): WorkerRuntimeResult {
  const level = (options.logLevel ?? 'INFO').toUpperCase() as LogLevel;
  try {
    Runtime.install({
      logger: createWorkerLogger(level, options.logFormat ?? DEFAULT_LOG_FORMAT),
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
    return { installed: true };
  } catch {
    if (options.metricsAddress) {
      Runtime.instance().logger.warn(
        `metrics endpoint ${options.metricsAddress} not served: the Temporal runtime was installed before the worker started; ` +
          'install it with telemetryOptions.metrics (or call configureWorkerRuntime first)',
        { sdkComponent: 'worker' },
      );
    }
    return { installed: false };
  }
}
