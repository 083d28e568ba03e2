/**
 * The pagination state machine of one job run (`response.param` scroller + the common stop conditions). Pure and
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
import { getPath, isEmptyValue, isTruthy } from './path';
import { firstRequestSpec, scrollerForJob, scrollTemplateSpec, toDescriptor, withParam, type RequestFunctions, type RequestSpec } from './request';
import type { FunctionScope } from './functions';
import type {
  ApiConfig,
  ForceStopConfig,
  JobConfig,
  LimitStopConfig,
  NextPageFlagConfig,
  RequestDescriptor,
} from './types';

/** Why a job's pagination ended. */
export type StopReason =
  /** No pagination configured: one request. */
  | 'no-pagination'
  /** The value at `responseParam` is empty (absent, null, "", false, 0, "0", []). */
  | 'empty-cursor'
  /** The response is identical to the previous one; that page was not extracted. */
  | 'duplicate-response'
  | 'force-stop-pages'
  | 'force-stop-time'
  | 'force-stop-volume'
  | 'next-page-flag'
  | 'limit-stop';

/** The pagination rules a job runs with (resolved from `pagination`, including `multiple`). */
export interface ScrollRules {
  kind: 'response.param' | 'none';
  responseParam: string | null;
  queryParam: string | null;
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
  /** Cumulative records extracted. */
  records: number;
  /** When the job run started (ms since epoch), for `forceStop.time`. */
  startedAtMs: number;
  stopReason: StopReason | null;
}

/** A lookup result carried in a digest (`found: false` = the path does not resolve; `value` is then null). */
export interface DigestValue {
  found: boolean;
  value: unknown;
}

/** The few values of a response the scroller needs; computed next to the body by `digestPage`. */
export interface PageDigest {
  /** Value at `responseParam` (`null` without response.param pagination). */
  cursor: DigestValue | null;
  /** Root property `nextPageFlag.field` (`null` when not configured). */
  flag: DigestValue | null;
  /** Value at `limitStop.field` (`null` when not configured). */
  limit: DigestValue | null;
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
  digest?: PageDigest;
}

/** Result of one step. */
export interface StepResult {
  state: ScrollerState;
  /** Next request to send, or `null` when pagination ended (`stopReason` says why). */
  next: RequestDescriptor | null;
  stopReason?: StopReason;
  /** Human-readable warnings (e.g. a `responseParam` that is absent on the first page). */
  warnings: string[];
  /** Whether this page's records are to be extracted (false for a repeated response). */
  extractPage: boolean;
}

function rulesFor(api: ApiConfig, job: JobConfig, fn?: RequestFunctions): { rules: ScrollRules; template: RequestSpec | null } {
  const scroller = scrollerForJob(api.pagination, job);
  const common = { forceStop: scroller.forceStop, nextPageFlag: scroller.nextPageFlag, limitStop: scroller.limitStop };
  if (scroller.method === 'none') {
    return { rules: { kind: 'none', responseParam: null, queryParam: null, ...common }, template: null };
  }
  return {
    rules: { kind: 'response.param', responseParam: scroller.responseParam, queryParam: scroller.queryParam, ...common },
    template: scrollTemplateSpec(api, job, scroller, fn),
  };
}

/**
 * Starts a job run: counters at zero, no previous response, `next` = the job's first request. `job` is the job
 * to run as is (for a child job: its endpoint with placeholders already filled, see `planChildRuns`).
 */
export function createScrollerState(job: JobConfig, api: ApiConfig, startedAtMs: number, scope?: FunctionScope): ScrollerState {
  // user functions (ge-functions): evaluated with the workflow time of the job run's start
  const fn: RequestFunctions | undefined = scope ? { scope, nowMs: startedAtMs, path: `job '${job.id}'` } : undefined;
  const { rules, template } = rulesFor(api, job, fn);
  return {
    v: 1,
    jobId: job.id,
    rules,
    template,
    next: toDescriptor(firstRequestSpec(api, job, fn)),
    lastHash: null,
    pages: 0,
    bytes: 0,
    records: 0,
    startedAtMs,
    stopReason: null,
  };
}

