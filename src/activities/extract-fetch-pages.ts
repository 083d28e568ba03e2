import { Context } from '@temporalio/activity';
import type { RunContext } from '../extractor/page';
import type { ScrollerState } from '../extractor/scroller';
import type { RequestAuth } from '../extractor/http/send-request';
import { mergeTableSchema, type TableSchema } from '../extractor/table-schema';
import type { ApiConfig, HttpClientConfig, JobConfig } from '../extractor/types';
import { createScrollerState, nextStep } from '../extractor/scroller';
import type { FunctionScope } from '../extractor/functions';
import type { SecretSource } from '../extractor/secrets';
import { userDataForRun } from '../extractor/user-data-functions';
import type { ChildBatchOutcome } from '../extractor/traversal';
import type { ExtractFetchTuning } from '../contracts/extract';
import type { ChildrenRef, PendingPage, StopReasonCounts } from '../extractor/checkpoint';
import { SapiInvalidInputError } from '../errors';
import { MAX_WARNINGS } from '../contracts/extract-plan';
import type { InputPolicy } from '../security/policy';
import { ChildListReader, writeChildList } from '../object-storage/child-list';
import { markedResumePoint, PageGroupWriter, recoverPageLogs } from '../object-storage/page-group-writer';
import { type ObjectStore } from '../object-storage/object-store';
import { jobRunPrefix, stageStoreOf } from '../object-storage/stage-store';
import type { ActivityDeps } from './deps';
import { asActivity, lastHeartbeat, throttledHeartbeat } from './context';
import { assertOwnRunKey } from './ownership';
import { secretsOf, startPageLoop, type LoopPage } from './extract-page-loop';
import { recordSpan, tracingOn } from '../observability/spans';

/** Shortest time between two heartbeat calls while pages stream in (ms). */
const HEARTBEAT_CALL_INTERVAL_MS = 200;

/** Pages a batch fetches beyond the last one staged (the page loop stops there while the staging catches up). */
const PAGES_AHEAD = 32;

/** How much one call fetches, and how (shared by a job run's call and a child batch). */
export interface FetchLimits {
  /** Pages to fetch at most (1 in page mode as it ran before page checkpoints). */
  maxPages: number;
  /**
   * Page mode: every page is staged with its resume point before the next one is fetched (a line of the call's page
   * log on a local folder, a group with a checkpoint marker on S3; see `PageGroupWriter`), and a retry resumes from
   * the newest one, so a crash loses at most the page in flight. Default false: pages
   * are staged in groups and a retry resumes from the last heartbeat the server received.
   */
  pageCheckpoints?: boolean;
  /** Time budget (ms): no new page is started after it. */
  maxMs: number;
  fetch?: ExtractFetchTuning;
  /** The configuration's `api.client` (retries, ignored statuses, timeouts, TLS, signing; secrets as references). */
  client?: HttpClientConfig;
  /** The configuration's authentication (references, never values), applied when each request is sent. */
  auth?: RequestAuth;
}

export interface FetchPagesInput extends FetchLimits {
  /** Staging key of the extraction. */
  runKey: string;
  /** Job run number (staging key part). */
  runNo: number;
  /** The job as run: endpoint with placeholders filled for a child run. */
  job: JobConfig;
  /** `parent_<field>` columns and the parent context of a child run. */
  context: RunContext;
  /** The checkpointed scroller state; `state.next` is the request to send. */
  state: ScrollerState;
}

/**
 * A batch of child runs: consecutive runs of a page's staged child list, from `ref.next`, child `ref.next + i` run as
 * job run `firstRunNo + i` (see {@link fetchChildBatch}). Small whatever the list's length.
 */
export interface FetchChildrenInput extends FetchLimits {
  /** Staging key of the extraction. */
  runKey: string;
  children: { ref: ChildrenRef; firstRunNo: number };
  /** The config jobs the list's runs are of (the parent job's `children`), by id (endpoints with placeholders). */
  jobs: Record<string, JobConfig>;
  /** The configuration's `api` (each run's first request). */
  api: ApiConfig;
  /** The configuration's function scope (`attr`, run times). */
  scope: FunctionScope;
  /** The extraction's renamed parent columns so far. */
  parentAliases?: Record<string, string>;
}

