/**
 * Spans of the plugin's own work (each Storage API, object-store and extracted-API request, each extracted page), as
 * cheap as a function call while tracing is off: the HTTP layers call {@link withSpan} / {@link recordSpan}, which do
 * nothing until `startTracing` (`tracing.ts`) installs a tracer in this process. This module imports no
 * OpenTelemetry package, so the packages stay optional. NOT workflow-safe (workflows get their spans from the SDK's
 * interceptors).
 *
 * Attribute names: `sapi.` for ours (`sapi.table_id`, `sapi.file_id`, `sapi.job_id`, `sapi.page_number`, …), the
 * OpenTelemetry semantic names for HTTP (`http.request.method`, `http.response.status_code`, `server.address`,
 * `url.path`). A URL never goes into an attribute with its query: see {@link urlAttributes}.
 */

/** Values a span attribute may take here (undefined ones are left out). */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** The span a traced function runs in: it may add attributes (a job id read from the response). */
export interface SpanHandle {
  set(attributes: SpanAttributes): void;
}

/** What a tracer installed by `startTracing` does; undefined while tracing is off. */
export interface SpanRecorder {
  /** Runs `fn` in a new span, child of the active one; the span ends when `fn` settles (an error marks it failed). */
  run<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** A finished span of work measured elsewhere (a worker thread), child of the active one. Times in epoch ms. */
  record(name: string, attributes: SpanAttributes, startMs: number, endMs: number, error?: string): void;
}

const NO_SPAN: SpanHandle = Object.freeze({ set: () => undefined });

let recorder: SpanRecorder | undefined;

/** Installs (or, with undefined, removes) the process's span recorder. For `startTracing` and its shutdown. */
export function installSpanRecorder(next: SpanRecorder | undefined): void {
  recorder = next;
}

/** True while a tracer is installed: callers may skip building attributes otherwise. */
export function tracingOn(): boolean {
  return recorder !== undefined;
}

/** Runs `fn` in a span named `name` when tracing is on; else just runs it. `attributes` may be a thunk (built only when on). */
export function withSpan<T>(name: string, attributes: SpanAttributes | (() => SpanAttributes), fn: (span: SpanHandle) => Promise<T>): Promise<T> {
  if (!recorder) return fn(NO_SPAN);
  return recorder.run(name, typeof attributes === 'function' ? attributes() : attributes, fn);
}

/** Records a finished span (work measured in a worker thread) when tracing is on. */
export function recordSpan(name: string, attributes: SpanAttributes, startMs: number, endMs: number, error?: string): void {
  recorder?.record(name, attributes, startMs, endMs, error);
}

/**
 * `server.address`, `server.port` and `url.path` of a URL: never its query (presigned URLs carry their signature
 * and credentials there, extracted APIs their keys) nor its user info.
 */
export function urlAttributes(url: string | URL): SpanAttributes {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return { 'server.address': u.hostname, 'server.port': u.port ? Number(u.port) : undefined, 'url.path': u.pathname };
  } catch {
    return {};
  }
}

/** The path part of `path` without its query (`/v2/storage/files/12?federationToken=1` → `/v2/storage/files/12`). */
export function pathWithoutQuery(path: string): string {
  const q = path.search(/[?#]/);
  return q === -1 ? path : path.slice(0, q);
}
