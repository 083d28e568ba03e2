/**
 * The pagination state machine of one job run (every pagination method + the common stop conditions; the methods
 * other than `response.param` are in `./paging`). Pure and
 * deterministic: no I/O, no clock (the caller passes `nowMs`), plain-JSON state. Workflow-safe.
 *
 * Driving it:
 * ```ts
 * let state = createScrollerState(job, api, startedAtMs);
 * while (state.next) {
 *   const page = await fetch(state.next);                       // activity: {body, bytes, hash}
 *   const step = nextStep(state, { ...page, recordCount }, now); // or pass `digest: digestPage(state, body)`
 *   if (step.extractPage) { ...write rows, run children... }
 *   state = step.state;
 * }
 * ```
 * Workflows never see page bodies: the activity computes `digestPage(state, body)` (a few small values) and
 * returns it with `bytes`, `hash` and `recordCount`.
 */
import { nextPagingRequest, pagingDigest, phpJsonLength, positionParam, startPaging } from './paging';
import type { PagingDigest, PagingPosition, PagingRules } from './paging';
import { getPath, isEmptyValue, isTruthy } from './path';
import { firstRequestSpec, scrollerForJob, scrollTemplateSpec, toDescriptor, withParam, type RequestFunctions, type RequestSpec } from './request';
import type { FunctionScope } from './functions';
import type { ApiConfig, ForceStopConfig, JobConfig, LimitStopConfig, NextPageFlagConfig, RequestDescriptor, ScrollerConfig, StopConditions } from './types';

/** Why a job's pagination ended. */
export type StopReason =
  /** No pagination configured: one request. */
  | 'no-pagination'
  /** The value at `responseParam` (or `urlKey`) is empty (absent, null, "", false, 0, "0", []). */
  | 'empty-cursor'
  /** `offset`/`pagenum` with a limit: the page had fewer records than the limit. */
  | 'short-page'
  /** `pagenum` without a limit, `cursor`: the page had no records. */
  | 'empty-page'
  /** `zendesk.response.url`: the next page's `start_time` is less than 6 minutes ago. */
  | 'start-time-too-recent'
  /** The response is identical to the previous one; that page was not extracted. */
  | 'duplicate-response'
  | 'force-stop-pages'
  | 'force-stop-time'
  | 'force-stop-volume'
  | 'next-page-flag'
  | 'limit-stop';

/** The pagination rules a job runs with (resolved from `pagination`, including `multiple`). */
interface ScrollRules {
  kind: ScrollerConfig['method'];
  /** `response.param`: the path of the value; `response.url`: `urlKey`. */
  responseParam: string | null;
  /** The param that carries the position (`queryParam`, `offsetParam`, `pageParam`, cursor `param`). */
  queryParam: string | null;
  /** Settings of the methods of `./paging` (absent for `response.param` and none). */
  paging?: PagingRules;
  /** Stop conditions set next to `method: "multiple"`, checked before the scroller's own (absent when none). */
  outer?: StopConditions;
  forceStop: ForceStopConfig | null;
  nextPageFlag: NextPageFlagConfig | null;
  limitStop: LimitStopConfig | null;
}

/**
 * Checkpointable state of one job run. Small plain JSON: the rules, the scroll request template, the next request,
 * the previous response's hash and the counters.
 */
export interface ScrollerState {
  v: 1;
  /** `JobConfig.id` of the job being paginated. */
  jobId: string;
  rules: ScrollRules;
  /** Every scroll request is this template plus `<queryParam> = <value>`; `null` without pagination. */
  template: RequestSpec | null;
  /** The request to send now; `null` once pagination ended. */
  next: RequestDescriptor | null;
  /** Hash of the last extracted response (compared with the next one). */
  lastHash: string | null;
  /** Responses accepted (duplicates excluded). */
  pages: number;
  /** Cumulative response-body bytes. */
  bytes: number;
  /** Cumulative size of the responses as `forceStop.volume` counts it (their PHP `json_encode` length). */
  volume?: number;
  /** Position of the methods of `./paging` (offset, page number, ids seen). */
  position?: PagingPosition;
  /** Cumulative records extracted. */
  records: number;
  /** When the job run started (ms since epoch), for `forceStop.time`. */
  startedAtMs: number;
  stopReason: StopReason | null;
}