/** What one call produced (pages staged, their totals and the schema they add). */
export interface FetchPagesTotals {
  /** Pages extracted and staged (a repeated response is fetched but not counted). */
  pages: number;
  /** Requests answered (repeats included). */
  fetched: number;
  records: number;
  bytes: number;
  /** Keys of the staged tables (merge into the workflow's schema). */
  schema: TableSchema;
  /** Rows staged per table. */
  rows: Record<string, number>;
  /** At most `MAX_WARNINGS`, deduplicated… */
  warnings: string[];
  /** …and how many more there were (absent: none). */
  warningsDropped?: number;
  /** The run's renamed parent columns after these pages (the input's plus new ones); absent: none so far. */
  parentAliases?: Record<string, string>;
}

export interface FetchPagesResult extends FetchPagesTotals {
  /** Scroller state after the last page this call stepped itself (the pending page is not stepped). */
  state: ScrollerState;
  /** The last page fetched, for the workflow to run its children and `nextStep`; null when pagination ended here or a rate limit stopped the call. */
  pending: PendingPage | null;
  /** The API asked to wait this long (ms) before `state.next` is sent again: wait on a durable timer. */
  rateLimitedMs?: number;
  rateLimitMessage?: string;
  /** True when this attempt resumed from an earlier attempt's heartbeat. */
  resumed: boolean;
}

/** What a child batch did (its totals are the call's): see `ChildBatchOutcome`. */
export interface FetchChildrenResult extends FetchPagesTotals {
  batch: ChildBatchOutcome;
  /** The API asked to wait this long (ms) before the open run's `state.next` is sent again. */
  rateLimitedMs?: number;
  rateLimitMessage?: string;
  /** True when this attempt resumed from an earlier attempt's heartbeat. */
  resumed: boolean;
}

/** Heartbeat details: the resume point (every page up to `state.pages` is staged) and the totals so far. */
export interface FetchPagesCheckpoint {
  state: ScrollerState;
  totals: FetchPagesTotals;
}

const emptyTotals = (): FetchPagesTotals => ({ pages: 0, fetched: 0, records: 0, bytes: 0, schema: {}, rows: {}, warnings: [] });

/** Adds an extracted page to the totals (copy-on-write: checkpoints already taken share `rows` and `warnings`). */
function countPage(totals: FetchPagesTotals, page: LoopPage): void {
  totals.pages++;
  totals.records += page.result.recordCount;
  totals.bytes += page.result.bytes;
  totals.schema = mergeTableSchema(totals.schema, page.schemaDelta);
  if (page.parentAliases) totals.parentAliases = page.parentAliases;
  totals.rows = { ...totals.rows };
  for (const t of page.tables) if (t.rows > 0) totals.rows[t.name] = (totals.rows[t.name] ?? 0) + t.rows;
}

/** Adds warnings not there yet, at most `MAX_WARNINGS` (the rest counted: a batch of 5,000 child runs may warn for each). */
function addWarnings(totals: FetchPagesTotals, warnings: readonly string[]): void {
  for (const w of warnings) {
    if (totals.warnings.includes(w)) continue;
    if (totals.warnings.length < MAX_WARNINGS) totals.warnings = [...totals.warnings, w];
    else totals.warningsDropped = (totals.warningsDropped ?? 0) + 1;
  }
}

/** The parts of a `fetchPages` call that every job run it fetches shares. */
interface Call<C> {
  context: Context;
  store: ObjectStore;
  runKey: string;
  limits: FetchLimits;
  startedAt: number;
  secrets: SecretSource;
  policy: InputPolicy;
  trace: boolean;
  totals: FetchPagesTotals;
  /** Page checkpoints: the call's marker tag. */
  tag: string;
  beat: (details: unknown, force?: boolean) => void;
  /** The newest resume point (what the timer's heartbeat sends). */
  latest: C;
}

/** One stretch of a job run that one page loop fetches. */
interface Segment<C> {
  runNo: number;
  job: JobConfig;
  context: Pick<RunContext, 'parentColumns' | 'parent'>;
  parentAliases?: Record<string, string>;
  state: ScrollerState;
  /** The resume point after `state` (with the call's totals). */
  checkpointOf: (state: ScrollerState, totals: FetchPagesTotals) => C;
  /** Delete the groups of this run that start after this page first (a retry's resume). */
  discardAfter?: number;
}

