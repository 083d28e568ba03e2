/**
 * The Generic-Extractor configuration: zod schema (structure and every rule, with the reference's wording where it
 * has one) and `parseExtractorConfig`, which returns the normalized, frozen `ExtractorConfig`.
 *
 * NOT workflow-safe (zod values): used by activities and the CLI. Workflows `import type` from `./types`.
 */
import { z } from 'zod';
import { normalizeAuthentication, authenticationSchema } from './auth/schema';
import { parseDurationMs } from './duration';
import { cursorShape, normalizePagingScroller, offsetShape, pageNumberShape, responseUrlShape, zendeskResponseUrlShape } from './pagination-schema';
import { ExtractorConfigError, type ConfigIssue } from './errors';
import { applyJobFeatures } from './mapping-config';
import { safeName } from './table-names';
import type {
  ApiConfig,
  DataFieldConfig,
  ExtractorConfig,
  ForceStopConfig,
  JobConfig,
  JobMethod,
  JsonObject,
  LimitStopConfig,
  NextPageFlagConfig,
  PaginationConfig,
  ScrollRequestConfig,
  ResponseFilterConfig,
  ScrollerConfig,
  StopConditions,
} from './types';
import { DEFAULT_RESPONSE_FILTER_DELIMITER } from './response-filter';
import { isHttpUrl } from './url';
import { unknownKeyIssues } from './known-keys';
// --- ge-state (begin) ---
import { parseIterations } from './config-iterations'; // ge-iter
import { apiClientShape, apiHttpClientShape, awsSchema, configHeaders, configRunShape, normalizeHttpClient, requiredHeaderIssues, sshProxySchema } from './config-http-client';
// --- ge-state (end) ---
import { DeferredCall, evaluateFunctions, flattenContext, functionIssues, isFunctionCall } from './functions';
import { nodeCryptoFunctions } from './http/node-functions';

/** Pagination methods of the reference that this extractor does not implement (a clear error, not "unknown"): none left. */
export const UNSUPPORTED_PAGINATION_METHODS: string[] = [];