/** A lookup result carried in a digest (`found: false` = the path does not resolve; `value` is then null). */
interface DigestValue {
  found: boolean;
  value: unknown;
}

/** The few values of a response the scroller needs; computed next to the body by `digestPage`. */
interface PageDigest {
  /** Value at `responseParam` (`null` without response.param pagination). */
  cursor: DigestValue | null;
  /** Root property `nextPageFlag.field` (`null` when not configured). */
  flag: DigestValue | null;
  /** Value at `limitStop.field` (`null` when not configured). */
  limit: DigestValue | null;
  /** `forceStop.volume`: the response's PHP `json_encode` length (absent when not configured). */
  volume?: number;
  /** What the methods of `./paging` read in a response (next URL, id range). */
  paging?: PagingDigest;
  /** `flag` and `limit` of the stop conditions next to `method: "multiple"` (absent when none). */
  outer?: { flag: DigestValue | null; limit: DigestValue | null };
}

/** What the scroller needs to know about a response: `body` or its `digest`, plus size, hash and record count. */
export interface PageResult {
  /** Response body size in bytes (for `forceStop.volume`). */
  bytes: number;
  /** Hash of the raw body (identical responses stop pagination). */
  hash: string;
  /** Records extracted from this page (`resolveRecords(...).records.length`), for `limitStop`. */
  recordCount: number;
  /** The decoded body; or give `digest` instead (workflows). */
  body?: unknown;
  /** The page's records, with `body` (the `cursor` method reads their ids). */
  records?: readonly unknown[];
  digest?: PageDigest;
}

/** Result of one step. */
interface StepResult {
  state: ScrollerState;
  /** Next request to send, or `null` when pagination ended (`stopReason` says why). */
  next: RequestDescriptor | null;
  stopReason?: StopReason;
  /** Human-readable warnings (e.g. a `responseParam` that is absent on the first page). */
  warnings: string[];
  /** Whether this page's records are to be extracted (false for a repeated response). */
  extractPage: boolean;
}

interface RunStart {
  rules: ScrollRules;
  template: RequestSpec | null;
  first: RequestSpec;
  position?: PagingPosition;
}

function outerStops(api: ApiConfig): { outer?: StopConditions } {
  const p = api.pagination;
  if (p.method !== 'multiple' || (!p.forceStop && !p.nextPageFlag && !p.limitStop)) return {};
  return { outer: { forceStop: p.forceStop ?? null, nextPageFlag: p.nextPageFlag ?? null, limitStop: p.limitStop ?? null } };
}

function rulesFor(api: ApiConfig, job: JobConfig, fn?: RequestFunctions): RunStart {
  const start = innerRulesFor(api, job, fn);
  return { ...start, rules: { ...start.rules, ...outerStops(api) } };
}

function innerRulesFor(api: ApiConfig, job: JobConfig, fn?: RequestFunctions): RunStart {
  const scroller = scrollerForJob(api.pagination, job);
  const common = { forceStop: scroller.forceStop, nextPageFlag: scroller.nextPageFlag, limitStop: scroller.limitStop };
  const first = firstRequestSpec(api, job, fn);
  if (scroller.method === 'none') {
    return { rules: { kind: 'none', responseParam: null, queryParam: null, ...common }, template: null, first };
  }
  if (scroller.method === 'response.param') {
    return {
      rules: { kind: 'response.param', responseParam: scroller.responseParam, queryParam: scroller.queryParam, ...common },
      template: scrollTemplateSpec(api, job, scroller, fn),
      first,
    };
  }
  const start = startPaging(api, job, scroller, fn);
  const responseParam = start.rules.kind === 'response.url' ? start.rules.urlKey : null;
  return {
    rules: { kind: scroller.method, responseParam, queryParam: positionParam(start.rules), paging: start.rules, ...common },
    template: start.template,
    first: start.first,
    position: start.position,
  };
}

