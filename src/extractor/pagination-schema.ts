/**
 * Configuration of the pagination methods of `./paging` (`offset`, `pagenum`, `response.url`,
 * `zendesk.response.url`, `cursor`): zod shapes (the common stop conditions are added by `scroller-schema.ts`) with
 * the reference's messages where it has them, and their normalization with the reference's defaults.
 *
 * NOT workflow-safe (zod values).
 */
import { z } from 'zod';
import { isPhpNumeric, phpInt } from './paging';
import type { CursorScrollerConfig, OffsetScrollerConfig, PageNumberScrollerConfig, ResponseUrlScrollerConfig, StopConditions } from './types';

/** Defaults of the paging methods (the reference's). */
const PAGING_DEFAULTS = {
  limitParam: 'limit',
  offsetParam: 'offset',
  pageParam: 'page',
  firstPage: 1,
  firstPageParams: true,
  urlKey: 'next_page',
  delimiter: '.',
} as const;

/** PHP's `empty()` of a config value. */
const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || v === false || v === '' || v === 0 || v === '0' || (Array.isArray(v) && v.length === 0);

const show = (v: unknown): string => JSON.stringify(v) ?? String(v);

const optionalString = (key: string) => z.string({ error: `'pagination.${key}' must be a string.` }).nullish();

const optionalBoolean = (key: string) => z.boolean({ error: `'pagination.${key}' must be a boolean (true or false).` }).nullish();

/** A page size: empty is `required ? error : "not set"`; else numeric and at least 1 once truncated to an integer. */
function limitSchema(method: 'offset' | 'pagenum') {
  return z.unknown().superRefine((value, ctx) => {
    if (isEmpty(value)) {
      if (method === 'offset') ctx.addIssue({ code: 'custom', message: "Missing 'pagination.limit' attribute required for offset pagination" });
      return;
    }
    if (!isPhpNumeric(value)) {
      ctx.addIssue({ code: 'custom', message: `Parameter 'pagination.limit' is not numeric. Value '${show(value)}'.` });
    } else if (phpInt(value) < 1) {
      ctx.addIssue({ code: 'custom', message: `'pagination.limit' must be at least 1, given '${show(value)}'.` });
    }
  });
}

const integerSchema = (key: string) =>
  z.unknown().superRefine((value, ctx) => {
    if (value === undefined || value === null) return;
    const ok = (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value));
    if (!ok) ctx.addIssue({ code: 'custom', message: `'pagination.${key}' must be an integer, given '${show(value)}'.` });
  });

/** `method: "offset"` (without the stop conditions). */
export const offsetShape = {
  method: z.literal('offset'),
  limit: limitSchema('offset'),
  limitParam: optionalString('limitParam'),
  offsetParam: optionalString('offsetParam'),
  firstPageParams: optionalBoolean('firstPageParams'),
  offsetFromJob: optionalBoolean('offsetFromJob'),
};

/** `method: "pagenum"`. */
export const pageNumberShape = {
  method: z.literal('pagenum'),
  limit: limitSchema('pagenum'),
  limitParam: optionalString('limitParam'),
  pageParam: optionalString('pageParam'),
  firstPage: integerSchema('firstPage'),
  firstPageParams: optionalBoolean('firstPageParams'),
};

const responseUrlCommon = {
  urlKey: optionalString('urlKey'),
  includeParams: optionalBoolean('includeParams'),
  paramIsQuery: optionalBoolean('paramIsQuery'),
};

/** `method: "response.url"`. */
export const responseUrlShape = {
  method: z.literal('response.url'),
  ...responseUrlCommon,
  delimiter: z.string({ error: "'pagination.delimiter' must be a string." }).min(1, { error: "'pagination.delimiter' must not be empty." }).nullish(),
};

/** `method: "zendesk.response.url"` (the reference ignores `delimiter` for it: the path delimiter is `.`). */
export const zendeskResponseUrlShape = {
  method: z.literal('zendesk.response.url'),
  ...responseUrlCommon,
};

/** `method: "cursor"`. */
export const cursorShape = {
  method: z.literal('cursor'),
  idKey: z
    .string({ error: "Missing 'pagination.idKey' attribute required for cursor pagination" })
    .min(1, { error: "Missing 'pagination.idKey' attribute required for cursor pagination" }),
  param: z
    .string({ error: "Missing 'pagination.param' attribute required for cursor pagination" })
    .min(1, { error: "Missing 'pagination.param' attribute required for cursor pagination" }),
  reverse: optionalBoolean('reverse'),
  increment: integerSchema('increment'),
};

type Raw = Record<string, unknown>;

const nonEmptyString = (v: unknown, fallback: string): string => (typeof v === 'string' && v !== '' ? v : fallback);

/** The normalized paging scroller for a raw config the shapes above accepted (`stops` already normalized). */
export function normalizePagingScroller(
  raw: Raw,
  stops: StopConditions,
): OffsetScrollerConfig | PageNumberScrollerConfig | ResponseUrlScrollerConfig | CursorScrollerConfig | null {
  switch (raw.method) {
    case 'offset':
      return {
        method: 'offset',
        limit: phpInt(raw.limit),
        limitParam: nonEmptyString(raw.limitParam, PAGING_DEFAULTS.limitParam),
        offsetParam: nonEmptyString(raw.offsetParam, PAGING_DEFAULTS.offsetParam),
        firstPageParams: typeof raw.firstPageParams === 'boolean' ? raw.firstPageParams : PAGING_DEFAULTS.firstPageParams,
        offsetFromJob: raw.offsetFromJob === true,
        ...stops,
      };
    case 'pagenum':
      return {
        method: 'pagenum',
        limit: isEmpty(raw.limit) ? null : phpInt(raw.limit),
        limitParam: nonEmptyString(raw.limitParam, PAGING_DEFAULTS.limitParam),
        pageParam: nonEmptyString(raw.pageParam, PAGING_DEFAULTS.pageParam),
        firstPage: raw.firstPage === undefined || raw.firstPage === null ? PAGING_DEFAULTS.firstPage : phpInt(raw.firstPage),
        firstPageParams: typeof raw.firstPageParams === 'boolean' ? raw.firstPageParams : PAGING_DEFAULTS.firstPageParams,
        ...stops,
      };
    case 'response.url':
    case 'zendesk.response.url':
      return {
        method: raw.method,
        urlKey: nonEmptyString(raw.urlKey, PAGING_DEFAULTS.urlKey),
        delimiter: raw.method === 'response.url' ? nonEmptyString(raw.delimiter, PAGING_DEFAULTS.delimiter) : PAGING_DEFAULTS.delimiter,
        includeParams: raw.includeParams === true,
        paramIsQuery: raw.paramIsQuery === true,
        ...stops,
      };
    case 'cursor':
      return {
        method: 'cursor',
        idKey: raw.idKey as string,
        param: raw.param as string,
        reverse: raw.reverse === true,
        increment: raw.increment === undefined || raw.increment === null ? 0 : phpInt(raw.increment),
        ...stops,
      };
    default:
      return null;
  }
}
