/**
 * Types of the Generic-Extractor engine. Types only: workflow code may `import type` from here freely.
 *
 * `ExtractorConfig` is the *normalized* configuration produced by `parseExtractorConfig` (config-schema.ts):
 * defaults applied, methods upper-cased, durations in milliseconds. It is plain JSON, so it can be a workflow input.
 */
import type { z } from 'zod';
import type { extractorConfigInputSchema } from './config-schema';

/** The raw JSON a user writes (`{parameters: {api, config}}`), as accepted by the zod schema. */
export type ExtractorConfigInput = z.input<typeof extractorConfigInputSchema>;

/** Job methods as configured: `FORM` is a POST with an urlencoded body. */
export type JobMethod = 'GET' | 'POST' | 'FORM';

/** A JSON object (params, bodies). */
export type JsonObject = { [key: string]: unknown };

/** `forceStop`: limits that end pagination of one job. `null` = no limit. */
export interface ForceStopConfig {
  /** Exactly this many requests per job (0 in the input means no limit → null). */
  pages: number | null;
  /** Wall-clock budget per job in milliseconds (input: seconds, or a duration string like `"1 hour"`). */
  timeMs: number | null;
  /** Cumulative response-body bytes per job; the page that crosses the limit is kept. */
  volumeBytes: number | null;
}

/** `nextPageFlag`: a root property of the response telling whether more pages exist. */
export interface NextPageFlagConfig {
  /** Root property name (not a path). */
  field: string;
  /** Stop when the property's truthiness equals this. */
  stopOn: boolean;
  /** Value assumed when the property is absent or null (defaults to `stopOn`). */
  ifNotSet: boolean;
}

/** `limitStop`: stop once the number of extracted records reaches `count`, or the number at `field` (a path). */
export type LimitStopConfig = { count: number; field?: undefined } | { field: string; count?: undefined };

/** Stop conditions every scroller shares. */
export interface StopConditions {
  forceStop: ForceStopConfig | null;
  nextPageFlag: NextPageFlagConfig | null;
  limitStop: LimitStopConfig | null;
}

/** The job-like object used for every request after the first (`pagination.scrollRequest`). */
export interface ScrollRequestConfig {
  endpoint?: string;
  method?: JobMethod;
  params?: JsonObject;
}

/** `method: "response.param"`. */
export interface ResponseParamScrollerConfig extends StopConditions {
  method: 'response.param';
  /** Dot path into the whole decoded body (numeric segments index arrays). */
  responseParam: string;
  /** Name of the parameter that carries the value in the next request. */
  queryParam: string;
  /** Keep the job params on scroll requests (default false). */
  includeParams: boolean;
  scrollRequest: ScrollRequestConfig | null;
}

/** No `method`: one request per job (the stop conditions are accepted but have nothing to stop). */
export interface NoScrollerConfig extends StopConditions {
  method: 'none';
}

/** A single scroller. */
export type ScrollerConfig = ResponseParamScrollerConfig | NoScrollerConfig;

/** `method: "multiple"`: named scrollers, a job picks one with `scroller`. */
export interface MultiplePaginationConfig {
  method: 'multiple';
  scrollers: Record<string, ScrollerConfig>;
  /** Name of the scroller for jobs without `scroller` (reference: `pagination.default`); else the one named `default`. */
  default: string | null;
}

/** `parameters.api.pagination`. */
export type PaginationConfig = ScrollerConfig | MultiplePaginationConfig;

/** `parameters.api`. */
export interface ApiConfig {
  /** Absolute http(s) URL; relative endpoints resolve against it per RFC 3986 (so it should end with `/`). */
  baseUrl: string;
  pagination: PaginationConfig;
  http: {
    /** `api.http.headers` merged with `api.http.defaultOptions.headers` (the latter wins). */
    headers: Record<string, string>;
    /** `api.http.defaultOptions.params`: sent with every request, first and later. */
    defaultParams: JsonObject;
  };
  // --- ge-state: HTTP client options (begin) ---
  /** How requests are sent: retries, ignored statuses, timeouts, TLS, request signing (`HttpClientConfig`). */
  client: HttpClientConfig;
  // --- ge-state: HTTP client options (end) ---
}

