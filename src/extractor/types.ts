/**
 * Types of the Generic-Extractor engine. Types only: workflow code may `import type` from here freely.
 *
 * `ExtractorConfig` is the *normalized* configuration produced by `parseExtractorConfig` (config-schema.ts):
 * defaults applied, methods upper-cased, durations in milliseconds. It is plain JSON, so it can be a workflow input.
 */
import type { z } from 'zod';
import type { extractorConfigInputSchema } from './config-schema';
import type { DeferredValue, ExtractRunTimes } from './functions';

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
    // --- user functions and authentication (ge-functions) ---
    /** Headers whose values are user functions (`api.http.headers`, `config.http.headers`), evaluated per request. */
    functionHeaders?: Record<string, unknown>;
    // --- end user functions and authentication ---
  };
  // --- user functions and authentication (ge-functions) ---
  /** `api.authentication` (validated; `${env:NAME}` references kept) and OAuth credentials; `null`: none. */
  authentication?: AuthenticationConfig | null;
  // --- end user functions and authentication ---
}

// --- user functions and authentication (ge-functions) ---
/** `api.authentication` as configured (types `query`, `basic`, `login`, `oauth10`, `oauth20`, `oauth20.login`). */
export interface AuthenticationConfig {
  type: 'query' | 'basic' | 'login' | 'oauth10' | 'oauth20' | 'oauth20.login';
  /** The authentication object as written (functions unevaluated, references kept). */
  settings: JsonObject;
  /** `authorization.oauth_api.credentials` for the OAuth types (`#data`, `appKey`, `#appSecret`), else null. */
  oauth: JsonObject | null;
}
// --- end user functions and authentication ---

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
  // --- user functions (ge-functions) ---
  /** Placeholder name → the function applied to the parent value (`{path, function, args}` minus `path`). */
  placeholderFunctions?: Record<string, unknown>;
  // --- end user functions ---
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
    // --- user functions (ge-functions) ---
    /** `parameters.config` without `jobs`: the `attr` context of user functions. */
    attributes?: JsonObject;
    /**
     * Run times for `{"time": "previousStart" | "currentStart"}` (seconds). Set by whoever persists run state between
     * runs; absent: `previousStart` 0 (the reference's first run) and `currentStart` the job run's start.
     */
    runTimes?: ExtractRunTimes | null;
    // --- end user functions ---
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
  // --- user functions (ge-functions) ---
  /** Calls the activity finishes before sending (hashing, or secrets involved); `${fn:N}` marks where each goes. */
  deferred?: DeferredValue[];
  // --- end user functions ---
}