/** How a segment ended: pagination over (`state.next` null), a page handed back un-stepped, or a rate limit. */
interface SegmentEnd {
  state: ScrollerState;
  pending: PendingPage | null;
  rateLimited?: { retryAfterMs: number; message: string };
}

const beatNowOf =
  <C>(call: Call<C>) =>
  () =>
    call.beat(call.latest, true);

/**
 * Fetches pages of one job run from `seg.state` until pagination ends, a page is handed back (children, the call's
 * limits, a repeated response) or a rate limit; stages every page (see {@link fetchPages}) and keeps `call.latest`.
 * A page with children has its child list staged (`writeChildList`); the pending page carries its reference.
 */
async function fetchSegment<C>(call: Call<C>, seg: Segment<C>): Promise<SegmentEnd> {
  const { store, totals, limits } = call;
  let state = seg.state;
  const checkpoint = () => seg.checkpointOf(state, { ...totals });
  const beatNow = beatNowOf(call);
  const writer = new PageGroupWriter<C>({
    store,
    runKey: call.runKey,
    runNo: seg.runNo,
    checkpoint: checkpoint(),
    onAdvance: (resumePoint) => {
      // the resume point is the progress too: readers of the pending activity's heartbeat see {state, totals}
      call.latest = resumePoint;
      call.beat(resumePoint);
    },
    // page checkpoints: each page is its own group, stored with its marker before the next page is fetched
    ...(limits.pageCheckpoints ? { maxPages: 1, writesInFlight: 0, markers: { tag: call.tag, attempt: call.context.info.attempt } } : {}),
  });
  call.latest = writer.checkpoint;
  // an earlier attempt may have staged groups it never checkpointed: drop them, their pages are fetched again
  if (seg.discardAfter !== undefined) await writer.discardAfter(seg.discardAfter);
  const settle = async () => {
    await writer.settle();
    beatNow();
  };
  const take = (page: LoopPage) => {
    if (page.trace) recordPageSpan(seg.job, page);
    totals.fetched++;
    if (page.extract) countPage(totals, page);
    addWarnings(totals, page.warnings);
    addWarnings(totals, page.stepWarnings);
  };
  // the pages are fetched and processed in the page-loop thread (see extract-page-loop.ts); this thread stages them
  const pages = startPageLoop(
    {
      job: seg.job,
      context: { parentColumns: seg.context.parentColumns, parent: seg.context.parent },
      // renamed parent columns of the pages before (of this call, or of the run as the workflow gave them)
      parentAliases: totals.parentAliases ?? seg.parentAliases,
      state,
      fetched: totals.fetched,
      maxPages: limits.maxPages,
      maxMs: limits.maxMs,
      startedAt: call.startedAt,
      fetch: limits.fetch,
      client: limits.client,
      auth: limits.auth,
      secrets: call.secrets,
      ahead: limits.pageCheckpoints ? 0 : PAGES_AHEAD,
      policy: call.policy,
      trace: call.trace,
    },
    beatNow,
    call.context.cancellationSignal,
  );

  try {
    while (state.next) {
      const reported = await pages.next();
      if (reported.kind === 'rateLimited') {
        await writer.flush(checkpoint());
        await settle();
        return { state, pending: null, rateLimited: { retryAfterMs: reported.retryAfterMs, message: reported.message } };
      }
      for (const page of reported.pages) {
        writer.addLines(page.pageNo, page.tables);
        take(page);
      }
      state = reported.state;
      const pending = reported.pending;
      if (pending) {
        // the group so far ends at the previous page (stepped); the un-stepped last page is a group of its own,
        // so a retry that resumes before it deletes exactly that group
        const before = checkpoint();
        await writer.flush(before);
        if (pending.extract) writer.addLines(pending.pageNo, pending.tables);
        await writer.flush(before, { alone: true });
        take(pending);
        // the child runs wait in the staging, not in history (deterministic keys: a re-fetch replaces them)
        const children = pending.children.length > 0 ? await writeChildList(store, call.runKey, seg.runNo, pending.pageNo, pending.children) : undefined;
        await settle();
        return { state, pending: { pageNo: pending.pageNo, result: pending.result, ...(children ? { children } : {}) } };
      }
      if (!state.next || writer.full) await writer.flush(checkpoint());
      const lastPage = reported.pages.at(-1);
      if (lastPage) pages.ack(lastPage.pageNo);
    }
    await settle();
    return { state, pending: null };
  } finally {
    pages.stop();
    await writer.drain(); // never leave a write running unobserved when failing
  }
}