// --- ge-state: HTTP client options, run state (begin) ---
/** `api.retryConfig`: the reference's retry policy. Absent: the fetcher's own defaults (`FetchPageOptions`). */
export interface RetryConfig {
  /** Retries after the first attempt (reference default 10). */
  maxRetries: number;
  /** Statuses that are retried (reference default 500, 502, 503, 504, 408, 420, 429); may include a 2xx such as 202. */
  codes: number[];
  /** Header telling how long to wait: seconds, a Unix timestamp or an HTTP date (default `Retry-After`). */
  retryHeader: string;
}

/** `parameters.aws.signature.credentials`: AWS Signature Version 4 on every request. */
export interface AwsSignatureConfig {
  accessKeyId: string;
  /** The secret key: a `${env:NAME}` reference (resolved by the activity only). */
  secretKey: string;
  serviceName: string;
  regionName: string;
}

/** How the page fetcher sends requests (`api.retryConfig`, `api.http.*`, `api.caCertificate`, …). Plain JSON. */
export interface HttpClientConfig {
  retry: RetryConfig | null;
  /** `api.http.ignoreErrors`: statuses whose body is used as data (`{"errorData": body}` when it is not JSON). */
  ignoreErrors: number[];
  /** `api.http.connectTimeout` in ms (`null`: fetcher default). */
  connectTimeoutMs: number | null;
  /** `api.http.requestTimeout` in ms: the whole request, body included (`null`: fetcher default). */
  requestTimeoutMs: number | null;
  /** `api.caCertificate`: PEM of the CA(s) trusted for https, instead of the system's. */
  caCertificate: string | null;
  /** `api.#clientCertificate`: a `${env:NAME}` reference to a PEM holding the client certificate and its key. */
  clientCertificate: string | null;
  awsSignature: AwsSignatureConfig | null;
}

/**
 * The times of a run of a configuration, in Unix seconds, for user functions (`{"time": "previousStart"}`):
 * `currentStart` is when this run started (workflow time), `previousStart` when the last successful run started
 * (0 when there was none, as in the reference).
 */
export interface ExtractRunTimes {
  previousStart: number;
  currentStart: number;
}
// --- ge-state: HTTP client options, run state (end) ---

/** Where a job's records are: a path with its delimiter; `path === delimiter` (e.g. `"."`) = the whole response. */
export interface DataFieldConfig {
  path: string;
  delimiter: string;
}

/** One job (or child job). */
export interface JobConfig {
  /** Stable id: `"0"`, `"0.1"` (second child of the first job), … Used to name state and outputs. */
  id: string;
  /** Relative (resolved against `baseUrl`) or absolute; may contain `{placeholder}`s for child jobs. */
  endpoint: string;
  method: JobMethod;
  params: JsonObject;
  /** `null`: auto-detect (top-level array, or the single array at the root). */
  dataField: DataFieldConfig | null;
  /** Output table name before sanitizing (default: the endpoint as configured). */
  dataType: string;
  /** Placeholder name → field path in the parent row (`"2:id"` names the grandparent's row). */
  placeholders: Record<string, string>;
  /** Scroller name for `pagination.method: "multiple"`. */
  scroller: string | null;
  children: JobConfig[];
}

/** The normalized configuration. */
export interface ExtractorConfig {
  api: ApiConfig;
  config: {
    outputBucket: string | null;
    debug: boolean;
    jobs: JobConfig[];
    // --- ge-state (begin) ---
    /** `incrementalOutput`: load the tables incrementally (manifest `incremental: true`). Default false. */
    incrementalOutput: boolean;
    /**
     * This run's times for `{"time": …}` functions (the same field as on branch ge-functions, which reads it); set by
     * the run (`withRunTimes`) from the run state, never by the configuration.
     */
    runTimes?: ExtractRunTimes | null;
    // --- ge-state (end) ---
  };
}

/** A request ready to send: plain JSON, checkpointed in workflow history. */
export interface RequestDescriptor {
  method: 'GET' | 'POST';
  /** Full URL including the query string. */
  url: string;
  headers: Record<string, string>;
  /** `json`: `value` is the JSON value to send; `form`: `value` is the urlencoded string. */
  body?: { kind: 'json'; value: unknown } | { kind: 'form'; value: string };
}