/** Pagination methods this extractor implements (besides no pagination). */
export const SUPPORTED_PAGINATION_METHODS = ['response.param', 'offset', 'pagenum', 'response.url', 'zendesk.response.url', 'cursor', 'multiple'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** PHP's `gettype` names, used in the reference's messages. */
function phpType(value: unknown): string {
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'double';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** Empty sections (null, "", false, {}, []) are "not set", as in the reference (`!empty(...)`). */
const emptyToUndefined = (v: unknown): unknown =>
  v === null || v === '' || v === false || v === 0 || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0)
    ? undefined
    : v;

const METHOD_MESSAGE = 'The "method" property must be one of "GET", "POST", "FORM" (case-insensitive).';
const methodSchema = z
  .string({ error: METHOD_MESSAGE })
  .refine((v) => ['GET', 'POST', 'FORM'].includes(v.toUpperCase()), { error: METHOD_MESSAGE });

const paramsSchema = (what: string) => z.record(z.string(), z.unknown(), { error: `The '${what}' property must be an object.` });

const nonNegativeInt = (message: string) =>
  z.union([z.number({ error: message }).int({ error: message }).nonnegative({ error: message }), z.string({ error: message }).regex(/^\d+$/, { error: message })], {
    error: message,
  });

const forceStopSchema = z.looseObject(
  {
    pages: nonNegativeInt("'forceStop.pages' must be a non-negative integer (0 means no limit).").optional(),
    time: z
      .union([z.number().nonnegative({ error: "'forceStop.time' must not be negative." }), z.string()], {
        error: "'forceStop.time' must be a number of seconds or a duration such as \"1 hour\".",
      })
      .refine((v) => parseDurationMs(v) !== null, {
        error: "'forceStop.time' must be a number of seconds or a duration such as \"1 hour\" or \"30 seconds\".",
      })
      .optional(),
    volume: nonNegativeInt("'forceStop.volume' must be a non-negative integer number of bytes.").optional(),
  },
  { error: "'forceStop' must be an object with 'pages', 'time' or 'volume'." },
);

const nextPageFlagSchema = z.looseObject(
  {
    field: z.string({ error: "'field' has to be specified for 'nextPageFlag'" }).min(1, { error: "'field' has to be specified for 'nextPageFlag'" }),
    stopOn: z.boolean({
      error: (iss) =>
        iss.input === undefined || iss.input === null
          ? "'stopOn' value must be set to a boolean value for 'nextPageFlag'"
          : `'stopOn' value must be set to a boolean value for 'nextPageFlag', given '${phpType(iss.input)}' type.`,
    }),
    ifNotSet: z.boolean({ error: (iss) => `'ifNotSet' value must be boolean, given '${phpType(iss.input)}' type.` }).nullish(),
  },
  { error: "'nextPageFlag' must be an object with 'field' and 'stopOn'." },
);

const limitStopSchema = z
  .looseObject(
    {
      count: z.preprocess(emptyToUndefined, nonNegativeInt("'limitStop.count' must be a positive integer.").optional()),
      field: z.preprocess(emptyToUndefined, z.string({ error: "'limitStop.field' must be a path string." }).optional()),
    },
    { error: "'limitStop' must be an object with 'count' or 'field'." },
  )
  .refine((v) => !isObject(v) || v.count !== undefined || v.field !== undefined, {
    error: "One of 'limitStop.field' or 'limitStop.count' attributes is required.",
    when: () => true,
  })
  .refine((v) => !isObject(v) || v.count === undefined || v.field === undefined, {
    error: "Specify only one of 'limitStop.field' or 'limitStop.count'.",
    when: () => true,
  });

const stopConditionShape = {
  forceStop: z.preprocess(emptyToUndefined, forceStopSchema.optional()),
  nextPageFlag: z.preprocess(emptyToUndefined, nextPageFlagSchema.optional()),
  limitStop: z.preprocess(emptyToUndefined, limitStopSchema.optional()),
};

const scrollRequestSchema = z.looseObject(
  {
    endpoint: z
      .string({ error: "'pagination.scrollRequest.endpoint' must be a non-empty string." })
      .min(1, { error: "'pagination.scrollRequest.endpoint' must be a non-empty string." })
      .optional(),
    method: methodSchema.optional(),
    params: paramsSchema('pagination.scrollRequest.params').optional(),
  },
  { error: "'pagination.scrollRequest' must be a job-like object (endpoint, method, params)." },
);

const noScrollerSchema = z.looseObject({
  method: z.union([z.undefined(), z.null(), z.literal('')]),
  ...stopConditionShape,
});

const responseParamScrollerSchema = z.looseObject({
  method: z.literal('response.param'),
  responseParam: z
    .string({ error: "Missing required 'pagination.responseParam' parameter." })
    .min(1, { error: "Missing required 'pagination.responseParam' parameter." }),
  queryParam: z
    .string({ error: "Missing required 'pagination.queryParam' parameter." })
    .min(1, { error: "Missing required 'pagination.queryParam' parameter." }),
  includeParams: z.boolean({ error: "'pagination.includeParams' must be a boolean." }).nullish(),
  scrollRequest: z.preprocess(emptyToUndefined, scrollRequestSchema.optional()),
  ...stopConditionShape,
});

function unknownMethodMessage(input: unknown): string {
  const method = isObject(input) ? input.method : undefined;
  const shown = typeof method === 'string' ? method : JSON.stringify(method);
  if (typeof method === 'string' && UNSUPPORTED_PAGINATION_METHODS.includes(method)) {
    return `Pagination method '${method}' is not supported by this extractor (supported: ${SUPPORTED_PAGINATION_METHODS.join(', ')}).`;
  }
  return `Unknown pagination method '${shown}'`;
}

// --- pagination methods of ./paging (shapes in ./pagination-schema) ---
const pagingScrollerSchemas = [
  z.looseObject({ ...offsetShape, ...stopConditionShape }),
  z.looseObject({ ...pageNumberShape, ...stopConditionShape }),
  z.looseObject({ ...responseUrlShape, ...stopConditionShape }),
  z.looseObject({ ...zendeskResponseUrlShape, ...stopConditionShape }),
  z.looseObject({ ...cursorShape, ...stopConditionShape }),
] as const;
// --- end ---

const scrollerSchema = z.discriminatedUnion('method', [noScrollerSchema, responseParamScrollerSchema, ...pagingScrollerSchemas], {
  error: (iss) => (iss.code === 'invalid_union' ? unknownMethodMessage(iss.input) : undefined),
});

const multipleSchema = z
  .looseObject({
    method: z.literal('multiple'),
    scrollers: z.record(z.string(), scrollerSchema, {
      error: 'At least one scroller must be configured for "multiple" scroller.',
    }),
    default: z.string({ error: "'pagination.default' must be a scroller name." }).nullish(),
    // the reference applies these on top of the picked scroller's own
    ...stopConditionShape,
  })
  .refine((v) => !isObject(v.scrollers) || Object.keys(v.scrollers).length > 0, {
    error: 'At least one scroller must be configured for "multiple" scroller.',
    path: ['scrollers'],
  })
  .refine((v) => !v.default || !isObject(v.scrollers) || v.default in v.scrollers, {
    error: (iss) => `Default scroller '${String((iss.input as { default?: unknown }).default)}' does not exist`,
    path: ['default'],
  });

const paginationSchema = z.discriminatedUnion('method', [noScrollerSchema, responseParamScrollerSchema, ...pagingScrollerSchemas, multipleSchema], {
  error: (iss) => (iss.code === 'invalid_union' ? unknownMethodMessage(iss.input) : undefined),
});

const dataFieldSchema = z.union(
  [
    z.string(),
    z.looseObject({
      path: z.string({ error: "'dataField.path' must be set!" }).min(1, { error: "'dataField.path' must be set!" }),
      delimiter: z.string({ error: "'dataField.delimiter' must be a string." }).min(1, { error: "'dataField.delimiter' must not be empty." }).nullish(),
    }),
  ],
  { error: "'dataField' must be either a path string or an object with 'path' attribute." },
);

const placeholdersSchema = z.record(
  z.string(),
  z.union(
    [
      z.string(),
      // user functions (ge-functions): `{path, function, args}` or `{path, placeholder: "value"}`
      z.looseObject({ path: z.string().min(1) }),
    ],
    {
      error: (iss) =>
        isObject(iss.input)
          ? "The path for placeholder must be a string value or an object containing 'path' and 'function'."
          : `The path for placeholder must be a string value, given '${phpType(iss.input)}'.`,
    },
  ),
  { error: "The 'placeholders' property must be an object mapping placeholder names to parent fields." },
);

// --- JSON parser parity (ge-json) ---
const RESPONSE_FILTER_MESSAGE = "The 'responseFilter' property must be a path string or an array of path strings.";

/** `compatLevel` values as the reference reads them: empty (null, "", 0, "0") means the latest, 3. */
const compatLevelSchema = z.preprocess(
  (v) => (emptyToUndefined(v) === undefined || v === '0' ? undefined : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v),
  z
    .number({ error: "'compatLevel' must be 1, 2 or 3 (unset means 3, the latest)." })
    .refine((v) => v === 1 || v === 2 || v === 3, { error: "'compatLevel' must be 1, 2 or 3 (unset means 3, the latest)." })
    .optional(),
);

function normalizeResponseFilter(raw: Raw, compatLevel: number): ResponseFilterConfig | null {
  if (raw.responseFilter === undefined) return null;
  return {
    paths: typeof raw.responseFilter === 'string' ? [raw.responseFilter] : (raw.responseFilter as string[]),
    delimiter: (raw.responseFilterDelimiter as string | undefined) ?? DEFAULT_RESPONSE_FILTER_DELIMITER,
    legacy: compatLevel <= 2,
  };
}
// --- end JSON parser parity ---

/** One job; `children` are jobs too. */
export const jobSchema: z.ZodType<unknown> = z.lazy(() =>
  z.looseObject(
    {
      endpoint: z
        .string({ error: "The 'endpoint' property must be set in job." })
        .min(1, { error: "The 'endpoint' property must be set in job." }),
      method: methodSchema.nullish(),
      params: z.preprocess(emptyToUndefined, paramsSchema('params').optional()),
      dataField: z.preprocess(emptyToUndefined, dataFieldSchema.optional()),
      dataType: z.string({ error: "The 'dataType' property must be a string." }).nullish(),
      placeholders: z.preprocess(emptyToUndefined, placeholdersSchema.optional()),
      scroller: z.string({ error: "The 'scroller' property must be a scroller name." }).nullish(),
      // --- JSON parser parity (ge-json) ---
      responseFilter: z.preprocess(
        emptyToUndefined,
        z
          .union([z.string(), z.array(z.string({ error: RESPONSE_FILTER_MESSAGE }))], { error: RESPONSE_FILTER_MESSAGE })
          .optional(),
      ),
      responseFilterDelimiter: z.preprocess(
        emptyToUndefined,
        z.string({ error: "The 'responseFilterDelimiter' property must be a non-empty string." }).optional(),
      ),
      // --- end JSON parser parity ---
      children: z.preprocess(
        emptyToUndefined,
        z.array(jobSchema, { error: "The 'children' property must be an array of jobs." }).optional(),
      ),
    },
    { error: 'Job configuration must be an object.' },
  ),
);

const headersSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.looseObject({})]), {
  error: "'http.headers' must be an object of header names and values.",
});

