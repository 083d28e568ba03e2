/**
 * OpenTelemetry tracing of the worker and the CLI, off unless configured (`SAPI_OTEL_ENDPOINT` or the standard
 * `OTEL_EXPORTER_OTLP_*` variables, or the plugin's `tracing` option). When on, one tracer provider per process sends
 * spans in batches to an OTLP/HTTP collector (JSON), and the Temporal SDK's OpenTelemetry plugin
 * (`@temporalio/interceptors-opentelemetry`) carries the trace from the client's start through the workflow to each
 * activity; the plugin's own spans (`spans.ts`) hang under the activity's. NOT workflow-safe.
 *
 * The OpenTelemetry packages are optional peer dependencies of the published package: they are loaded here (through
 * `optional-deps.ts`), on the first start of tracing, and a worker or CLI without tracing never loads them.
 */
import type * as OtelApi from '@opentelemetry/api';
import type * as OtelTraceBase from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { SimplePlugin } from '@temporalio/plugin';
import type { BundlerPlugin, WorkerPlugin } from '@temporalio/worker';
import { loadOptional } from '../optional-deps';
import { packageVersion } from '../version';
import { installSpanRecorder, type SpanAttributes, type SpanHandle, type SpanRecorder } from './spans';

/** Where and as what spans are sent. */
export interface TracingOptions {
  /**
   * OTLP/HTTP base URL of the collector (`SAPI_OTEL_ENDPOINT`, e.g. `http://otel-collector:4318`); spans go to
   * `<endpoint>/v1/traces`. Default: the exporter's own reading of `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
   * `OTEL_EXPORTER_OTLP_ENDPOINT` (then `http://localhost:4318`). Headers: `OTEL_EXPORTER_OTLP_HEADERS`.
   */
  endpoint?: string;
  /** The full traces URL, when it is not `<endpoint>/v1/traces` (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). */
  tracesUrl?: string;
  /** `service.name` of the spans (`OTEL_SERVICE_NAME`). Default `sapi-temporal-worker` (worker), `sapi-temporal-cli` (CLI). */
  serviceName?: string;
}

/**
 * The tracing the environment asks for, or undefined (off): `SAPI_OTEL_ENDPOINT`, else
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`; `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` turn it off. `OTEL_SERVICE_NAME` names the service.
 */
export function tracingFromEnv(env: NodeJS.ProcessEnv): TracingOptions | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined;
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || undefined;
  const sapi = env.SAPI_OTEL_ENDPOINT?.trim();
  if (sapi) return { endpoint: sapi, serviceName };
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return { tracesUrl: traces, serviceName };
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return { endpoint: base, serviceName };
  return undefined;
}