function lookup(body: unknown, path: string): DigestValue {
  const result = getPath(body, path);
  return { found: result.found, value: result.value ?? null };
}

/** Extracts from a decoded body the values the scroller needs (cursor, next-page flag, limit field). */
export function digestPage(state: Pick<ScrollerState, 'rules'>, body: unknown): PageDigest {
  const { rules } = state;
  let flag: DigestValue | null = null;
  if (rules.nextPageFlag) {
    const root = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const value = root[rules.nextPageFlag.field];
    flag = { found: value !== undefined && value !== null, value: value ?? null };
  }
  return {
    cursor: rules.responseParam === null ? null : lookup(body, rules.responseParam),
    flag,
    limit: rules.limitStop?.field !== undefined ? lookup(body, rules.limitStop.field) : null,
  };
}

function limitReached(rules: ScrollRules, records: number, digest: PageDigest): boolean {
  const limitStop = rules.limitStop;
  if (!limitStop) return false;
  if (limitStop.count !== undefined) return records >= limitStop.count;
  // A `field` that does not resolve (or is not a number) stops after the page, like the reference.
  if (!digest.limit?.found) return true;
  const limit = Number(digest.limit.value);
  return Number.isNaN(limit) || records >= limit;
}

function forceStopReason(rules: ScrollRules, s: ScrollerState, nowMs: number): StopReason | null {
  const fs = rules.forceStop;
  if (!fs) return null;
  if (fs.pages !== null && s.pages >= fs.pages) return 'force-stop-pages';
  if (fs.timeMs !== null && s.startedAtMs + fs.timeMs <= nowMs) return 'force-stop-time';
  if (fs.volumeBytes !== null && s.bytes > fs.volumeBytes) return 'force-stop-volume';
  return null;
}

function flagSaysStop(rules: ScrollRules, digest: PageDigest): boolean {
  const npf = rules.nextPageFlag;
  if (!npf) return false;
  const value = digest.flag?.found ? digest.flag.value : npf.ifNotSet;
  return isTruthy(value) === npf.stopOn;
}

/**
 * Feeds one response to the scroller and decides what happens next. Rules, in the reference's order: a response
 * identical to the previous one stops without being extracted; then (all ORed) `limitStop`, `forceStop`
 * (pages, time, volume), `nextPageFlag`, and an empty value at `responseParam`. Otherwise the next request is the
 * scroll template with `<queryParam> = <value>` (the value verbatim, never followed as a URL).
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

  const digest = page.digest ?? digestPage(state, page.body);
  const s: ScrollerState = {
    ...state,
    lastHash: page.hash,
    pages: state.pages + 1,
    bytes: state.bytes + page.bytes,
    records: state.records + page.recordCount,
  };
  const { rules } = s;

  if (s.pages === 1 && rules.kind === 'response.param' && digest.cursor && !digest.cursor.found) {
    warnings.push(
      `Job '${s.jobId}': responseParam '${rules.responseParam}' was not found in the first response ` +
        `(${state.next.method} ${state.next.url}); pagination stops after one page. Check the path if more pages exist.`,
    );
  }

  if (limitReached(rules, s.records, digest)) return stop(s, 'limit-stop', true);
  const forced = forceStopReason(rules, s, nowMs);
  if (forced) return stop(s, forced, true);
  if (flagSaysStop(rules, digest)) return stop(s, 'next-page-flag', true);
  if (rules.kind === 'none' || s.template === null || rules.queryParam === null) return stop(s, 'no-pagination', true);

  const value = digest.cursor?.found ? digest.cursor.value : null;
  if (isEmptyValue(value)) return stop(s, 'empty-cursor', true);

  const next = toDescriptor({ ...s.template, params: withParam(s.template.params, rules.queryParam, value) });
  return { state: { ...s, next }, next, warnings, extractPage: true };
}