/** The whole configuration file: `{parameters: {api, config}}`. Unknown keys are allowed (and ignored). */
export const extractorConfigInputSchema = z.looseObject({
  parameters: z.looseObject(
    {
      api: z.looseObject(
        {
          baseUrl: z.union(
            [
              z
                .string({ error: "The 'baseUrl' attribute must be set in API configuration" })
                .min(1, { error: "The 'baseUrl' attribute must be set in API configuration", abort: true })
                .refine(isHttpUrl, { error: "The 'baseUrl' attribute in API configuration is not a valid URL" }),
              // user functions (ge-functions): a function object, evaluated in normalization
              z.looseObject({ function: z.unknown() }),
            ],
            {
              error: (iss) =>
                typeof iss.input === 'string' && iss.input !== ''
                  ? "The 'baseUrl' attribute in API configuration is not a valid URL"
                  : "The 'baseUrl' attribute must be set in API configuration",
            },
          ),
          // user functions and authentication (ge-functions)
          authentication: z.preprocess(emptyToUndefined, authenticationSchema.optional()),
          pagination: z.preprocess(emptyToUndefined, paginationSchema.optional()),
          http: z
            .looseObject(
              {
                headers: z.preprocess(emptyToUndefined, headersSchema.optional()),
                defaultOptions: z
                  .looseObject(
                    {
                      params: z.preprocess(emptyToUndefined, paramsSchema('http.defaultOptions.params').optional()),
                      headers: z.preprocess(emptyToUndefined, headersSchema.optional()),
                    },
                    { error: "'http.defaultOptions' must be an object." },
                  )
                  .nullish(),
                ...apiHttpClientShape, // ge-state
              },
              { error: "'api.http' must be an object." },
            )
            .nullish(),
          ...apiClientShape, // ge-state
        },
        { error: "The 'api' section is required in configuration." },
      ),
      config: z.looseObject(
        {
          outputBucket: z.string({ error: "'outputBucket' must be a string." }).nullish(),
          compatLevel: compatLevelSchema, // JSON parser parity (ge-json)
          debug: z.boolean({ error: "'debug' must be a boolean." }).nullish(),
          jobs: z
            .array(jobSchema, { error: "The 'jobs' section is required in the configuration." })
            .min(1, { error: "The 'jobs' section is required in the configuration." }),
          ...configRunShape, // ge-state
        },
        { error: "The 'config' section is required in the configuration." },
      ),
      // --- ge-state (begin) ---
      aws: awsSchema,
      sshProxy: sshProxySchema,
      // --- ge-state (end) ---
    },
    { error: "The 'parameters' section is required in the configuration." },
  ),
});

