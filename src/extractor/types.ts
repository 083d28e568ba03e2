/**
 * Types of the Generic-Extractor engine. Types only: workflow code may `import type` from here freely.
 *
 * `ExtractorConfig` is the *normalized* configuration produced by `parseExtractorConfig` (config-schema.ts):
 * defaults applied, methods upper-cased, durations in milliseconds. It is plain JSON, so it can be a workflow input.
 */

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
  /** Cumulative size per job of the responses as compact JSON (PHP `json_encode` length); the page that crosses the limit is kept. */
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
interface NoScrollerConfig extends StopConditions {
  method: 'none';
}

// --- Pagination methods besides response.param (see ./paging.ts for their semantics) ---------------------------

/** `method: "offset"`: `<limitParam>=<limit>&<offsetParam>=<offset>`; stops on a page with fewer records than the limit. */
export interface OffsetScrollerConfig extends StopConditions {
  method: 'offset';
  /** Page size (`pagination.limit`); a non-empty job param `<limitParam>` overrides it. */
  limit: number;
  /** Default `limit`. */
  limitParam: string;
  /** Default `offset`. */
  offsetParam: string;
  /** Send the limit and offset params with the first request too (default true). */
  firstPageParams: boolean;
  /** Start at the job's non-empty `<offsetParam>` param instead of 0 (default false). */
  offsetFromJob: boolean;
}

/** `method: "pagenum"`: `<pageParam>=<page>` (+ `<limitParam>=<limit>` when a limit is set). */
export interface PageNumberScrollerConfig extends StopConditions {
  method: 'pagenum';
  /** Page size, or null: then only an empty page stops. A non-empty job param `<limitParam>` overrides it. */
  limit: number | null;
  /** Default `limit`. */
  limitParam: string;
  /** Default `page`. */
  pageParam: string;
  /** Number of the first page (default 1). */
  firstPage: number;
  /** Send the page (and limit) params with the first request too (default true). */
  firstPageParams: boolean;
}

/** `method: "response.url"` / `"zendesk.response.url"`: the next request is the URL found in the response. */
export interface ResponseUrlScrollerConfig extends StopConditions {
  method: 'response.url' | 'zendesk.response.url';
  /** Path of the next URL in the response (default `next_page`). */
  urlKey: string;
  /** Path delimiter of `urlKey` (default `.`; always `.` for zendesk). */
  delimiter: string;
  /** Keep the job params on the next requests (default false). */
  includeParams: boolean;
  /** The value is a query string whose params are merged over the job's, on the job's endpoint (default false). */
  paramIsQuery: boolean;
}

/** `method: "cursor"`: `<param>=<highest (or lowest, reverse) id seen so far + increment>`; stops on an empty page. */
export interface CursorScrollerConfig extends StopConditions {
  method: 'cursor';
  /** Path of the id in each record. */
  idKey: string;
  param: string;
  /** Use the lowest id instead of the highest (default false). */
  reverse: boolean;
  /** Added to the id (default 0). */
  increment: number;
}

/** A single scroller. */
export type ScrollerConfig =
  ResponseParamScrollerConfig | NoScrollerConfig | OffsetScrollerConfig | PageNumberScrollerConfig | ResponseUrlScrollerConfig | CursorScrollerConfig;
// --- end of pagination methods ----------------------------------------------------------------------------------

/**
 * `method: "multiple"`: named scrollers, a job picks one with `scroller`. Its own stop conditions apply on top of
 * the picked scroller's (checked first), as the reference decorates the multiple scroller.
 */
interface MultiplePaginationConfig extends StopConditions {
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
    /** Headers whose values are user functions (`api.http.headers`, `config.http.headers`), evaluated per request. */
    functionHeaders?: Record<string, unknown>;
  };
  /** `api.authentication` (validated; `${env:NAME}` references kept) and OAuth credentials; `null`: none. */
  authentication?: AuthenticationConfig | null;
  /** How requests are sent: retries, ignored statuses, timeouts, TLS, request signing (`HttpClientConfig`). */
  client: HttpClientConfig;
}

// HTTP client options, run state
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

// user functions and authentication
/** `api.authentication` as configured (types `query`, `basic`, `login`, `oauth10`, `oauth20`, `oauth20.login`). */
export interface AuthenticationConfig {
  type: 'query' | 'basic' | 'login' | 'oauth10' | 'oauth20' | 'oauth20.login';
  /** The authentication object as written (functions unevaluated, references kept). */
  settings: JsonObject;
  /** `authorization.oauth_api.credentials` for the OAuth types (`#data`, `appKey`, `#appSecret`), else null. */
  oauth: JsonObject | null;
}

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
  /** Placeholder name → the function applied to the parent value (`{path, function, args}` minus `path`). */
  placeholderFunctions?: Record<string, unknown>;
  /** Scroller name for `pagination.method: "multiple"`. */
  scroller: string | null;
  children: JobConfig[];
  /** `responseFilter` + `responseFilterDelimiter` (+ the config's `compatLevel`); absent or null: none. */
  responseFilter?: ResponseFilterConfig | null;
  /** `compatLevel` 1: rows go through the reference's legacy JSON parser (`json-parser-legacy.ts`); absent: the current one. */
  legacyJsonParser?: boolean;
  /** Child jobs: only parent rows passing this filter (the reference's grammar, `recursion-filter.ts`) start runs. */
  recursionFilter?: string;
  /**
   * Columns added to every row of this job's own table (not its child tables): `parameters.config.userData` for
   * top-level jobs, then the job's own `userData`. Values are JSON scalars, or a user function / context
   * reference object, evaluated when the job run starts (`user-data-functions.ts`).
   */
  userData?: Record<string, UserDataValue | UserDataFunction>;
  /** `parameters.config.mappings[dataType]`: rows go through this mapping instead of the JSON parser. */
  mapping?: TableMapping;
}

