/**
 * The pagination methods besides `response.param`: `offset`, `pagenum`, `response.url`, `zendesk.response.url` and
 * `cursor`, with the reference's semantics (keboola/juicer `src/Pagination/*Scroller.php`). Pure and deterministic:
 * the scroller (`./scroller`) keeps their position in its plain-JSON state and calls these between pages.
 *
 * - `offset`: every request is the job's, with `<limitParam>=<limit>&<offsetParam>=<offset>` set over the job
 *   params (the first one too unless `firstPageParams: false`); the offset starts at 0 (or at the job's non-empty
 *   `<offsetParam>` with `offsetFromJob`) and grows by the limit. A page with fewer records than the limit stops.
 *   The limit is the job's non-empty `<limitParam>` param, else `pagination.limit`.
 * - `pagenum`: the same with `<pageParam>=<page>` (from `firstPage`, default 1) and `<limitParam>=<limit>` when a
 *   limit is known; without a limit only an empty page stops.
 * - `response.url`: the value at `urlKey` in the response is the next endpoint (resolved against `baseUrl`), with the
 *   job params only if `includeParams`; with `paramIsQuery` it is a query string whose params are set over the job's
 *   on the job's endpoint. An empty value stops. `zendesk.response.url` also stops when the next URL's `start_time`
 *   is less than 6 minutes ago.
 * - `cursor`: the job's request with `<param>` set to the highest id (`idKey` in each record) seen so far in this
 *   run (the lowest with `reverse`) plus `increment`. An empty page stops; a non-numeric id is an error.
 */
import { ExtractorDataError } from './errors';
import { getPath, isEmptyValue, type PathLookup } from './path';
import { firstRequestSpec, withParam, type RequestFunctions, type RequestSpec } from './request';
import type {
  ApiConfig,
  CursorScrollerConfig,
  JobConfig,
  JsonObject,
  OffsetScrollerConfig,
  PageNumberScrollerConfig,
  ResponseUrlScrollerConfig,
} from './types';
import { resolveEndpoint } from './url';

/** `zendesk.response.url`: a next page whose `start_time` is less than this many minutes ago is not requested. */
const ZENDESK_NEXT_PAGE_FILTER_MINUTES = 6;

/** The scrollers this module runs. */
type PagingScrollerConfig = OffsetScrollerConfig | PageNumberScrollerConfig | ResponseUrlScrollerConfig | CursorScrollerConfig;

/** A paging method resolved for one job run (limits taken from the job's params already). Plain JSON. */
export type PagingRules =
  | { kind: 'offset'; limit: number; limitParam: string; offsetParam: string }
  | { kind: 'pagenum'; limit: number | null; limitParam: string; pageParam: string }
  | { kind: 'response.url'; urlKey: string; delimiter: string; paramIsQuery: boolean; zendesk: boolean; baseUrl: string }
  | { kind: 'cursor'; idKey: string; param: string; reverse: boolean; increment: number };

/** Where a paging method stands between pages (plain JSON, part of the scroller state). */
export interface PagingPosition {
  /** `offset`: the offset of the last request. */
  offset?: number;
  /** `pagenum`: the page number of the last request. */
  page?: number;
  /** `cursor`: lowest and highest id seen in this run (null before the first page). */
  min?: number | null;
  max?: number | null;
}

/** What a job run starts with. */
interface PagingStart {
  rules: PagingRules;
  /** Every request after the first is this plus the method's params (or, for `response.url`, the next URL). */
  template: RequestSpec;
  /** The first request. */
  first: RequestSpec;
  position: PagingPosition;
}

/** The values of one response a paging method needs (part of the page digest; computed where the body is). */
export interface PagingDigest {
  /** `response.url`: the value at `urlKey` (a string; a number is turned into one). */
  url?: { found: boolean; value: string | null };
  /** `cursor`: lowest and highest id of the page's records (null for an empty page). */
  ids?: { min: number; max: number } | null;
}

/** What to do after a page: stop (and why), or the next request and position. */
type PagingDecision =
  { stop: 'empty-cursor' | 'short-page' | 'empty-page' | 'start-time-too-recent' } | { stop?: undefined; next: RequestSpec; position: PagingPosition };

/** PHP's `is_numeric`: numbers and numeric strings (leading/trailing whitespace allowed, no hex). */
export function isPhpNumeric(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(value);
}

/** PHP's `(int)` cast of a JSON value: numbers and numeric prefixes of strings truncated, `true` → 1, else 0. */
export function phpInt(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : 0;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string') return 0;
  const match = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(value);
  return match ? Math.trunc(Number(match[0])) || 0 : 0;
}