/** Formats a zod path as `parameters.config.jobs[0].endpoint`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((acc, seg) => {
    if (typeof seg === 'number') return `${acc}[${seg}]`;
    return acc === '' ? String(seg) : `${acc}.${String(seg)}`;
  }, '');
}

// ---------------------------------------------------------------------------------------------------------------
// Normalization (after the schema accepted the input).

type Raw = Record<string, unknown>;

function toInt(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  const n = typeof v === 'number' ? v : Number(v);
  return n > 0 ? Math.floor(n) : null;
}

function normalizeStops(raw: Raw): StopConditions {
  const fs = raw.forceStop as Raw | undefined;
  const forceStop: ForceStopConfig | null = fs
    ? {
        pages: toInt(fs.pages),
        timeMs: fs.time === undefined ? null : parseDurationMs(fs.time as number | string) || null,
        volumeBytes: toInt(fs.volume),
      }
    : null;
  const np = raw.nextPageFlag as Raw | undefined;
  const nextPageFlag: NextPageFlagConfig | null = np
    ? { field: np.field as string, stopOn: np.stopOn as boolean, ifNotSet: (np.ifNotSet ?? np.stopOn) as boolean }
    : null;
  const ls = raw.limitStop as Raw | undefined;
  const limitStop: LimitStopConfig | null = ls
    ? ls.field !== undefined
      ? { field: ls.field as string }
      : { count: Number(ls.count) }
    : null;
  return { forceStop, nextPageFlag, limitStop };
}

function normalizeScroller(raw: Raw): ScrollerConfig {
  const stops = normalizeStops(raw);
  const paging = normalizePagingScroller(raw, stops);
  if (paging) return paging;
  if (raw.method !== 'response.param') return { method: 'none', ...stops };
  const sr = raw.scrollRequest as Raw | undefined;
  const scrollRequest: ScrollRequestConfig | null = sr
    ? {
        ...(sr.endpoint !== undefined ? { endpoint: sr.endpoint as string } : {}),
        ...(sr.method !== undefined && sr.method !== null ? { method: (sr.method as string).toUpperCase() as JobMethod } : {}),
        ...(sr.params !== undefined ? { params: sr.params as JsonObject } : {}),
      }
    : null;
  return {
    method: 'response.param',
    responseParam: raw.responseParam as string,
    queryParam: raw.queryParam as string,
    includeParams: raw.includeParams === true,
    scrollRequest,
    ...stops,
  };
}

function normalizePagination(raw: Raw | undefined): PaginationConfig {
  if (!raw) return normalizeScroller({});
  if (raw.method !== 'multiple') return normalizeScroller(raw);
  const scrollers: Record<string, ScrollerConfig> = {};
  for (const [name, cfg] of Object.entries(raw.scrollers as Record<string, Raw>)) scrollers[name] = normalizeScroller(cfg);
  return { method: 'multiple', scrollers, default: (raw.default as string | null | undefined) || null, ...normalizeStops(raw) };
}

function normalizeDataField(raw: unknown): DataFieldConfig | null {
  if (raw === undefined) return null;
  if (typeof raw === 'string') return { path: raw, delimiter: '.' };
  const obj = raw as Raw;
  return { path: obj.path as string, delimiter: (obj.delimiter as string | null | undefined) || '.' };
}

function normalizeJob(raw: Raw, id: string, compatLevel: number): JobConfig {
  const endpoint = raw.endpoint as string;
  return {
    id,
    endpoint,
    method: ((raw.method as string | null | undefined) ?? 'GET').toUpperCase() as JobMethod,
    params: (raw.params as JsonObject | undefined) ?? {},
    dataField: normalizeDataField(raw.dataField),
    dataType: (raw.dataType as string | null | undefined) || endpoint,
    ...normalizePlaceholders(raw.placeholders as Record<string, unknown> | undefined),
    scroller: (raw.scroller as string | null | undefined) || null,
    children: ((raw.children as Raw[] | undefined) ?? []).map((child, i) => normalizeJob(child, `${id}.${i}`, compatLevel)),
    responseFilter: normalizeResponseFilter(raw, compatLevel), // JSON parser parity (ge-json)
    ...(compatLevel <= 1 ? { legacyJsonParser: true } : {}), // ge-legacy: the reference's legacy JSON parser
  };
}

function stringHeaders(raw: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries((raw as Raw | undefined) ?? {}).filter(([, v]) => !isObject(v)).map(([k, v]) => [k, String(v)]));
}

// --- user functions and authentication (ge-functions) ---
/** Placeholders: `{name: path}`, and for `{path, function, …}` objects the function part (evaluated per parent row). */
function normalizePlaceholders(raw: Record<string, unknown> | undefined): Pick<JobConfig, 'placeholders' | 'placeholderFunctions'> {
  const placeholders: Record<string, string> = {};
  const functions: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (typeof value === 'string') placeholders[name] = value;
    else {
      const { path, ...fn } = value as Raw;
      placeholders[name] = path as string;
      functions[name] = fn;
    }
  }
  return Object.keys(functions).length > 0 ? { placeholders, placeholderFunctions: functions } : { placeholders };
}

