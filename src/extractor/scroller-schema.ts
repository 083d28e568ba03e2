/**
 * The `api.pagination` section: the stop conditions every scroller takes (`forceStop`, `nextPageFlag`,
 * `limitStop`), `response.param` with its scroll request, `multiple` (named scrollers), the dispatch to the paging
 * methods of `./pagination-schema`, and their normalization into `PaginationConfig`.
 *
 * NOT workflow-safe (zod values).
 */
import { z } from 'zod';
import { emptyToUndefined, isObject, methodSchema, nonNegativeInt, paramsSchema, phpType, type Raw } from './config-values';
import { parseDurationMs } from './duration';
import { cursorShape, normalizePagingScroller, offsetShape, pageNumberShape, responseUrlShape, zendeskResponseUrlShape } from './pagination-schema';
import type {
  ForceStopConfig,
  JobMethod,
  JsonObject,
  LimitStopConfig,
  NextPageFlagConfig,
  PaginationConfig,
  ScrollRequestConfig,
  ScrollerConfig,
  StopConditions,
} from './types';

/** Pagination methods of the reference that this extractor does not implement (a clear error, not "unknown"): none left. */
export const UNSUPPORTED_PAGINATION_METHODS: string[] = [];

/** Pagination methods this extractor implements (besides no pagination). */
export const SUPPORTED_PAGINATION_METHODS = ['response.param', 'offset', 'pagenum', 'response.url', 'zendesk.response.url', 'cursor', 'multiple'];

const forceStopSchema = z.looseObject(
  {
    pages: nonNegativeInt("'forceStop.pages' must be a non-negative integer (0 means no limit).").optional(),
    time: z
      .union([z.number().nonnegative({ error: "'forceStop.time' must not be negative." }), z.string()], {
        error: '\'forceStop.time\' must be a number of seconds or a duration such as "1 hour".',
      })
      .refine((v) => parseDurationMs(v) !== null, {
        error: '\'forceStop.time\' must be a number of seconds or a duration such as "1 hour" or "30 seconds".',
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

// pagination methods of ./paging (shapes in ./pagination-schema)
const pagingScrollerSchemas = [
  z.looseObject({ ...offsetShape, ...stopConditionShape }),
  z.looseObject({ ...pageNumberShape, ...stopConditionShape }),
  z.looseObject({ ...responseUrlShape, ...stopConditionShape }),
  z.looseObject({ ...zendeskResponseUrlShape, ...stopConditionShape }),
  z.looseObject({ ...cursorShape, ...stopConditionShape }),
] as const;

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

export const paginationSchema = z.discriminatedUnion('method', [noScrollerSchema, responseParamScrollerSchema, ...pagingScrollerSchemas, multipleSchema], {
  error: (iss) => (iss.code === 'invalid_union' ? unknownMethodMessage(iss.input) : undefined),
});

// Normalization (after the schema accepted the input).

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
  const limitStop: LimitStopConfig | null = ls ? (ls.field !== undefined ? { field: ls.field as string } : { count: Number(ls.count) }) : null;
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

export function normalizePagination(raw: Raw | undefined): PaginationConfig {
  if (!raw) return normalizeScroller({});
  if (raw.method !== 'multiple') return normalizeScroller(raw);
  const scrollers: Record<string, ScrollerConfig> = {};
  for (const [name, cfg] of Object.entries(raw.scrollers as Record<string, Raw>)) scrollers[name] = normalizeScroller(cfg);
  return { method: 'multiple', scrollers, default: (raw.default as string | null | undefined) || null, ...normalizeStops(raw) };
}
