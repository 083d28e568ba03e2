import { SimplePlugin } from '@temporalio/plugin';
import { DefaultLogger, Runtime, type BundleOptions, type ReplayWorkerOptions, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from './activities';
import { createActivityDeps, type ActivityDeps } from './activities/deps';
import { codecDataConverter } from './codec';
import { loadSettings, type Settings } from './config';
import { createSapiNexusHandler } from './nexus/handler';
import { withJobTiming } from './activities/job-timing';
import { configurePluginRuntime, metricsInterceptors, outageInterceptors, SeenJobs } from './observability';
import { withBundlerStatsAtDebug } from './observability/logging';
import { startTracing, type SapiTracing, type TracingOptions } from './observability/tracing';
import { checkActivityNames, checkConnections, checkNamespace } from './worker-checks';

/** Name the plugin registers under. */
export const PLUGIN_NAME = 'sapi-temporal';

export interface SapiPluginOptions {
  /** Worker settings (connections, S3, transfer sizes); default: {@link loadSettings} from the environment. */
  settings?: Settings;
  /** Pre-built dependencies (tests, custom clients); default: built from `settings`. */
  deps?: ActivityDeps;
  /**
   * Record the plugin's metrics (`sapi_…`: bytes, rows, pages, failures by error code, job wait) on the SDK's metric
   * meter, through an activity interceptor. They reach the runtime's exporter (`SAPI_METRICS_ADDRESS`); without
   * one they cost next to nothing. Default true.
   */
  metrics?: boolean;
  /**
   * Register the Nexus service `sapi-temporal` (importTable, exportTable, extract: `sapi-temporal/nexus`) on the
   * worker, for callers in other namespaces through a Nexus endpoint that targets this task queue. Default: the
   * settings' `SAPI_NEXUS_SERVICE` (false).
   */
  nexus?: boolean;
  /**
   * Check at worker start, before it bundles or polls (see `checkConnections`, `checkNamespace`): a Storage
   * connection configured, reachable and accepting its token, and the worker's namespace existing. A failed check
   * fails `Worker.create` with one line naming the setting (`SAPI_WORKER_CONFIG`,
   * `SAPI_TEMPORAL_NAMESPACE_NOT_FOUND`). Default true.
   */
  startChecks?: boolean;
  /**
   * OpenTelemetry tracing through the Temporal SDK's `OpenTelemetryPlugin` (workflow, activity and Nexus spans, the
   * trace carried in Temporal headers) plus a span for each Storage API, object-store and extracted-API request and
   * each extracted page, sent to an OTLP/HTTP collector. `true`: on with the settings' collector (else the
   * `OTEL_EXPORTER_OTLP_*` defaults); options: on with these; `false`: off. Default: on when the settings name a
   * collector (`SAPI_OTEL_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), else off
   * (nothing loaded, nothing recorded). Needs the optional OpenTelemetry packages (docs/operating.md#traces). Workflow
   * spans need the SDK's workflow interceptor module in the bundle: with `workflowsPath` it is added; a prebuilt bundle
   * must be built with `bundleWorkflowCode({ workflowsPath, plugins: [plugin] })`.
   */
  tracing?: boolean | TracingOptions;
}

/**
 * The plugin: registers the activities on a worker and, when the settings have codec keys (`SAPI_CODEC_KEYS`), the
 * encrypting data converter (payload codec + encoded failure attributes). It only wires.
 * Register it on the worker only (not also on the client connection, or it runs twice). The workflows come from
 * the `sapi-temporal/workflows` module, which you re-export from your workflow module (or point `workflowsPath` at).
 */
export class SapiPlugin extends SimplePlugin {
  readonly deps: ActivityDeps;
  /** Tracing of this plugin's worker, when on. */
  readonly tracing: SapiTracing | undefined;
  private readonly startChecks: boolean;
  private readonly activities: object;

  constructor(options: SapiPluginOptions = {}) {
    const deps = options.deps ?? createActivityDeps(options.settings ?? loadSettings());
    // made before the worker's connection (the README's order): SAPI_METRICS_ADDRESS and SAPI_LOG_FORMAT take effect
    configurePluginRuntime(deps.settings.observability);
    const codecKeys = deps.settings.codecKeys;
    const metrics = options.metrics ?? true;
    // one memory of counted jobs for the interceptor (rows) and the observed clients (job wait)
    const seen = new SeenJobs();
    const activities = createActivities(metrics ? withJobTiming(deps, seen) : deps);
    super({
      name: PLUGIN_NAME,
      activities,
      // appended to the worker's own interceptors (an OpenTelemetry factory of the user's keeps working)
      // plus one INFO line per transfer start and end, from a workflow interceptor (bundled with the workflows)
      workerInterceptors: { activity: [outageInterceptors(), ...(metrics ? [metricsInterceptors(seen)] : [])], workflowModules: [transferLogModule] },
      // the codec runs in the worker process (activations decoded, completions encoded); the sandbox gets the path
      dataConverter: codecKeys ? (existing) => codecDataConverter(codecKeys, existing)! : undefined,
      nexusServices: (options.nexus ?? deps.settings.nexusService) ? [createSapiNexusHandler()] : undefined,
    });
    this.deps = deps;
    this.activities = activities;
    this.startChecks = options.startChecks ?? true;
    const tracing = options.tracing === true ? (deps.settings.observability.tracing ?? {}) : options.tracing === false ? undefined : (options.tracing ?? deps.settings.observability.tracing);
    this.tracing = tracing ? startTracing(tracing, 'sapi-temporal-worker') : undefined;
  }

  override configureBundler(given: BundleOptions): BundleOptions {
    // webpack's 20 lines of stats at DEBUG, not at every start (the bundler's default logger is the SDK's at INFO)
    const options = { ...given, logger: withBundlerStatsAtDebug(given.logger ?? new DefaultLogger('INFO')) };
    return super.configureBundler(this.tracing ? this.tracing.plugin.configureBundler(options) : options);
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return super.configureReplayWorker(this.tracing ? this.tracing.plugin.configureReplayWorker(options) : options);
  }

  /**
   * Fails at once (`SAPI_WORKER_CONFIG`) when the worker's own activities have a name of one of the plugin's.
   * With the start checks, a promise: the SDK awaits this hook (`WorkerPlugin.configureWorker` may return one;
   * `SimplePlugin` declares a value), so they run before the worker bundles its workflows or polls.
   */
  override configureWorker(given: WorkerOptions): WorkerOptions {
    // a user's activity named like one of the plugin's fails the start (SimplePlugin would replace it silently)
    checkActivityNames(given.activities, this.activities, PLUGIN_NAME);
    const options = this.tracing ? this.tracing.plugin.configureWorker(given) : given;
    if (this.tracing && options.workflowBundle && !options.workflowsPath) {
      Runtime.instance().logger.warn(
        'tracing is on, but the worker runs a prebuilt workflow bundle: its workflows have no spans unless the bundle was built with the plugin (bundleWorkflowCode({ workflowsPath, plugins: [plugin] }))',
        { sdkComponent: 'worker' },
      );
    }
    if (!this.startChecks) return super.configureWorker(options);
    return this.checkedWorkerOptions(options) as unknown as WorkerOptions;
  }

  private async checkedWorkerOptions(options: WorkerOptions): Promise<WorkerOptions> {
    const { settings } = this.deps;
    const warn = (message: string) => Runtime.instance().logger.warn(message, { sdkComponent: 'worker' });
    await Promise.all([
      checkConnections(settings, { warn }),
      options.connection && checkNamespace(options.connection, options.namespace ?? 'default', settings.temporal.address),
    ]);
    return super.configureWorker(options);
  }

  /** Closes the Storage and S3 clients and sends the spans not sent yet; call after the worker stops. */
  async close(): Promise<void> {
    try {
      await this.deps.close();
    } finally {
      await this.tracing?.shutdown().catch(() => undefined);
    }
  }
}

/** Path of the workflow interceptor module that logs each transfer's start and end (`observability/transfer-log`). */
export const transferLogModule: string = require.resolve('./observability/transfer-log');

/** Path of the plugin's workflow module, for `Worker.create({ workflowsPath })` or `bundleWorkflowCode`. */
export const workflowsPath: string = require.resolve('./workflows');