/** Headers whose value is a function object, later sources winning (a plain value later removes a function). */
function functionHeadersOf(...sources: unknown[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const source of sources) {
    for (const [k, v] of Object.entries((source as Raw | undefined) ?? {})) {
      if (isObject(v)) result[k] = v;
      else delete result[k];
    }
  }
  return result;
}

/** `parameters.config` without `jobs`: the `attr` context. */
function attributesOf(configRaw: Raw): JsonObject {
  const { jobs: _jobs, ...attributes } = configRaw;
  return attributes;
}

/** A function `baseUrl` evaluated with the `attr` context (as the reference, once); issues when it cannot be. */
function evaluateBaseUrl(raw: unknown, attributes: JsonObject, issues: ConfigIssue[]): string {
  if (typeof raw === 'string') return raw;
  const path = 'parameters.api.baseUrl';
  try {
    // evaluated once, when the configuration is validated (the activity's result is what history keeps)
    const value = evaluateFunctions(raw, { attr: attributes }, { nowMs: Date.now(), crypto: nodeCryptoFunctions, path });
    if (value instanceof DeferredCall || (typeof value === 'string' && /\$\{env:/.test(value))) {
      issues.push({ path, message: 'The "baseUrl" function uses a secret (${env:…}); a base URL cannot hold secrets (it is shown in progress and history).' });
      return 'http://invalid.invalid/';
    }
    if (typeof value !== 'string' || !isHttpUrl(value)) {
      issues.push({ path, message: `The "baseUrl" attribute in API configuration resulted in an invalid URL (${JSON.stringify(value)})` });
      return 'http://invalid.invalid/';
    }
    return value;
  } catch (err) {
    if (err instanceof ExtractorConfigError) issues.push(...err.issues);
    else throw err;
    return 'http://invalid.invalid/';
  }
}

/**
 * Static checks of every place that takes functions (names, args, `attr`/`time` references), before any request:
 * job and scroll params, placeholders, headers, authentication.
 */
function functionPlacementIssues(config: ExtractorConfig, issues: ConfigIssue[]): void {
  const attr = flattenContext(config.config.attributes ?? {});
  const time = { previousStart: 0, currentStart: 0 };
  const visit = (job: JobConfig, path: string) => {
    issues.push(...functionIssues(job.params, `${path}.params`, { attr, time }));
    for (const [name, fn] of Object.entries(job.placeholderFunctions ?? {})) {
      issues.push(...functionIssues(fn, `${path}.placeholders.${name}`, { placeholder: { value: '' } }, ['urlencode']));
    }
    job.children.forEach((child, i) => visit(child, `${path}.children[${i}]`));
  };
  config.config.jobs.forEach((job, i) => visit(job, `parameters.config.jobs[${i}]`));
  issues.push(...functionIssues(config.api.http.defaultParams, 'parameters.api.http.defaultOptions.params', { attr, time }));
  issues.push(...functionIssues(config.api.http.functionHeaders ?? {}, 'parameters.api.http.headers', { attr }));
  for (const [name, value] of Object.entries(config.api.http.functionHeaders ?? {})) {
    const isReference = isObject(value) && Object.keys(value).length === 1 && 'attr' in value;
    if (!isFunctionCall(value) && !isReference) {
      issues.push({ path: `parameters.api.http.headers.${name}`, message: `Invalid configuration: invalid type "object" in headers at path: ${name} (a header is a string, a number, a function or an {"attr": …} reference)` });
    }
  }
  const pagination = config.api.pagination;
  const scrollers = pagination.method === 'multiple' ? Object.entries(pagination.scrollers) : [['', pagination] as const];
  for (const [name, scroller] of scrollers) {
    if (scroller.method === 'response.param' && scroller.scrollRequest?.params) {
      issues.push(...functionIssues(scroller.scrollRequest.params, `parameters.api.pagination${name ? `.scrollers.${name}` : ''}.scrollRequest.params`, { attr, time }));
    }
  }
  const auth = config.api.authentication;
  if (auth) {
    const base = 'parameters.api.authentication';
    const s = auth.settings;
    const login = isObject(s.loginRequest) ? s.loginRequest : {};
    const api = isObject(s.apiRequest) ? s.apiRequest : {};
    const loginContexts: Record<string, Record<string, unknown> | null> = auth.type === 'oauth20.login' ? { attr, consumer: null, user: null } : { attr };
    if (auth.type === 'query') issues.push(...functionIssues(s.query, `${base}.query`, { attr, query: null, request: null }));
    if (auth.type === 'oauth20') {
      issues.push(...functionIssues(s.query ?? {}, `${base}.query`, { query: null, request: null, authorization: null }));
      issues.push(...functionIssues(s.headers ?? {}, `${base}.headers`, { query: null, request: null, authorization: null }));
    }
    if (auth.type === 'login' || auth.type === 'oauth20.login') {
      issues.push(...functionIssues(login.params ?? {}, `${base}.loginRequest.params`, loginContexts));
      issues.push(...functionIssues(login.headers ?? {}, `${base}.loginRequest.headers`, loginContexts));
      issues.push(...functionIssues(api.query ?? {}, `${base}.apiRequest.query`, { attr, response: null }));
      issues.push(...functionIssues(api.headers ?? {}, `${base}.apiRequest.headers`, { attr, response: null }));
    }
  }
}
// --- end user functions and authentication ---

/** Rules that need the whole configuration: scroller names and table names. */
function crossChecks(config: ExtractorConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const pagination = config.api.pagination;
  const visit = (job: JobConfig, path: string) => {
    if (pagination.method === 'multiple' && job.scroller !== null && !(job.scroller in pagination.scrollers)) {
      issues.push({
        path: `${path}.scroller`,
        message: `Scroller '${job.scroller}' not set in API definitions. Scrollers defined: ${Object.keys(pagination.scrollers).join(', ')}`,
      });
    }
    if (safeName(job.dataType) === '') {
      issues.push({
        path: `${path}.dataType`,
        message: `The table name made from '${job.dataType}' is empty: set 'dataType' to a name with letters or digits.`,
      });
    }
    job.children.forEach((child, i) => visit(child, `${path}.children[${i}]`));
  };
  config.config.jobs.forEach((job, i) => visit(job, `parameters.config.jobs[${i}]`));
  return issues;
}

/**
 * Validates a Generic-Extractor configuration (the parsed JSON of the file) and returns it normalized and frozen.
 * Throws `ExtractorConfigError` (code `SAPI_EXTRACT_CONFIG_INVALID`) listing every issue with its path, before
 * any request is sent.
 */
export function parseExtractorConfig(json: unknown): ExtractorConfig {
  // --- ge-iter: `parameters.iterations`: every iteration parsed as a configuration of its own ---
  const iterated = parseIterations(json, parseExtractorConfig);
  if (iterated) return deepFreeze(iterated);
  // --- end ge-iter ---
  const parsed = extractorConfigInputSchema.safeParse(json);
  if (!parsed.success) {
    throw new ExtractorConfigError(parsed.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message })));
  }
  // a key this extractor does not read would be ignored silently: refused, named (known-keys.ts)
  const unknownKeys = unknownKeyIssues(json);
  if (unknownKeys.length > 0) throw new ExtractorConfigError(unknownKeys);
  const params = parsed.data.parameters as Raw;
  const apiRaw = params.api as Raw;
  const http = (apiRaw.http as Raw | null | undefined) ?? {};
  const defaults = (http.defaultOptions as Raw | null | undefined) ?? {};
  const configRaw = params.config as Raw;
  // user functions and authentication (ge-functions)
  const attributes = attributesOf(configRaw);
  const configHttp = isObject(configRaw.http) ? configRaw.http : {};
  const fnIssues: ConfigIssue[] = [];
  // same precedence as the plain headers: config.http.headers replace api.http.headers, defaultOptions.headers win
  const functionHeaders = functionHeadersOf(http.headers, configHttp.headers, defaults.headers);
  const authentication = normalizeAuthentication(apiRaw.authentication, attributes, (json as Raw).authorization, fnIssues);
  const api: ApiConfig = {
    baseUrl: evaluateBaseUrl(apiRaw.baseUrl, attributes, fnIssues),
    pagination: normalizePagination(apiRaw.pagination as Raw | undefined),
    http: {
      // config.http.headers replace api.http.headers (reference Headers::getHeaders); defaultOptions.headers win
      headers: { ...stringHeaders(http.headers), ...configHeaders(params), ...stringHeaders(defaults.headers) },
      defaultParams: (defaults.params as JsonObject | undefined) ?? {},
      ...(Object.keys(functionHeaders).length > 0 ? { functionHeaders } : {}),
    },
    client: normalizeHttpClient(params), // ge-state
    ...(authentication ? { authentication } : {}),
  };
  const config: ExtractorConfig = {
    api,
    config: {
      outputBucket: (configRaw.outputBucket as string | null | undefined) || null,
      debug: configRaw.debug === true,
      compatLevel: (configRaw.compatLevel as number | undefined) ?? 3, // JSON parser parity (ge-json)
      jobs: (configRaw.jobs as Raw[]).map((job, i) => normalizeJob(job, String(i), (configRaw.compatLevel as number | undefined) ?? 3)),
      incrementalOutput: configRaw.incrementalOutput === true, // ge-state
      attributes, // user functions (ge-functions)
    },
  };
  functionPlacementIssues(config, fnIssues); // user functions (ge-functions)
  const issues = [...fnIssues, ...crossChecks(config), ...requiredHeaderIssues(params)]; // ge-state: requiredHeaderIssues
  // --- ge-features: mappings, userData, recursionFilter (mapping-config.ts) ---
  const features = applyJobFeatures(configRaw, config);
  issues.push(...features.issues);
  // --- end ge-features ---
  if (issues.length > 0) throw new ExtractorConfigError(issues);
  return deepFreeze(features.config);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}