/** Starts a call: its context, store, heartbeat, and the timer that heartbeats the resume point (stop it at the end). */
function startCall<C>(
  deps: ActivityDeps,
  input: FetchLimits & { runKey: string },
  totals: FetchPagesTotals,
  tag: string,
  latest: C,
): { call: Call<C>; timer: NodeJS.Timeout } {
  const context = Context.current();
  // the resume point reaches the SDK at most every HEARTBEAT_CALL_INTERVAL_MS as groups are stored, on a timer
  // while a slow page is fetched, on a request's retry and at the end; it is the batch's live progress too (the CLI
  // adds the pending call's heartbeat to the `progress` query's answer: no history event per report)
  const call: Call<C> = {
    context,
    store: stageStoreOf(deps),
    runKey: input.runKey,
    limits: input,
    startedAt: Date.now(),
    secrets: secretsOf(process.env, deps.settings.extractSecretEnvPrefix),
    policy: deps.settings.policy,
    trace: tracingOn(),
    totals,
    tag,
    beat: throttledHeartbeat(HEARTBEAT_CALL_INTERVAL_MS, context),
    latest,
  };
  const timer = setInterval(beatNowOf(call), Math.max(1_000, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 30_000) / 3)));
  return { call, timer };
}

/** The `fetchPages` activity: one job run's pages, or a batch of child runs (see {@link FetchChildrenInput}). */
export interface FetchPagesActivity {
  (input: FetchPagesInput): Promise<FetchPagesResult>;
  (input: FetchChildrenInput): Promise<FetchChildrenResult>;
}

/**
 * Fetches pages of one job run, from the checkpointed scroller state. The page loop (send → read the page → `nextStep`
 * → rows as JSON lines) runs in the page-loop thread (`extract-page-loop.ts`); here each page's lines go to a
 * {@link PageGroupWriter}, which stages every group of consecutive pages (100 pages, 4 MiB of rows or 1 s, checked
 * after each report of the loop: up to 16 pages more) as one object per table,
 * `<runKey>/r<run>/p<first>-<last>/<table>.jsonl`; once a group (and every group before it) is stored the activity
 * heartbeats `{state, totals}`: the resume point. The loop stops and hands the last page back un-stepped (`pending`,
 * staged as a group of its own) when the page has child runs (their list staged under `<runKey>/children/`, the
 * pending page carrying its reference), when `maxPages`/`maxMs` is reached or on a repeated response, so the
 * workflow decides.
 *
 * With `children` (a {@link FetchChildrenInput}) the call runs consecutive child runs of a staged list instead, see
 * {@link fetchChildBatch}.
 *
 * No duplicates: a resume point is always the end of a stored group, and a retry (attempt > 1) first deletes every
 * group of this job run that starts after its resume point (written by an attempt that died before its heartbeat
 * reached the server), then fetches those pages again. This holds even when the API answers differently the second
 * time. A long `Retry-After` ends the call with `rateLimitedMs` (the workflow waits on a durable timer).
 */
export function fetchPages(deps: ActivityDeps): FetchPagesActivity {
  return ((input: FetchPagesInput | FetchChildrenInput) =>
    asActivity<FetchPagesResult | FetchChildrenResult>(async () => {
      // another run's staging key is refused before anything is read or staged (forged run state)
      await assertOwnRunKey(input.runKey, 'runKey');
      return 'children' in input ? fetchChildBatch(deps, input) : fetchJobRun(deps, input);
    })) as FetchPagesActivity;
}