/**
 * Starts a job run: counters at zero, no previous response, `next` = the job's first request. `job` is the job
 * to run as is (for a child job: its endpoint with placeholders already filled, see `planChildRuns`).
 */
export function createScrollerState(job: JobConfig, api: ApiConfig, startedAtMs: number, scope?: FunctionScope): ScrollerState {
  // user functions: evaluated with the workflow time of the job run's start
  const fn: RequestFunctions | undefined = scope ? { scope, nowMs: startedAtMs, path: `job '${job.id}'` } : undefined;
  const { rules, template, first, position } = rulesFor(api, job, fn);
  return {
    v: 1,
    jobId: job.id,
    rules,
    template,
    next: toDescriptor(first),
    lastHash: null,
    pages: 0,
    bytes: 0,
    volume: 0,
    records: 0,
    startedAtMs,
    stopReason: null,
    ...(position ? { position } : {}),
  };
}

function lookup(body: unknown, path: string): DigestValue {
  const result = getPath(body, path);
  return { found: result.found, value: result.value ?? null };
}

/**
 * Extracts from a decoded body the values the scroller needs (cursor, next-page flag, limit field, size; next URL or
 * id range for the methods of `./paging`, which read `records`). Throws `ExtractorDataError` when the next URL is
 * not a URL or an id is not numeric.
 */
export function digestPage(state: Pick<ScrollerState, 'rules'>, body: unknown, records: readonly unknown[] = []): PageDigest {
  const { rules } = state;
  const flagOf = (npf: NextPageFlagConfig | null): DigestValue | null => {
    if (!npf) return null;
    const root = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const value = root[npf.field];
    return { found: value !== undefined && value !== null, value: value ?? null };
  };
  const flag = flagOf(rules.nextPageFlag);
  const outer = rules.outer
    ? {
        outer: { flag: flagOf(rules.outer.nextPageFlag), limit: rules.outer.limitStop?.field !== undefined ? lookup(body, rules.outer.limitStop.field) : null },
      }
    : {};
  const paging = rules.paging ? pagingDigest(rules.paging, body, records) : undefined;
  return {
    cursor: rules.kind !== 'response.param' || rules.responseParam === null ? null : lookup(body, rules.responseParam),
    flag,
    limit: rules.limitStop?.field !== undefined ? lookup(body, rules.limitStop.field) : null,
    ...(rules.forceStop?.volumeBytes || rules.outer?.forceStop?.volumeBytes ? { volume: phpJsonLength(body) } : {}),
    ...(paging ? { paging } : {}),
    ...outer,
  };
}

function limitReached(limitStop: LimitStopConfig | null, records: number, found: DigestValue | null | undefined): boolean {
  if (!limitStop) return false;
  if (limitStop.count !== undefined) return records >= limitStop.count;
  // A `field` that does not resolve (or is not a number) stops after the page, like the reference.
  if (!found?.found) return true;
  const limit = Number(found.value);
  return Number.isNaN(limit) || records >= limit;
}

function forceStopReason(fs: ForceStopConfig | null, s: ScrollerState, nowMs: number): StopReason | null {
  if (!fs) return null;
  if (fs.pages !== null && s.pages >= fs.pages) return 'force-stop-pages';
  if (fs.timeMs !== null && s.startedAtMs + fs.timeMs <= nowMs) return 'force-stop-time';
  if (fs.volumeBytes !== null && (s.volume ?? s.bytes) > fs.volumeBytes) return 'force-stop-volume';
  return null;
}

