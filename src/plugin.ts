import { SimplePlugin } from '@temporalio/plugin';
import {
  Runtime,
  type BundleOptions,
  type BundlerPlugin,
  type NativeConnectionOptions,
  type NativeConnectionPlugin,
  type ReplayWorkerOptions,
  type WorkerOptions,
  type WorkerPlugin,
} from '@temporalio/worker';
import { createActivities } from './activities';
import { createActivityDeps, type ActivityDeps } from './activities/deps';
import { codecDataConverter } from './codec';
import { loadSettings, type Settings } from './config';
import { createSapiNexusHandler } from './nexus/handler';
import { withJobTiming } from './activities/job-timing';
import { configurePluginRuntime, metricsInterceptors, outageInterceptors, SeenJobs } from './observability';
import { replayTracingPlugin, startTracing, type SapiTracing, type TracingOptions } from './observability/tracing';
import { WorkerStartError } from './errors';
import { checkActivityNames, checkConnections, checkNamespace } from './worker-checks';
import { configureSapiBundle, transferLogModule } from './worker-bundle';

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
 * encrypting data converter (payload codec + encoded failure attributes). It only wires: its constructor builds the
 * activities and starts nothing; what touches the process or the network runs in the SDK's hooks, where the SDK
 * calls it:
 * - `configureNativeConnection` (when the plugin is given to the worker's `NativeConnection.connect`, before the
 *   connection makes the Temporal runtime): the runtime of the settings (`SAPI_METRICS_ADDRESS`, `SAPI_LOG_FORMAT`);
 * - `configureWorker` (awaited by `Worker.create`, before it bundles the workflows or polls): tracing started, the
 *   start checks (`startChecks`), the activity names checked, the activities, interceptors, codec and Nexus service;
 * - `configureBundler` / `configureReplayWorker`: the tracing interceptor module when tracing is on.
 * Register it once per worker: on the worker's `NativeConnection` (the worker takes the connection's plugins; see
 * `connectWorker`) or on `Worker.create`, not both (that fails `SAPI_WORKER_CONFIG`), and not on a client.
 * The workflows come from the `sapi-temporal/workflows` module, which you re-export from your workflow module (or
 * point `workflowsPath` at).
 */
export class SapiPlugin implements WorkerPlugin, BundlerPlugin, NativeConnectionPlugin {
  readonly name = PLUGIN_NAME;
  readonly deps: ActivityDeps;
  /** The tracing this plugin's worker runs with (options), or undefined: off. Started by `configureWorker`. */
  readonly tracingOptions: TracingOptions | undefined;
  private readonly startChecks: boolean;
  private readonly activities: object;
  /** What the plugin adds to the options (the SDK's merge rules: activities appended, interceptors appended). */
  private readonly wiring: SimplePlugin;
  private startedTracing: SapiTracing | undefined;
  private bundlingTracing: (WorkerPlugin & BundlerPlugin) | undefined;