async function fetchJobRun(deps: ActivityDeps, input: FetchPagesInput): Promise<FetchPagesResult> {
  const context = Context.current();
  const store = stageStoreOf(deps);
  const batch = `${input.runNo}:${input.state.pages}`;
  // the resume point: the newest of the last heartbeat the server received and (page checkpoints) the newest
  // complete marker an earlier attempt of this call staged
  let previous = lastHeartbeat<FetchPagesCheckpoint>();
  if (input.pageCheckpoints && context.info.attempt > 1) {
    await recoverPageLogs(store, input.runKey, input.runNo);
    const marked = await markedResumePoint<FetchPagesCheckpoint>(store, input.runKey, input.runNo, batch, input.state.pages);
    if (marked && (previous === undefined || marked.state.pages > previous.state.pages)) previous = marked;
  }
  const from = previous !== undefined && previous.state?.jobId === input.state.jobId && previous.state.pages >= input.state.pages ? previous : undefined;
  const resumed = from !== undefined;
  const state: ScrollerState = from?.state ?? input.state;
  const totals: FetchPagesTotals = from?.totals ?? emptyTotals();
  const { call, timer } = startCall<FetchPagesCheckpoint>(deps, input, totals, batch, { state, totals: { ...totals } });
  try {
    const end = await fetchSegment(call, {
      runNo: input.runNo,
      job: input.job,
      context: input.context,
      parentAliases: input.context.parentAliases,
      state,
      checkpointOf: (s, t) => ({ state: s, totals: t }),
      ...(context.info.attempt > 1 ? { discardAfter: state.pages } : {}),
    });
    const extra = end.rateLimited ? { rateLimitedMs: end.rateLimited.retryAfterMs, rateLimitMessage: end.rateLimited.message } : {};
    return { ...totals, state: end.state, pending: end.pending, resumed, ...extra };
  } finally {
    clearInterval(timer);
  }
}

/** Heartbeat details of a child batch: the run it is in (`child`, `state` null: not started) and the totals so far. */
export interface ChildBatchCheckpoint {
  /** The call (`c<firstRunNo>:<from>`): a heartbeat of another call is never resumed from. */
  tag: string;
  /** Index in the child list of the run being fetched. */
  child: number;
  /** Its resume point (`null`: it starts fresh). */
  state: ScrollerState | null;
  totals: FetchPagesTotals;
  /** Stop reasons of the runs finished before it. */
  stopReasons: StopReasonCounts;
}

/**
 * Runs consecutive child runs of a staged child list (`input.children.ref`, from `ref.next`), child `ref.next + i` as
 * job run `firstRunNo + i`, each fully paginated, in the list's order, until the call's page or time limit (checked
 * before each run, and by the page loop), a run whose page has children of its own, or a rate limit; the run it
 * stopped inside is handed back (`open`) for the workflow to go on with. A page the loop hands back without children
 * (the limits, a repeated response) is stepped here, as the workflow would. Heartbeats {@link ChildBatchCheckpoint}s: a retry resumes in the run it names, from its state (its
 * groups after it deleted, as a single run's); a run it starts fresh has everything an earlier attempt staged under
 * its run number deleted first (the keys are per run number and page, so nothing is duplicated).
 */