/**
 * Length in bytes of PHP's `json_encode` of a decoded response (default flags: `/` escaped as `\/`, every
 * non-ASCII UTF-16 unit as `\uXXXX`): what the reference counts for `forceStop.volume`.
 */
export function phpJsonLength(value: unknown): number {
  const text = JSON.stringify(value) ?? 'null';
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2f) length += 1;
    else if (c > 0x7f) length += 5;
  }
  return length;
}

/** The job's param `name` as the reference's `getLimit` reads it: `(int)` of a non-empty value, else `fallback`. */
function jobLimit(job: Pick<JobConfig, 'params'>, name: string, fallback: number | null): number | null {
  const value = job.params[name];
  return isEmptyValue(value) ? fallback : phpInt(value);
}

function withParams(spec: RequestSpec, params: Record<string, unknown>): RequestSpec {
  let result = spec.params;
  for (const [name, value] of Object.entries(params)) result = withParam(result, name, value);
  return { ...spec, params: result };
}

function offsetParams(rules: Extract<PagingRules, { kind: 'offset' }>, offset: number): Record<string, unknown> {
  return { [rules.limitParam]: rules.limit, [rules.offsetParam]: offset };
}

function pageParams(rules: Extract<PagingRules, { kind: 'pagenum' }>, page: number): Record<string, unknown> {
  return rules.limit === null ? { [rules.pageParam]: page } : { [rules.pageParam]: page, [rules.limitParam]: rules.limit };
}

/**
 * Resolves a paging scroller for one job run (`job` as run: a child's endpoint already filled): its rules, the
 * request template, the first request and the starting position.
 */
export function startPaging(
  api: ApiConfig,
  job: Pick<JobConfig, 'endpoint' | 'method' | 'params'>,
  scroller: PagingScrollerConfig,
  fn?: RequestFunctions,
): PagingStart {
  const jobSpec = firstRequestSpec(api, job, fn);
  switch (scroller.method) {
    case 'offset': {
      const rules: PagingRules = {
        kind: 'offset',
        limit: jobLimit(job, scroller.limitParam, scroller.limit) ?? scroller.limit,
        limitParam: scroller.limitParam,
        offsetParam: scroller.offsetParam,
      };
      const fromJob = job.params[scroller.offsetParam];
      const offset = scroller.offsetFromJob && !isEmptyValue(fromJob) ? phpInt(fromJob) : 0;
      const first = scroller.firstPageParams ? withParams(jobSpec, offsetParams(rules, offset)) : jobSpec;
      return { rules, template: jobSpec, first, position: { offset } };
    }
    case 'pagenum': {
      const rules: PagingRules = {
        kind: 'pagenum',
        limit: jobLimit(job, scroller.limitParam, scroller.limit),
        limitParam: scroller.limitParam,
        pageParam: scroller.pageParam,
      };
      const page = scroller.firstPage;
      const first = scroller.firstPageParams ? withParams(jobSpec, pageParams(rules, page)) : jobSpec;
      return { rules, template: jobSpec, first, position: { page } };
    }
    case 'response.url':
    case 'zendesk.response.url': {
      const rules: PagingRules = {
        kind: 'response.url',
        urlKey: scroller.urlKey,
        delimiter: scroller.method === 'zendesk.response.url' ? '.' : scroller.delimiter,
        paramIsQuery: scroller.paramIsQuery,
        zendesk: scroller.method === 'zendesk.response.url',
        baseUrl: api.baseUrl,
      };
      const template = scroller.includeParams ? jobSpec : firstRequestSpec(api, { ...job, params: {} }, fn);
      return { rules, template, first: jobSpec, position: {} };
    }
    case 'cursor':
      return {
        rules: { kind: 'cursor', idKey: scroller.idKey, param: scroller.param, reverse: scroller.reverse, increment: scroller.increment },
        template: jobSpec,
        first: jobSpec,
        position: { min: null, max: null },
      };
  }
}

/** The name of the param that carries the position (for progress display), or null (`response.url`). */
export function positionParam(rules: PagingRules): string | null {
  switch (rules.kind) {
    case 'offset':
      return rules.offsetParam;
    case 'pagenum':
      return rules.pageParam;
    case 'cursor':
      return rules.param;
    case 'response.url':
      return null;
  }
}