  constructor(options: SapiPluginOptions = {}) {
    const deps = options.deps ?? createActivityDeps(options.settings ?? loadSettings());
    const codecKeys = deps.settings.codecKeys;
    const metrics = options.metrics ?? true;
    // one memory of counted jobs for the interceptor (rows) and the observed clients (job wait)
    const seen = new SeenJobs();
    const activities = createActivities(metrics ? withJobTiming(deps, seen) : deps);
    this.wiring = new SimplePlugin({
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
    this.tracingOptions =
      options.tracing === true
        ? (deps.settings.observability.tracing ?? {})
        : options.tracing === false
          ? undefined
          : (options.tracing ?? deps.settings.observability.tracing);
  }

  /** Tracing of this plugin's worker: started by `configureWorker` when on, else undefined. */
  get tracing(): SapiTracing | undefined {
    return this.startedTracing;
  }

  /**
   * Called by `NativeConnection.connect({ plugins: [plugin] })` before the connection makes the Temporal runtime:
   * installs the runtime of the worker's settings when they ask for what the SDK's default lacks
   * (`SAPI_METRICS_ADDRESS`, `SAPI_LOG_FORMAT=json`). Throws `SAPI_WORKER_CONFIG` when the metrics address cannot
   * be served.
   */
  configureNativeConnection(options: NativeConnectionOptions): NativeConnectionOptions {
    configurePluginRuntime(this.deps.settings.observability);
    return options;
  }

  configureBundler(given: BundleOptions): BundleOptions {
    // webpack's 20 lines of stats at DEBUG, not at every start (the bundler's default logger is the SDK's at INFO)
    // the lean bundle (ASCII, a source map without the sources): the worker holds it several times over, see workflow-bundle.ts
    // (one function with the worker's bundling child: see worker-bundle.ts)
    return configureSapiBundle(given, this.tracingForBundles());
  }

  async configureReplayWorker(given: ReplayWorkerOptions): Promise<ReplayWorkerOptions> {
    const traced = this.tracingForBundles();
    return this.wiring.configureReplayWorker(traced?.configureReplayWorker ? await traced.configureReplayWorker(given) : given);
  }

  /**
   * Called and awaited by `Worker.create` before it bundles the workflows or polls. Fails (`SAPI_WORKER_CONFIG`) when
   * the plugin is registered twice on the worker or the worker's own activities have a name of one of the plugin's;
   * starts tracing when on; with the start checks, checks the Storage connections and the namespace (a failed one
   * fails `Worker.create` with one line naming the setting); then adds the activities, interceptors, codec and Nexus
   * service.
   */
  async configureWorker(given: WorkerOptions): Promise<WorkerOptions> {
    if ((given.plugins ?? []).filter((plugin) => plugin === this).length > 1) {
      throw new WorkerStartError(
        `the ${PLUGIN_NAME} plugin is registered twice on this worker (on Worker.create and on its NativeConnection, whose plugins the worker takes): register it on one of them`,
      );
    }
    // a user's activity named like one of the plugin's fails the start (SimplePlugin would replace it silently)
    checkActivityNames(given.activities, this.activities, PLUGIN_NAME);
    // the AWS SDK's Node-version notice off; the runtime installed by configureNativeConnection already, or by the
    // worker's own code: one that lacks what the settings ask for gets a warning naming the fix
    configurePluginRuntime(this.deps.settings.observability);
    if (this.tracingOptions) this.startedTracing ??= startTracing(this.tracingOptions, 'sapi-temporal-worker');
    const options = this.startedTracing ? await this.startedTracing.plugin.configureWorker(given) : given;
    if (this.startedTracing && options.workflowBundle && !options.workflowsPath) {
      Runtime.instance().logger.warn(
        'tracing is on, but the worker runs a prebuilt workflow bundle: its workflows have no spans unless the bundle was built with the plugin (bundleWorkflowCode({ workflowsPath, plugins: [plugin] }))',
        { sdkComponent: 'worker' },
      );
    }
    if (this.startChecks) {
      const { settings } = this.deps;
      const warn = (message: string) => Runtime.instance().logger.warn(message, { sdkComponent: 'worker' });
      await Promise.all([
        checkConnections(settings, { warn }),
        options.connection && checkNamespace(options.connection, options.namespace ?? 'default', settings.temporal.address),
      ]);
    }
    return this.wiring.configureWorker(options);
  }

  /** Closes the Storage and S3 clients and sends the spans not sent yet; call after the worker stops. */
  async close(): Promise<void> {
    try {
      await this.deps.close();
    } finally {
      await this.startedTracing?.shutdown().catch(() => undefined);
    }
  }

  /**
   * The SDK's OpenTelemetry plugin for bundling and replay when tracing is on: its workflow interceptor module (what a
   * traced worker bundles), with spans kept in memory and dropped; it starts no tracer provider.
   */
  private tracingForBundles(): (WorkerPlugin & BundlerPlugin) | undefined {
    if (!this.tracingOptions) return undefined;
    return (this.bundlingTracing ??= replayTracingPlugin());
  }
}

export { transferLogModule };

/**
 * Path of the plugin's workflow bundle entry, for `Worker.create({ workflowsPath })` or `bundleWorkflowCode`: the
 * workflows of `sapi-temporal/workflows`, each run evaluating only its own workflow's modules (see workflows/entry.ts).
 */
export const workflowsPath: string = require.resolve('./workflows/entry');