/** A job's `responseFilter`: properties kept as one JSON-encoded cell instead of being flattened. */
export interface ResponseFilterConfig {
  /** Paths (split at `delimiter`; `name[]` applies the rest to every item of the array). */
  paths: string[];
  /** `responseFilterDelimiter` (default `.`). */
  delimiter: string;
  /** `compatLevel` 2: empty values are left alone and scalars kept as text (3: everything JSON-encoded). */
  legacy: boolean;
}

// output mappings (`parameters.config.mappings`, the reference's keboola/php-csvmap)

/** A user-data value. */
export type UserDataValue = string | number | boolean | null;
/** A user function or `{attr}`/`{time}` reference in `userData`, evaluated per job run. */
export type UserDataFunction = Record<string, unknown>;

/** `type: "column"` (default) or `"user"` (value read from the user data: `userData` and `parent_<field>`). */
export interface ColumnMappingEntry {
  type: 'column' | 'user';
  /** Key in the record (a path, split by `delimiter`), or in the user data for `user` (split by `/`). */
  path: string;
  delimiter: string;
  /** Output column name. */
  destination: string;
  primaryKey: boolean;
  /** JSON-encode values that are not scalars (else such a value fails the extraction). */
  forceType: boolean;
}

/** `type: "table"`: the value at `path` (an array, or one value) becomes rows of another table. */
export interface TableMappingEntry {
  type: 'table';
  path: string;
  delimiter: string;
  /** Table name (raw; made safe like every table name). */
  destination: string;
  /** `null`: the destination is the mapping's own table (its rows are mapped with the same mapping). */
  tableMapping: TableMapping | null;
  parentKey: {
    /** No link column in the child, no link column in the parent. */
    disable: boolean;
    /** The link column is (part of) the child table's primary key. */
    primaryKey: boolean;
    /** Link column in the child (default `<parent table>_pk`). */
    destination: string | null;
  };
}

export type MappingEntry = ColumnMappingEntry | TableMappingEntry;

/** A table's mapping: the entries in configuration order (which is the column order). */
export interface TableMapping {
  /** Raw name of the table the mapping writes (the job's `dataType`, or the `destination` of a table entry). */
  table: string;
  entries: MappingEntry[];
}

/** The normalized configuration. */
export interface ExtractorConfig {
  api: ApiConfig;
  config: {
    outputBucket: string | null;
    debug: boolean;
    /** `compatLevel`: 3 (the default, latest), 2 (legacy `responseFilter`) or 1 (that and the legacy JSON parser). */
    compatLevel?: number;
    jobs: JobConfig[];
    /** `incrementalOutput`: load the tables incrementally (manifest `incremental: true`). Default false. */
    incrementalOutput: boolean;
    /**
     * This run's times for `{"time": …}` functions (request building reads them here); set by
     * the run (`withRunTimes`) from the run state, never by the configuration.
     */
    runTimes?: ExtractRunTimes | null;
    /** `parameters.config` without `jobs`: the `attr` context of user functions. */
    attributes?: JsonObject;
  };
  /**
   * One normalized configuration per iteration (each `parameters.config` with that iteration merged over it), run
   * in order into the same tables; absent without iterations. The configuration itself is the first iteration's.
   */
  iterations?: ExtractorConfig[];
}

/** A request ready to send: plain JSON, checkpointed in workflow history. */
export interface RequestDescriptor {
  method: 'GET' | 'POST';
  /** Full URL including the query string. */
  url: string;
  headers: Record<string, string>;
  /** `json`: `value` is the JSON value to send; `form`: `value` is the urlencoded string. */
  body?: { kind: 'json'; value: unknown } | { kind: 'form'; value: string };
  /** Calls the activity finishes before sending (hashing, or secrets involved); `${fn:N}` marks where each goes. */
  deferred?: DeferredValue[];
}

/** A deferred call of a request, finished by the activity right before sending. */
export interface DeferredValue {
  /** The call (plain JSON: `{function, args}`; arguments may hold `${env:NAME}` references). */
  call: unknown;
  /** "Now" of the place it came from (ms), so a retry computes the same value. */
  nowMs: number;
}