function urlLookup(rules: Extract<PagingRules, { kind: 'response.url' }>, body: unknown): PagingDigest['url'] {
  const found: PathLookup = getPath(body, rules.urlKey, rules.delimiter);
  if (!found.found || isEmptyValue(found.value)) return { found: found.found, value: null };
  const value = found.value;
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw new ExtractorDataError(
      `The next page URL at urlKey '${rules.urlKey}' must be a string, got ${Array.isArray(value) ? 'an array' : typeof value}: ${JSON.stringify(value).slice(0, 200)}`,
    );
  }
  const text = String(value);
  if (!rules.paramIsQuery) {
    try {
      resolveEndpoint(rules.baseUrl, text);
    } catch {
      throw new ExtractorDataError(`The next page URL at urlKey '${rules.urlKey}' is not a valid URL: '${text.slice(0, 200)}'`);
    }
  }
  return { found: true, value: text };
}

function idRange(rules: Extract<PagingRules, { kind: 'cursor' }>, records: readonly unknown[]): PagingDigest['ids'] {
  if (records.length === 0) return null;
  let min = Infinity;
  let max = -Infinity;
  for (const record of records) {
    const value = getPath(record, rules.idKey).value;
    if (!isPhpNumeric(value)) throw new ExtractorDataError(`Cursor value '${JSON.stringify(value ?? null)}' is not numeric (idKey '${rules.idKey}').`);
    const id = phpInt(value);
    if (id < min) min = id;
    if (id > max) max = id;
  }
  return { min, max };
}

/**
 * The values of a response a paging method needs: the next URL (`response.url`) or the id range of the records
 * (`cursor`). Throws `ExtractorDataError` for a next URL that is not a string or URL, or a non-numeric id.
 */
export function pagingDigest(rules: PagingRules, body: unknown, records: readonly unknown[]): PagingDigest {
  if (rules.kind === 'response.url') return { url: urlLookup(rules, body) };
  if (rules.kind === 'cursor') return { ids: idRange(rules, records) };
  return {};
}

/** Guzzle's `Query::parse`: `a=1&b` → `{a: "1", b: null}`; `+` and `%XX` decoded; a repeated key gives an array. */
function parseQueryString(query: string): JsonObject {
  const result: JsonObject = {};
  if (query === '') return result;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    const key = decode(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? null : decode(part.slice(eq + 1));
    const existing = result[key];
    if (!(key in result)) result[key] = value;
    else result[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return result;
}

function startTimeTooRecent(url: string, nowMs: number): boolean {
  const q = url.indexOf('?');
  if (q === -1) return false;
  const startTime = parseQueryString(url.slice(q + 1).split('#')[0]).start_time;
  if (typeof startTime !== 'string' || !/^\d+$/.test(startTime)) return false;
  return Number(startTime) * 1000 > nowMs - ZENDESK_NEXT_PAGE_FILTER_MINUTES * 60_000;
}

/**
 * Decides the request after a page (the common stop conditions were checked before): stop, or the next request and
 * position. `recordCount` is the number of records of the page; `digest` comes from {@link pagingDigest}.
 */
export function nextPagingRequest(
  rules: PagingRules,
  template: RequestSpec,
  position: PagingPosition,
  page: { recordCount: number; digest: PagingDigest },
  nowMs: number,
): PagingDecision {
  switch (rules.kind) {
    case 'offset': {
      if (page.recordCount < rules.limit) return { stop: 'short-page' };
      const offset = (position.offset ?? 0) + rules.limit;
      return { next: withParams(template, offsetParams(rules, offset)), position: { offset } };
    }
    case 'pagenum': {
      if (rules.limit === null && page.recordCount === 0) return { stop: 'empty-page' };
      if (rules.limit !== null && page.recordCount < rules.limit) return { stop: 'short-page' };
      const pageNo = (position.page ?? 1) + 1;
      return { next: withParams(template, pageParams(rules, pageNo)), position: { page: pageNo } };
    }
    case 'response.url': {
      const url = page.digest.url?.value ?? null;
      if (url === null || isEmptyValue(url)) return { stop: 'empty-cursor' };
      if (rules.zendesk && startTimeTooRecent(url, nowMs)) return { stop: 'start-time-too-recent' };
      if (!rules.paramIsQuery) return { next: { ...template, url: resolveEndpoint(rules.baseUrl, url) }, position };
      return { next: withParams(template, parseQueryString(url.replace(/^\?+/, ''))), position };
    }
    case 'cursor': {
      const ids = page.digest.ids;
      if (page.recordCount === 0 || !ids) return { stop: 'empty-page' };
      const min = position.min === null || position.min === undefined ? ids.min : Math.min(position.min, ids.min);
      const max = position.max === null || position.max === undefined ? ids.max : Math.max(position.max, ids.max);
      const cursor = (rules.reverse ? min : max) + rules.increment;
      return { next: withParams(template, { [rules.param]: cursor }), position: { min, max } };
    }
  }
}