async function fetchChildBatch(deps: ActivityDeps, input: FetchChildrenInput): Promise<FetchChildrenResult> {
  const context = Context.current();
  const attempt = context.info.attempt;
  const store = stageStoreOf(deps);
  const { ref, firstRunNo } = input.children;
  const from = ref.next;
  const tag = `c${firstRunNo}:${from}`;
  const runNoOf = (index: number) => firstRunNo + index - from;
  let previous = lastHeartbeat<ChildBatchCheckpoint>();
  if (previous !== undefined && (previous.tag !== tag || !(previous.child >= from))) previous = undefined;
  if (input.pageCheckpoints && attempt > 1) {
    // page checkpoints: the newest complete marker of the run the heartbeat is in
    const index = previous?.child ?? from;
    const pagesBefore = previous?.state?.pages ?? 0;
    await recoverPageLogs(store, input.runKey, runNoOf(index));
    const marked = await markedResumePoint<ChildBatchCheckpoint>(store, input.runKey, runNoOf(index), tag, pagesBefore);
    if (marked && marked.child === index && marked.state && marked.state.pages > pagesBefore) previous = marked;
  }
  const resumed = previous !== undefined;
  const totals: FetchPagesTotals = previous?.totals ?? emptyTotals();
  let stopReasons: StopReasonCounts = previous?.stopReasons ?? {};
  let index = previous?.child ?? from;
  let resumeState = previous?.state ?? null;
  const reader = new ChildListReader(store, input.runKey, ref);
  const { call, timer } = startCall<ChildBatchCheckpoint>(deps, input, totals, tag, {
    tag,
    child: index,
    state: resumeState,
    totals: { ...totals },
    stopReasons,
  });
  const limitReached = () => totals.fetched >= input.maxPages || Date.now() - call.startedAt >= input.maxMs;
  const outcome = (open?: ChildBatchOutcome['open'], rateLimited?: SegmentEnd['rateLimited']): FetchChildrenResult => ({
    ...totals,
    batch: { done: index - from, stopReasons, ...(open ? { open } : {}) },
    resumed,
    ...(rateLimited ? { rateLimitedMs: rateLimited.retryAfterMs, rateLimitMessage: rateLimited.message } : {}),
  });
  try {
    while (index < ref.count) {
      const spec = await reader.at(index);
      // (at least one run per call; a run resumed mid-way goes on as a run of its own)
      if (index > from && limitReached()) return outcome(resumeState ? { spec, state: resumeState, pending: null } : undefined);
      const template = input.jobs[spec.jobId];
      if (!template)
        throw new SapiInvalidInputError(`child job '${spec.jobId}' of ${ref.key} is not among the jobs given (${Object.keys(input.jobs).join(', ')})`);
      const runNo = runNoOf(index);
      const fresh = resumeState === null;
      let state = resumeState ?? createScrollerState({ ...template, endpoint: spec.endpoint }, input.api, Date.now(), input.scope);
      resumeState = null;
      // user functions in userData, evaluated at the run's start (as the workflow does for a run of its own)
      const job = userDataForRun({ ...template, endpoint: spec.endpoint }, input.scope, state.startedAtMs);
      // a retry: what an earlier attempt staged for a run started here afresh is deleted (groups, markers, page logs)
      if (attempt > 1 && fresh) await store.delete(await store.list(jobRunPrefix(input.runKey, runNo)));
      const child = index;
      const done = stopReasons;
      let discardAfter = attempt > 1 && !fresh ? state.pages : undefined;
      for (;;) {
        const end = await fetchSegment(call, {
          runNo,
          job,
          context: { parentColumns: spec.parentColumns, parent: spec.parent },
          parentAliases: input.parentAliases,
          state,
          checkpointOf: (s, t) => ({ tag, child, state: s, totals: t, stopReasons: done }),
          ...(discardAfter !== undefined ? { discardAfter } : {}),
        });
        discardAfter = undefined;
        state = end.state;
        if (end.rateLimited) return outcome({ spec, state, pending: null }, end.rateLimited);
        if (end.pending) {
          if (end.pending.children) return outcome({ spec, state, pending: end.pending });
          // a page handed back un-stepped (the call's limits, a repeated response): the step the workflow would take
          const step = nextStep(state, end.pending.result, Date.now());
          addWarnings(totals, step.warnings);
          state = step.state;
        }
        if (!state.next) break;
        if (limitReached()) return outcome({ spec, state, pending: null });
      }
      const reason = state.stopReason ?? 'no-pagination';
      const counts = stopReasons[spec.jobId] ?? {};
      stopReasons = { ...stopReasons, [spec.jobId]: { ...counts, [reason]: (counts[reason] ?? 0) + 1 } };
      index++;
      call.latest = { tag, child: index, state: null, totals: { ...totals }, stopReasons };
      call.beat(call.latest);
    }
    return outcome();
  } finally {
    clearInterval(timer);
  }
}

/**
 * The span of one extracted page (`extract page`, under the activity's span): from its request to its rows
 * flattened, as the page-loop thread measured it (see `PageTrace`). The URL without its query.
 */
function recordPageSpan(job: JobConfig, page: LoopPage): void {
  const t = page.trace!;
  const attributes = {
    'sapi.page_number': page.pageNo,
    'sapi.extract_job': job.id,
    'sapi.extract_endpoint': job.endpoint.split('?')[0],
    'sapi.rows': page.tables.reduce((sum, table) => sum + table.rows, 0),
    'sapi.response_bytes': t.bytes,
    'sapi.response_ms': t.answeredAtMs - t.sentAtMs,
    'sapi.attempts': t.attempts,
    'http.request.method': t.method,
    'http.response.status_code': t.status,
    'server.address': t.host,
    'url.path': t.path,
  };
  recordSpan('extract page', attributes, t.sentAtMs, t.doneAtMs);
}