function flagSaysStop(npf: NextPageFlagConfig | null, flag: DigestValue | null | undefined): boolean {
  if (!npf) return false;
  const value = flag?.found ? flag.value : npf.ifNotSet;
  return isTruthy(value) === npf.stopOn;
}

/** The reference's decorators in their order: `limitStop`, `forceStop` (pages, time, volume), `nextPageFlag`. */
function stopCondition(
  c: StopConditions,
  s: ScrollerState,
  flag: DigestValue | null | undefined,
  limit: DigestValue | null | undefined,
  nowMs: number,
): StopReason | null {
  if (limitReached(c.limitStop, s.records, limit)) return 'limit-stop';
  const forced = forceStopReason(c.forceStop, s, nowMs);
  if (forced) return forced;
  if (flagSaysStop(c.nextPageFlag, flag)) return 'next-page-flag';
  return null;
}

/**
 * Feeds one response to the scroller and decides what happens next. Rules, in the reference's order: a response
 * identical to the previous one stops without being extracted; then (all ORed) the stop conditions set next to
 * `method: "multiple"`, the scroller's own (`limitStop`, `forceStop` (pages, time, volume), `nextPageFlag`), then
 * the method's own rule: for `response.param` an empty value at
 * `responseParam`, else the next request is the scroll template with `<queryParam> = <value>` (the value verbatim,
 * never followed as a URL); for the other methods see `nextPagingRequest` (`./paging`).
 */
export function nextStep(state: ScrollerState, page: PageResult, nowMs: number): StepResult {
  if (state.next === null) throw new Error(`nextStep called after job '${state.jobId}' finished (${state.stopReason}).`);
  const warnings: string[] = [];
  const stop = (s: ScrollerState, reason: StopReason, extractPage: boolean): StepResult => ({
    state: { ...s, next: null, stopReason: reason },
    next: null,
    stopReason: reason,
    warnings,
    extractPage,
  });

  if (state.lastHash !== null && page.hash === state.lastHash) return stop(state, 'duplicate-response', false);

  const digest = page.digest ?? digestPage(state, page.body, page.records);
  const s: ScrollerState = {
    ...state,
    lastHash: page.hash,
    pages: state.pages + 1,
    bytes: state.bytes + page.bytes,
    volume: (state.volume ?? 0) + (digest.volume ?? page.bytes),
    records: state.records + page.recordCount,
  };
  const { rules } = s;

  if (s.pages === 1 && rules.kind === 'response.param' && digest.cursor && !digest.cursor.found) {
    warnings.push(
      `Job '${s.jobId}': responseParam '${rules.responseParam}' was not found in the first response ` +
        `(${state.next.method} ${state.next.url}); pagination stops after one page. Check the path if more pages exist.`,
    );
  }

  const stopped =
    (rules.outer ? stopCondition(rules.outer, s, digest.outer?.flag, digest.outer?.limit, nowMs) : null) ??
    stopCondition(rules, s, digest.flag, digest.limit, nowMs);
  if (stopped) return stop(s, stopped, true);
  if (rules.paging && s.template !== null) {
    const decision = nextPagingRequest(rules.paging, s.template, s.position ?? {}, { recordCount: page.recordCount, digest: digest.paging ?? {} }, nowMs);
    if (decision.stop !== undefined) return stop(s, decision.stop, true);
    const next = toDescriptor(decision.next);
    return { state: { ...s, position: decision.position, next }, next, warnings, extractPage: true };
  }
  if (rules.kind === 'none' || s.template === null || rules.queryParam === null) return stop(s, 'no-pagination', true);

  const value = digest.cursor?.found ? digest.cursor.value : null;
  if (isEmptyValue(value)) return stop(s, 'empty-cursor', true);

  const next = toDescriptor({ ...s.template, params: withParam(s.template.params, rules.queryParam, value) });
  return { state: { ...s, next }, next, warnings, extractPage: true };
}