/** The URL spans are posted to, or undefined (the exporter's default from the `OTEL_*` variables). */
export function tracesUrlOf(options: TracingOptions): string | undefined {
  if (options.tracesUrl) return options.tracesUrl;
  if (options.endpoint) return `${options.endpoint.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/** Tracing as started in this process. */
export interface SapiTracing {
  /**
   * The Temporal SDK's `OpenTelemetryPlugin`: client interceptors (the start span, the trace header), the activity
   * and Nexus interceptors, the workflow interceptor module and the sink that exports workflow spans.
   */
  readonly plugin: SimplePlugin;
  /** The traces URL (undefined: the exporter's default). */
  readonly tracesUrl: string | undefined;
  /**
   * A client interceptor, put before the plugin's, that keeps a client's polling out of the trace: its queries and
   * describes (the CLI's progress, every second or so) make no span.
   */
  readonly quietPolling: WorkflowClientInterceptor;
  /** Runs `fn` in a new root span (the CLI's command), so every call it makes is one trace. */
  rootSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
  /** Sends the spans not sent yet and, on the last holder's call, stops the provider. Idempotent per holder. */
  shutdown(): Promise<void>;
}

interface Started {
  key: string;
  holders: number;
  plugin: SimplePlugin;
  tracesUrl: string | undefined;
  provider: OtelTraceBase.BasicTracerProvider;
  tracer: OtelApi.Tracer;
  api: typeof OtelApi;
  suppress: (context: OtelApi.Context) => OtelApi.Context;
}

/** The tracing started in this process (its plugin for a client), or undefined. */
export function activeTracing(): Pick<SapiTracing, 'plugin' | 'quietPolling'> | undefined {
  if (!started) return undefined;
  const { plugin } = started;
  return { plugin, quietPolling: quietPollingOf(started) };
}

let started: Started | undefined;

/**
 * Starts tracing in this process (once: a second start with the same options shares it, with other options it
 * throws), installs the span recorder of the plugin's HTTP layers, and registers the W3C trace-context propagator
 * and an AsyncLocalStorage context manager globally (unless the process already has its own). Throws
 * `SAPI_MISSING_DEPENDENCY`, naming the packages to install, when the OpenTelemetry packages are missing.
 */
export function startTracing(options: TracingOptions, defaultServiceName: string): SapiTracing {
  const tracesUrl = tracesUrlOf(options);
  const serviceName = options.serviceName ?? defaultServiceName;
  const key = `${tracesUrl ?? '(OTEL_EXPORTER_OTLP_*)'} as ${serviceName}`;
  if (started && started.key !== key) {
    throw new Error(`tracing is already on in this process (${started.key}); cannot start it again for ${key}`);
  }
  const current = (started ??= create(tracesUrl, serviceName, key));
  current.holders++;
  let released = false;
  return {
    plugin: current.plugin,
    tracesUrl: current.tracesUrl,
    quietPolling: quietPollingOf(current),
    rootSpan: (name, attributes, fn) => {
      const { api, tracer } = current;
      return tracer.startActiveSpan(name, { root: true, kind: api.SpanKind.INTERNAL, attributes: cleanAttributes(attributes) }, api.ROOT_CONTEXT, (span) =>
        settle(api, span, fn),
      );
    },
    async shutdown() {
      if (released) return;
      released = true;
      if (--current.holders > 0) {
        await current.provider.forceFlush();
        return;
      }
      if (started === current) started = undefined;
      installSpanRecorder(undefined);
      await current.provider.shutdown();
    },
  };
}

/**
 * The SDK's `OpenTelemetryPlugin` for a replay worker: what a traced worker bundles (its workflow interceptor module)
 * and the sink those interceptors call, with spans kept in memory and dropped (a replay records nothing). Starts
 * nothing global. Throws `SAPI_MISSING_DEPENDENCY`, naming the packages to install, when the OpenTelemetry packages are
 * missing.
 */
export function replayTracingPlugin(): WorkerPlugin & BundlerPlugin {
  const { Resource } = loadOptional('@opentelemetry/resources', 'tracing');
  const { InMemorySpanExporter, SimpleSpanProcessor } = loadOptional('@opentelemetry/sdk-trace-base', 'tracing');
  const { OpenTelemetryPlugin } = loadOptional('@temporalio/interceptors-opentelemetry', 'tracing');
  return new OpenTelemetryPlugin({ resource: Resource.empty(), spanProcessor: new SimpleSpanProcessor(new InMemorySpanExporter()) });
}

function quietPollingOf(current: Started): WorkflowClientInterceptor {
  const { api, suppress } = current;
  const quiet = <T>(next: () => Promise<T>): Promise<T> => api.context.with(suppress(api.context.active()), next);
  return { query: (input, next) => quiet(() => next(input)), describe: (input, next) => quiet(() => next(input)) };
}

function create(tracesUrl: string | undefined, serviceName: string, key: string): Started {
  const api = loadOptional('@opentelemetry/api', 'tracing');
  const { AsyncLocalStorageContextManager } = loadOptional('@opentelemetry/context-async-hooks', 'tracing');
  const { W3CTraceContextPropagator, suppressTracing } = loadOptional('@opentelemetry/core', 'tracing');
  const { OTLPTraceExporter } = loadOptional('@opentelemetry/exporter-trace-otlp-http', 'tracing');
  const { Resource } = loadOptional('@opentelemetry/resources', 'tracing');
  const { BasicTracerProvider, BatchSpanProcessor } = loadOptional('@opentelemetry/sdk-trace-base', 'tracing');
  const { OpenTelemetryPlugin } = loadOptional('@temporalio/interceptors-opentelemetry', 'tracing');

  const resource = Resource.default().merge(new Resource({ 'service.name': serviceName, 'service.version': packageVersion() }));
  // batches (OTEL_BSP_* tune them): a span costs a push onto a queue on the hot path, the export runs on a timer
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter(tracesUrl ? { url: tracesUrl } : {}));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // a context manager and a propagator of the process's own (an OpenTelemetry SDK the user started) win
  provider.register({ contextManager: new AsyncLocalStorageContextManager(), propagator: new W3CTraceContextPropagator() });
  const tracer = provider.getTracer('sapi-temporal', packageVersion());
  installSpanRecorder(recorderOf(api, tracer));
  // workflow spans come with the whole WorkflowInfo as attributes: only the keys that identify the run go on
  const plugin = new OpenTelemetryPlugin({ resource, spanProcessor: workflowInfoFilter(spanProcessor), tracer });
  return { key, holders: 0, plugin, tracesUrl, provider, tracer, api, suppress: suppressTracing };
}

/**
 * Of the WorkflowInfo fields the SDK's sink copies onto every workflow span, those kept: they name the run. Dropped:
 * `memo`, `lastResult`, `lastFailure`, `searchAttributes`, `retryPolicy`, `unsafe`, … (payloads the codec would keep
 * encrypted, and noise).
 */
const WORKFLOW_SPAN_KEPT_INFO: ReadonlySet<string> = new Set([
  'workflowId',
  'runId',
  'workflowType',
  'taskQueue',
  'namespace',
  'attempt',
  'historyLength',
  'firstExecutionRunId',
  'continuedFromExecutionRunId',
  'currentBuildId',
]);

/** Every WorkflowInfo field name, to tell them from the span's own attributes. */
const WORKFLOW_INFO_FIELDS = new Set([
  ...WORKFLOW_SPAN_KEPT_INFO,
  'searchAttributes',
  'typedSearchAttributes',
  'memo',
  'parent',
  'root',
  'lastResult',
  'lastFailure',
  'historySize',
  'continueAsNewSuggested',
  'targetWorkerDeploymentVersionChanged',
  'suggestedContinueAsNewReasons',
  'originalExecutionRunId',
  'startTime',
  'runStartTime',
  'executionTimeoutMs',
  'executionExpirationTime',
  'runTimeoutMs',
  'taskTimeoutMs',
  'retryPolicy',
  'cronSchedule',
  'cronScheduleToScheduleInterval',
  'currentDeploymentVersion',
  'unsafe',
  'priority',
]);

/** Removes the WorkflowInfo fields not in {@link WORKFLOW_SPAN_KEPT_INFO} from a span's attributes (in place). */
export function dropWorkflowInfo(attributes: Record<string, unknown>): void {
  for (const key of Object.keys(attributes)) if (WORKFLOW_INFO_FIELDS.has(key) && !WORKFLOW_SPAN_KEPT_INFO.has(key)) delete attributes[key];
}

function workflowInfoFilter(inner: OtelTraceBase.SpanProcessor): OtelTraceBase.SpanProcessor {
  return {
    onStart: (span, context) => inner.onStart(span, context),
    onEnd(span) {
      dropWorkflowInfo(span.attributes as Record<string, unknown>);
      inner.onEnd(span);
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
}

function recorderOf(api: typeof OtelApi, tracer: OtelApi.Tracer): SpanRecorder {
  return {
    run: (name, attributes, fn) =>
      tracer.startActiveSpan(name, { kind: api.SpanKind.CLIENT, attributes: cleanAttributes(attributes) }, (span) =>
        settle(api, span, () => fn(handleOf(span))),
      ),
    record(name, attributes, startMs, endMs, error) {
      const span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes: cleanAttributes(attributes), startTime: startMs }, api.context.active());
      if (error !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.slice(0, MAX_STATUS_MESSAGE) });
      span.end(endMs);
    },
  };
}

function handleOf(span: OtelApi.Span): SpanHandle {
  return { set: (attributes) => span.setAttributes(cleanAttributes(attributes)) };
}

/** Longest span status message kept (an error's first line is enough to find its log). */
const MAX_STATUS_MESSAGE = 300;

async function settle<T>(api: typeof OtelApi, span: OtelApi.Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const message = err instanceof Error ? `${(err as { code?: unknown }).code ?? err.name}: ${err.message}` : String(err);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: message.split('\n')[0]!.slice(0, MAX_STATUS_MESSAGE) });
    throw err;
  } finally {
    span.end();
  }
}

/** A string value that carries a query with a signature or credential is cut at its `?`. */
const SIGNED_QUERY = /\?.*(sig=|signature|x-amz-|token=|credential|key=)/i;

/**
 * The attributes without undefined values; a value that still carries a signed query (it should not: callers pass
 * paths) loses the query. The last line of defence against a presigned URL in a span.
 */
export function cleanAttributes(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const clean: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    clean[key] = typeof value === 'string' && SIGNED_QUERY.test(value) ? value.slice(0, value.indexOf('?')) : value;
  }
  return clean;
}
