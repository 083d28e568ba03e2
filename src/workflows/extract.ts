import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  log,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { SapiActivities } from '../activities';
import type { FetchChildrenResult, FetchPagesResult } from '../activities/extract-activities';
import { configMappedTables, mappedPrimaryKeys } from '../extractor/mapping';
import { mergeTableSchema } from '../extractor/table-schema';
import { applyChildBatch, MAX_RATE_LIMIT_WAITS, nextJobRunToFetch, rateLimitAfterBatch, shouldContinueAsNew, type ChildBatch } from '../extractor/traversal';
import type { ExtractorConfig, ExtractRunTimes, JobConfig } from '../extractor/types';
import { ExtractorError } from '../extractor/errors';
import { functionScopeOf } from '../extractor/functions';
import { userDataForRun } from '../extractor/user-data-functions';
import { iterationConfigs } from '../extractor/config-iterations';
import { parentAliasesOf, parserStateOf, parserStructOf, schemaFromStruct, seedSchema } from '../extractor/parser-struct';
import {
  cursorOf,
  extractBucketId,
  findJob,
  isBucketId,
  MAX_WARNINGS,
  resolveExtractOptions,
  stagingRunKey,
  type ResolvedExtractOptions,
} from '../contracts/extract-plan';
import type { ExtractInput, ExtractPhase, ExtractProgress, ExtractResult, ExtractTableResult } from '../contracts/extract';
import type { ExtractCheckpoint, JobFrame } from '../extractor/checkpoint';
import { loadTables, notLoaded } from './extract-load';
import { isStateKey, nextRunState, parseRunState, runTimesOf, withRunTimes, type ExtractRunState } from '../extractor/run-state';
import { SapiErrorCode, NON_RETRYABLE_ERROR_CODES } from '../errors';
import { extractAttributes } from '../contracts/search-attributes';
import type { CallWaiting } from '../contracts/call-waiting';
import { defaultFairnessKey } from '../contracts/priority';
import type { Priority } from '@temporalio/common';
import { prioritized, runPriority } from './priority';
import { budgetSpent, outageBudget, outageRetry } from './options';
import { ownContinuation } from './continued';
import { bytesText, detailLine, RunView } from './run-view';
import { checkCancelRequest, refuse } from './transfer-run';

export type * from '../contracts/extract';

/** Query: where the extraction is (phase, job, page, cursor, totals, rows staged per table). */
export const extractProgressQuery = defineQuery<ExtractProgress>('progress');
/** Update: pause after the batch in flight (page mode: after the page); refused when paused, cancelling or loading. Answers the progress. */
export const pauseUpdate = defineUpdate<ExtractProgress>('pause');
/** Update: carry on after a pause; refused when the extraction is not paused. Answers the progress. */
export const resumeUpdate = defineUpdate<ExtractProgress>('resume');
/**
 * Update: stop fetching after the batch in flight; with `loadOnCancel` (default) load what was staged; the result says
 * `cancelled: true`. Refused when already cancelling or past fetching.
 */
export const extractCancelUpdate = defineUpdate<ExtractProgress, [request: { reason?: string }]>('cancel');
/**
 * Update: answers the progress and changes nothing (never refused), as a transfer's `progress` update: what a typed
 * start under the id of a running extraction learns when it attaches (Update-with-Start, `USE_EXISTING`).
 */
export const extractProgressUpdate = defineUpdate<ExtractProgress>('progress');
/** What `setLimits` may change. */
export interface ExtractLimits {
  /**
   * Stop fetching once this many pages are fetched in all; the tables are loaded. The limit is exact: it may not be
   * below the pages already fetched plus the most the call in flight may still add (that call ends as it was started;
   * page mode: within 0.5 s), so the total never passes it. A refusal names the least limit accepted at that moment.
   */
  maxPages: number;
}
/** Update: set limits of a running extraction; refused when a limit is below what is done. Answers the progress. */
export const setLimitsUpdate = defineUpdate<ExtractProgress, [limits: ExtractLimits]>('setLimits');

/**
 * Refuses limits that are not `{maxPages}` with a whole number at least `pagesDone` plus `inFlight`, the most pages the
 * call in flight may still add (the limit is exact: the total never passes it).
 */
function checkLimits(limits: unknown, pagesDone: number, inFlight: number): void {
  if (typeof limits !== 'object' || limits === null) refuse('setLimits takes {"maxPages": <pages>}');
  const unknown = Object.keys(limits).filter((k) => k !== 'maxPages');
  if (unknown.length > 0) refuse(`unsupported limit ${unknown.join(', ')}: setLimits takes maxPages`);
  const { maxPages } = limits as { maxPages?: unknown };
  if (typeof maxPages !== 'number' || !Number.isSafeInteger(maxPages) || maxPages < 1)
    refuse(`maxPages must be a whole number ≥ 1, got ${JSON.stringify(maxPages)}`);
  if (maxPages < pagesDone + inFlight) {
    refuse(
      inFlight === 0
        ? `maxPages ${maxPages} is below the ${pagesDone} pages already fetched`
        : `maxPages ${maxPages} is below the ${pagesDone} pages already fetched and the up to ${inFlight} the call in flight may add: give ${pagesDone + inFlight} or more`,
    );
  }
}

export { MAX_RATE_LIMIT_WAITS };

/** Failure types the extraction never retries (besides the Storage ones). */
const EXTRACT_NON_RETRYABLE_ERROR_CODES: readonly string[] = NON_RETRYABLE_ERROR_CODES;

function activityOptionsFor(o: ResolvedExtractOptions, taskQueue: string | undefined, priority: Priority | undefined, budgetMs: number) {
  const retry = outageRetry(EXTRACT_NON_RETRYABLE_ERROR_CODES);
  const within = (attemptMs: number) => ({ startToCloseTimeout: attemptMs, scheduleToCloseTimeout: attemptMs + budgetMs, retry });
  // short calls heartbeat while they run (asActivity): a dead worker's call is taken over within 10 s
  const short: ActivityOptions = { taskQueue, ...within(2 * 60_000), heartbeatTimeout: '10 seconds' };
  // a dead worker's batch is taken over within the heartbeat timeout; the retry resumes from the last heartbeat
  const fetch: ActivityOptions = { taskQueue, ...within(60 * 60_000), heartbeatTimeout: o.heartbeatTimeoutMs };
  const build: ActivityOptions = { taskQueue, ...within(6 * 60 * 60_000), heartbeatTimeout: '20 seconds' };
  return { short: prioritized(short, priority), fetch: prioritized(fetch, priority), build: prioritized(build, priority) };
}

/** The failure type of an activity failure (our error code), if any. */
function failureOf(err: unknown): ApplicationFailure | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/** The checkpoint of a fresh extraction (the first run of its continue-as-new chain). */
function freshCheckpoint(workflowId: string, firstRunId: string): ExtractCheckpoint {
  return {
    v: 1,
    runKey: stagingRunKey(workflowId, firstRunId),
    runId: firstRunId,
    runs: 1,
    nextJob: 0,
    nextRunNo: 1,
    frames: [],
    schema: {},
    rows: {},
    pages: 0,
    records: 0,
    bytes: 0,
    warnings: [],
    warningsDropped: 0,
    stopReasons: {},
    paused: false,
  };
}

/** What the run knows besides its checkpoint, for the `progress` query. */
interface LiveState {
  phase: ExtractPhase;
  waitingUntil: number | undefined;
  error: string | undefined;
  /** The reason of a cancel asked for (update or cancellation request). */
  cancelling?: string;
  /** The call waiting an outage out, while one does. */
  waitingFor?: CallWaiting;
}

/**
 * Answer of the `progress` query: the checkpoint (what the batch in flight fetched so far is in its heartbeat
 * details, which the CLI adds).
 */
function progressOf(cp: ExtractCheckpoint, { phase, waitingUntil, error, cancelling, waitingFor }: LiveState): ExtractProgress {
  const frame = cp.frames[cp.frames.length - 1];
  const ref = frame?.pending?.children;
  return {
    phase,
    job: frame?.jobId ?? null,
    page: frame?.state.pages ?? 0,
    cursor: frame ? cursorOf(frame.state) : null,
    pages: cp.pages,
    records: cp.records,
    bytes: cp.bytes,
    tables: { ...cp.rows },
    runs: cp.runs,
    warnings: cp.warnings.length + cp.warningsDropped,
    ...(waitingUntil !== undefined ? { waitingUntil } : {}),
    ...(waitingFor !== undefined ? { waitingFor } : {}),
    ...(cp.paused ? { paused: true } : {}),
    ...(cancelling !== undefined ? { cancelling } : {}),
    ...(cp.maxPages !== undefined ? { maxPages: cp.maxPages } : {}),
    ...(ref ? { children: { started: ref.next, of: ref.count }, ...(ref.next < ref.count ? { childBatch: `c${cp.nextRunNo}:${ref.next}` } : {}) } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(cp.runTimes !== undefined ? { runTimes: cp.runTimes } : {}),
  };
}

/** Problems with `stateKey`/`importState`, each naming the input field. */
function runStateInputProblems(input: ExtractInput): string[] {
  const problems: string[] = [];
  if (input.stateKey !== undefined && (typeof input.stateKey !== 'string' || !isStateKey(input.stateKey))) {
    problems.push(`stateKey must be 1-200 of [A-Za-z0-9._-] starting with a letter or digit, got ${JSON.stringify(input.stateKey)}`);
  }
  if (input.importState !== undefined) {
    const parsed = parseRunState(input.importState);
    for (const problem of parsed.problems) problems.push(`importState: ${problem}`);
  }
  return problems;
}

/**
 * Once per extraction (not again after a continue-as-new): the state to start from (`importState`, else the stored
 * one of `stateKey`, else none) and this run's times; both go into the checkpoint.
 */
async function startRunState(cp: ExtractCheckpoint, input: ExtractInput, readRunState: SapiActivities['readRunState']): Promise<ExtractRunTimes> {
  if (cp.runTimes !== undefined) return cp.runTimes;
  let previous: ExtractRunState | null = null;
  if (input.importState !== undefined) previous = parseRunState(input.importState).state;
  else if (input.stateKey !== undefined) previous = (await readRunState({ stateKey: input.stateKey })).state;
  cp.runTimes = runTimesOf(previous, Date.now());
  if (input.stateKey !== undefined) cp.runState = { stateKey: input.stateKey, previous };
  return cp.runTimes;
}

/**
 * The window an extraction covered, for its loads' receipts: its run times (`previousStart` → `currentStart`, Unix
 * seconds: the configuration's incremental window), the state key and the pages fetched.
 */
function extractRange(cp: ExtractCheckpoint, input: ExtractInput): Record<string, string | number> {
  return {
    ...(cp.runTimes ? { previousStart: cp.runTimes.previousStart, currentStart: cp.runTimes.currentStart } : {}),
    ...(input.stateKey !== undefined ? { stateKey: input.stateKey } : {}),
    pages: cp.pages,
  };
}

/** Longest page-mode call (ms): `pause` and `cancel` act when a call ends, so in page mode within about this long. */
export const PAGE_MODE_CALL_MS = 500;

/**
 * Pages and time one `fetchPages` call may take: a batch (`batchPages`, `batchSeconds`); in page mode the same with
 * page checkpoints (every page staged with its checkpoint before the next is fetched), but at most
 * {@link PAGE_MODE_CALL_MS}.
 */
function fetchLimits(o: ResolvedExtractOptions): { maxPages: number; maxMs: number; pageCheckpoints?: true } {
  if (o.mode !== 'page') return { maxPages: o.batchPages, maxMs: o.batchSeconds * 1000 };
  return { maxPages: o.batchPages, maxMs: Math.min(o.batchSeconds * 1000, PAGE_MODE_CALL_MS), pageCheckpoints: true };
}

/** `limits` with at most the pages `setLimits` leaves (unchanged without a limit). */
function capped<L extends { maxPages: number }>(limits: L, cp: ExtractCheckpoint): L {
  return cp.maxPages === undefined ? limits : { ...limits, maxPages: Math.max(1, Math.min(limits.maxPages, cp.maxPages - cp.pages)) };
}

/**
 * The job of a frame as its run sees it: endpoint filled, user functions in `userData` evaluated at the run's
 * start (derived again each batch, never checkpointed). A user-function error fails the extraction (not the
 * workflow task, which would retry forever).
 */
function jobForRun(config: ExtractorConfig, frame: JobFrame): JobConfig {
  try {
    return userDataForRun({ ...findJob(config, frame.jobId), endpoint: frame.endpoint }, functionScopeOf(config), frame.state.startedAtMs);
  } catch (err) {
    if (!(err instanceof ExtractorError)) throw err;
    throw ApplicationFailure.create({ type: err.code, message: `job '${frame.jobId}': ${err.message}`, nonRetryable: true });
  }
}

/** The state the run started from: the stored one of `stateKey`, else `importState`, else none. */
function previousRunState(cp: ExtractCheckpoint, input: ExtractInput): ExtractRunState | null {
  return cp.runState ? cp.runState.previous : input.importState !== undefined ? parseRunState(input.importState).state : null;
}

/**
 * The checkpoint as loading sees it: with a previous run state holding `json_parser.struct` (the stored
 * one of `stateKey`, or `importState`), every table this run wrote keeps the structure's columns, as in the reference.
 */
function withParserStruct(cp: ExtractCheckpoint, input: ExtractInput): ExtractCheckpoint {
  const struct = parserStructOf(previousRunState(cp, input));
  if (struct === undefined) return cp;
  return { ...cp, schema: seedSchema(cp.schema, schemaFromStruct(struct)) };
}

/** The normalized configuration, from the activity; any failure of it is final (a config error never heals). */
async function validateConfig(acts: Pick<SapiActivities, 'validateExtractConfig'>, config: unknown): Promise<ExtractorConfig> {
  try {
    return await acts.validateExtractConfig({ config });
  } catch (err) {
    const failure = failureOf(err);
    if (!failure) throw err;
    throw ApplicationFailure.create({ type: failure.type ?? undefined, message: failure.message, nonRetryable: true, details: failure.details as unknown[] });
  }
}

/** Adds a batch's totals, schema and rows to the checkpoint (its warnings go through `addWarnings`). */
function addBatchTotals(cp: ExtractCheckpoint, r: FetchPagesResult | FetchChildrenResult): void {
  cp.pages += r.pages;
  cp.records += r.records;
  cp.bytes += r.bytes;
  cp.schema = mergeTableSchema(
    cp.schema,
    Object.entries(r.schema).map(([name, keys]) => ({ name, keys })),
  );
  cp.warningsDropped += r.warningsDropped ?? 0; // (the batch's own warnings beyond its cap)
  if (r.parentAliases) cp.parentAliases = r.parentAliases; // the input's aliases plus the batch's
  for (const [table, rows] of Object.entries(r.rows)) cp.rows[table] = (cp.rows[table] ?? 0) + rows;
}

/** A failure of the batch at `frame`, non-retryable, saying where it stopped and that the staged pages are kept. */
function batchFailure(failure: ApplicationFailure, frame: JobFrame, runKey: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: `extraction stopped in job '${frame.jobId}' at page ${frame.state.pages + 1}: ${failure.message} (pages staged so far are kept under ${runKey}, not loaded)`,
    nonRetryable: true,
    details: [{ jobId: frame.jobId, page: frame.state.pages + 1, runKey }, ...((failure.details as unknown[] | undefined) ?? [])],
  });
}

/** A failure of a child batch, non-retryable, saying which page's children it was running and that the staged pages are kept. */
function childBatchFailure(failure: ApplicationFailure, batch: ChildBatch, runKey: string): ApplicationFailure {
  const { parent, ref } = batch;
  const at = `child run ${ref.next + 1} of ${ref.count} of job '${parent.jobId}' page ${parent.pending?.pageNo ?? parent.state.pages + 1}`;
  return ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: `extraction stopped in ${at}: ${failure.message} (pages staged so far are kept under ${runKey}, not loaded)`,
    nonRetryable: true,
    details: [{ jobId: parent.jobId, children: ref.key, child: ref.next, runKey }, ...((failure.details as unknown[] | undefined) ?? [])],
  });
}

/**
 * Runs a Generic-Extractor configuration durably and loads the output tables into Storage.
 *
 * 1. An activity validates the configuration (a config error fails here, before any request).
 * 2. The jobs run in the reference's order (top-level jobs one after another, each fresh; a page's child runs
 *    before the parent's next page). The workflow keeps, per job run, the scroller state (next request, last hash,
 *    counters), plus the table schema and totals; page data never enters history: `fetchPages` stages it.
 * 3. A long `Retry-After` is waited on a durable timer; the `pause`/`resume`/`cancel` updates (and a cancellation
 *    request) act between batches.
 * 4. History stays bounded: continue-as-new with the checkpoint when the server suggests it (or after
 *    `MAX_HISTORY_EVENTS` events / `continueAsNewAfterPages` pages).
 * 5. At the end, per table: `buildTableCsv` (staged rows in extraction order, final column union), then an
 *    `importTableWorkflow` child (create the table, or load into the existing one, `incremental` as configured).
 *
 * A non-JSON answer or a 4xx ends the workflow with a failure naming the URL, the status and the body's start; the
 * pages staged so far are kept (under `<staging>/<runKey>/`) but not loaded.
 */
export async function extractWorkflow(input: ExtractInput & { resume?: ExtractCheckpoint }): Promise<ExtractResult> {
  const info = workflowInfo();
  const { options: o, problems } = resolveExtractOptions(input.options);
  const resumed = ownContinuation(input.resume, 'extractWorkflow');
  // the staging a checkpoint names is always this chain's own (its workflow id and first run id)
  const runKey = stagingRunKey(info.workflowId, info.firstExecutionRunId);
  if (resumed !== undefined && resumed.runKey !== runKey) {
    throw ApplicationFailure.create({
      type: SapiErrorCode.INPUT_FORBIDDEN,
      message: `extractWorkflow: input field resume.runKey names staging that is not this run's`,
      nonRetryable: true,
      details: [{ field: 'resume.runKey' }],
    });
  }
  const cp: ExtractCheckpoint = resumed ?? freshCheckpoint(info.workflowId, info.firstExecutionRunId);
  let phase: ExtractPhase = cp.paused ? 'paused' : 'extracting';
  let cancelReason: string | undefined;
  let waitingUntil: number | undefined;
  let error: string | undefined;

  /** A cancellation request (not the `cancel` update) reached the run. */
  let cancelRequested = false;
  // the run's own scope is asked to cancel: stop as the `cancel` update does (after the batch in flight, loading what was staged)
  CancellationScope.current().cancelRequested.catch(() => {
    cancelRequested = true;
    cancelReason ??= 'cancellation requested';
  });

  // opened in `run` below (declared before the handlers: an update that came with the start runs as its handler is set)
  let view: RunView | undefined;
  const current = () => progressOf(cp, { phase, waitingUntil, error, cancelling: cancelReason, waitingFor: view?.waitingFor() });
  setHandler(extractProgressQuery, current);
  // the same controls as validated updates: a refused one writes no history, an accepted one answers the new state
  const fetching = (what: string) => {
    if (cancelReason !== undefined) throw new Error(`cannot ${what}: the extraction is being cancelled (${cancelReason})`);
    if (phase !== 'extracting' && phase !== 'paused') throw new Error(`cannot ${what}: the extraction is ${phase}`);
  };
  setHandler(extractProgressUpdate, current);
  setHandler(
    pauseUpdate,
    () => {
      cp.paused = true;
      return current();
    },
    { validator: () => (fetching('pause'), cp.paused && refuse('the extraction is already paused')) },
  );
  setHandler(
    resumeUpdate,
    () => {
      cp.paused = false;
      return current();
    },
    { validator: () => (fetching('resume'), !cp.paused && refuse('the extraction is not paused')) },
  );
  setHandler(
    extractCancelUpdate,
    (request) => {
      cancelReason = request?.reason ?? 'cancelled by update';
      return current();
    },
    {
      validator: (request) => {
        checkCancelRequest(request);
        fetching('cancel');
      },
    },
  );
  /** The most pages the fetch call in flight may still add (0 between calls): the floor of an exact `setLimits`. */
  let pagesInFlight = 0;
  setHandler(
    setLimitsUpdate,
    (limits) => {
      cp.maxPages = limits.maxPages;
      return current();
    },
    { validator: (limits) => (fetching('set limits'), checkLimits(limits, current().pages, pagesInFlight)) },
  );

  const addWarnings = (warnings: readonly string[]) => {
    for (const warning of warnings) {
      if (cp.warnings.includes(warning)) continue;
      log.warn(`extract: ${warning}`, { runKey: cp.runKey });
      if (cp.warnings.length < MAX_WARNINGS) cp.warnings.push(warning);
      else cp.warningsDropped++;
    }
  };

  // the work itself: in a scope a cancellation request cannot cut short when it is handled gracefully (see below)
  const run = async (): Promise<ExtractResult> => {
    // a run started without a fairness key shares the queue fairly by the extracted API's host (its loads too)
    const priority = runPriority(defaultFairnessKey({ operation: 'extract', input }));
    const budgetMs = outageBudget(input.options?.outageBudgetMs);
    const { short, fetch, build } = activityOptionsFor(o, input.options?.activityTaskQueue, priority, budgetMs);
    view = await RunView.open(extractAttributes(input), {
      phase: () => phase,
      details: () => extractDetails(progressOf(cp, { phase, waitingUntil, error })),
    });
    const acts = view.activities(proxyActivities<SapiActivities>(short));
    const fetcher = view.activities(proxyActivities<SapiActivities>(fetch), (name, a) =>
      name === 'fetchPages'
        ? a.children
          ? childrenTarget(a.children as { ref?: { count?: number; next?: number; key?: string } })
          : `${fetchTarget(a.job as { id?: string; endpoint?: string } | undefined)} from page ${Number((a.state as { pages?: number } | undefined)?.pages ?? 0) + 1}`
        : undefined,
    );
    const builder = view.activities(proxyActivities<SapiActivities>(build));

    try {
      if (problems.length > 0) throw ApplicationFailure.nonRetryable(`invalid extract options: ${problems.join('; ')}`, SapiErrorCode.INVALID_INPUT);
      const stateProblems = runStateInputProblems(input);
      if (stateProblems.length > 0) throw ApplicationFailure.nonRetryable(`invalid extract input: ${stateProblems.join('; ')}`, SapiErrorCode.INVALID_INPUT);
      const validated = await validateConfig(acts, input.config);
      const bucketId = extractBucketId(input.options?.bucketId, validated.config.outputBucket);
      if (!isBucketId(bucketId)) {
        throw ApplicationFailure.nonRetryable(
          `cannot derive a bucket id from outputBucket ${JSON.stringify(validated.config.outputBucket)}: set options.bucketId`,
          SapiErrorCode.INVALID_INPUT,
        );
      }
      view.set({ SapiBucket: bucketId });
      // this run's times, where request building reads them (`config.config.runTimes`)
      const fresh = cp.runTimes === undefined;
      const runTimes = await startRunState(cp, input, acts.readRunState);
      // the renamed parent columns the previous run's parser structure kept, as the reference reuses them
      if (fresh) {
        const storedAliases = parentAliasesOf(previousRunState(cp, input));
        if (storedAliases) cp.parentAliases = { ...storedAliases, ...(cp.parentAliases ?? {}) };
      }
      // with `parameters.iterations`, the configuration of the iteration in the checkpoint (`cp.iteration`)
      const iterations = validated.iterations !== undefined ? iterationConfigs(validated) : [validated];
      const iterationAt = (index: number) => withRunTimes(iterations[index] ?? validated, runTimes);
      let config = iterationAt(cp.iteration ?? 0);

      let pagesThisRun = 0;
      /** `setLimits` maxPages stopped the fetching (the tables are loaded; the run state is not stored, as after a cancel). */
      let limitReached = false;
      let rateLimitWaits = 0;
      // one batch per turn; pause, cancel and continue-as-new act between batches
      while (cancelReason === undefined) {
        if (cp.paused) {
          phase = 'paused';
          view.refresh();
          await condition(() => !cp.paused || cancelReason !== undefined);
          phase = 'extracting';
          continue;
        }
        if (cp.maxPages !== undefined && cp.pages >= cp.maxPages) {
          limitReached = true;
          addWarnings([`stopped at ${cp.maxPages} pages (setLimits maxPages); the run state is not stored`]);
          break;
        }
        const next = nextJobRunToFetch(cp, config, Date.now());
        addWarnings(next.warnings);
        const frame = next.frame;
        if (!frame && !next.children) {
          // the next iteration starts its jobs from the first, into the same tables
          if ((cp.iteration ?? 0) + 1 < iterations.length) {
            cp.iteration = (cp.iteration ?? 0) + 1;
            cp.nextJob = 0;
            config = iterationAt(cp.iteration);
            log.info(`extract: iteration ${cp.iteration + 1} of ${iterations.length}`, { runKey: cp.runKey });
            continue;
          }
          break;
        }
        // a versioned worker's deploy: carry the checkpoint to the new current version (runs are pinned otherwise)
        if (workflowInfo().targetWorkerDeploymentVersionChanged) {
          log.info('extract: a new worker deployment version is current; continuing as new on it', { runKey: cp.runKey });
          // its first task goes to the current version (the new run is pinned to that one)
          await makeContinueAsNewFunc<typeof extractWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({
            ...input,
            resume: { ...cp, runs: cp.runs + 1 },
          });
        }
        if (shouldContinueAsNew(workflowInfo(), pagesThisRun, o.continueAsNewAfterPages)) {
          await continueAsNew<typeof extractWorkflow>({ ...input, resume: { ...cp, runs: cp.runs + 1 } });
        }

        const limits = {
          ...capped(fetchLimits(o), cp),
          fetch: input.options?.fetch,
          client: config.api.client, // undefined for a config validated before client options existed
          ...(config.api.authentication
            ? { auth: { authentication: config.api.authentication, attributes: config.config.attributes ?? {}, baseUrl: config.api.baseUrl } }
            : {}),
        };
        let r: FetchPagesResult | FetchChildrenResult;
        pagesInFlight = limits.maxPages;
        try {
          if (next.children) {
            // a batch of the child runs the page waits for: their list stays in the staging, the call gets its reference
            const { parent, ref, firstRunNo } = next.children;
            r = await fetcher.fetchPages({
              runKey: cp.runKey,
              children: { ref, firstRunNo },
              jobs: Object.fromEntries(findJob(config, parent.jobId).children.map((child) => [child.id, child])),
              api: config.api,
              scope: functionScopeOf(config),
              ...(cp.parentAliases ? { parentAliases: cp.parentAliases } : {}),
              ...limits,
            });
          } else {
            const run = frame!;
            r = await fetcher.fetchPages({
              runKey: cp.runKey,
              runNo: run.runNo,
              // user functions in userData, evaluated at the job run's start (derived again, not checkpointed)
              job: jobForRun(config, run),
              context: { parentColumns: run.parentColumns, parent: run.parent, ...(cp.parentAliases ? { parentAliases: cp.parentAliases } : {}) },
              state: run.state,
              ...limits,
            });
          }
        } catch (err) {
          const failure = failureOf(err);
          if (!failure) throw err;
          throw next.children ? childBatchFailure(failure, next.children, cp.runKey) : batchFailure(failure, frame!, cp.runKey);
        } finally {
          pagesInFlight = 0;
        }
        addBatchTotals(cp, r);
        addWarnings(r.warnings);
        pagesThisRun += r.pages;
        if ('batch' in r) applyChildBatch(cp, next.children!, r.batch);
        else {
          frame!.state = r.state;
          frame!.pending = r.pending;
        }
        const jobId = frame?.jobId ?? `${next.children!.parent.jobId} children`;

        const limit = rateLimitAfterBatch(rateLimitWaits, r);
        rateLimitWaits = limit.waits;
        if (limit.giveUp) {
          throw ApplicationFailure.nonRetryable(
            `gave up after ${MAX_RATE_LIMIT_WAITS} rate-limit waits in a row: ${r.rateLimitMessage ?? ''}`,
            SapiErrorCode.EXTRACT_RATE_LIMITED,
          );
        }
        if (limit.waitMs !== null) {
          log.info(`extract: rate limited, waiting ${limit.waitMs} ms on a durable timer`, { job: jobId, message: r.rateLimitMessage });
          waitingUntil = Date.now() + limit.waitMs;
          view.refresh();
          const waited = () => cancelReason !== undefined;
          await condition(waited, limit.waitMs, { summary: `Retry-After ${Math.round(limit.waitMs / 1000)} s (${jobId})` });
          waitingUntil = undefined;
        }
      }

      const cancelled = cancelReason !== undefined;
      if (cancelled) log.info(`extract: cancelled (${cancelReason}); ${o.loadOnCancel ? 'loading what was staged' : 'not loading'}`);
      let tables: ExtractTableResult[];
      const loads = o.load && (!cancelled || o.loadOnCancel);
      if (!loads) {
        tables = notLoaded(cp);
      } else {
        phase = 'loading';
        view.refresh();
        tables = await loadTables(withParserStruct(cp, input), {
          workflowId: info.workflowId,
          connection: input.connection,
          bucketId,
          // the option wins; else the configuration's incrementalOutput (absent from configs validated before it)
          incremental: input.options?.incremental ?? config.config.incrementalOutput ?? false,
          primaryKeys: mappedPrimaryKeys(config),
          // a cancelled run may not have reached a mapped job: its table is not replaced by an empty one
          mappedTables: cancelled ? undefined : Object.fromEntries(configMappedTables(config).map((t) => [t.name, t.columns])),
          polling: input.options?.polling,
          outageBudgetMs: input.options?.outageBudgetMs,
          transferTaskQueue: input.options?.activityTaskQueue,
          priority,
          concurrency: o.loadConcurrency,
          ...(input.options?.receipts !== undefined ? { receipts: input.options.receipts } : {}),
          receiptOrigin: {
            workflowId: info.workflowId,
            runId: info.firstExecutionRunId,
            source: { kind: 'api', location: validated.api.baseUrl.replace(/[?#].*$/, '').replace(/\/\/[^/@]*@/, '//'), range: extractRange(cp, input) },
          },
          activities: { findTable: acts.findTable, buildTableCsv: builder.buildTableCsv },
        });
      }
      // the next run's state only after the tables were loaded (never on failure, cancel or load: false). The rows are
      // committed by now: a bookkeeping step that still fails after its outage budget is a warning, never a failure
      // (a failed run would be rerun, and an incremental rerun would load the rows again)
      let storedState: ExtractRunState | null = null;
      if (cp.runState && cp.runTimes && !cancelled && !limitReached && o.load) {
        // like the reference, the parser structure with this run's tables, so they keep their columns
        const parserState = parserStateOf(withParserStruct(cp, input).schema, validated, cp.runState.previous, cp.parentAliases);
        const next = nextRunState(cp.runState.previous, cp.runTimes, parserState);
        try {
          await acts.writeRunState({ stateKey: cp.runState.stateKey, state: next });
          storedState = next;
        } catch (err) {
          if (!(err instanceof ActivityFailure)) throw err;
          addWarnings([
            `the tables are loaded, but the run state ${cp.runState.stateKey} was not stored (${failureOf(err)?.message ?? err.message}): the next run starts from the previous state again and extracts this run's window once more`,
          ]);
        }
      }
      // the staging only after the tables were loaded and the next run's state stored: until then a retry needs it
      let staging: ExtractResult['staging'] = { kept: true };
      if (loads && !o.keepStaging) {
        try {
          staging = { removed: (await acts.cleanStaging({ runKey: cp.runKey })).removed };
        } catch (err) {
          if (!(err instanceof ActivityFailure)) throw err;
          addWarnings([`the tables are loaded, but the staging under ${cp.runKey} was not removed (${failureOf(err)?.message ?? err.message})`]);
        }
      }
      phase = cancelled ? 'cancelled' : 'done';
      view.set({ SapiRows: tables.reduce((sum, table) => sum + table.rows, 0), SapiBytes: cp.bytes });
      view.refresh();
      return {
        workflowId: info.workflowId,
        runId: cp.runId,
        runs: cp.runs,
        bucketId,
        tables,
        pages: cp.pages,
        records: cp.records,
        bytes: cp.bytes,
        warnings: cp.warnings,
        warningsDropped: cp.warningsDropped,
        stopReasons: cp.stopReasons,
        cancelled,
        runKey: cp.runKey,
        staging,
        ...(cp.runTimes !== undefined ? { runTimes: cp.runTimes } : {}),
        ...(cp.runState ? { runState: { stateKey: cp.runState.stateKey, stored: storedState } } : {}),
      };
    } catch (err) {
      if (err instanceof ContinueAsNew) throw err;
      phase = 'failed';
      const failure = budgetSpent(err);
      error = failure instanceof Error ? failure.message : String(failure);
      view.refresh();
      throw failure;
    }
  };
  const result = await CancellationScope.nonCancellable(run);
  // asked to cancel (a cancellation request, not the update): the run ends *cancelled*, as `temporal workflow cancel` ends any run
  if (cancelRequested)
    throw new CancelledFailure(
      `extraction cancelled (${cancelReason ?? 'cancellation requested'}): ${result.pages} pages, ${result.tables.length} table(s) loaded`,
    );
  return result;
}

/** `job 0 (users)`: the job and its endpoint without query or fragment (they may carry a key). */
function fetchTarget(job: { id?: string; endpoint?: string } | undefined): string {
  const endpoint = job?.endpoint?.replace(/[?#].*$/, '');
  return `job ${job?.id ?? '?'}${endpoint ? ` (${endpoint})` : ''}`;
}

/** `child runs 1001… of 13000 (…/children/r0000000001-p0000000001/)`: where a child batch starts. */
function childrenTarget(children: { ref?: { count?: number; next?: number; key?: string } }): string {
  const ref = children.ref;
  return `child runs ${Number(ref?.next ?? 0) + 1}… of ${ref?.count ?? '?'}${ref?.key ? ` (${ref.key})` : ''}`;
}

/** Current details of an extraction: phase, where it is, totals, the Retry-After being waited out, the error. */
function extractDetails(p: ExtractProgress): string {
  return [
    detailLine({ phase: p.phase, job: p.job ?? undefined, page: p.page || undefined, pages: p.pages, records: p.records, bytes: bytesText(p.bytes) }),
    detailLine({
      tables:
        Object.entries(p.tables)
          .map(([t, rows]) => `${t} ${rows}`)
          .join(', ') || undefined,
      runs: p.runs > 1 ? p.runs : undefined,
    }),
    p.waitingUntil !== undefined ? `**waiting** Retry-After until ${new Date(p.waitingUntil).toISOString()}` : '',
    p.error ? `**error** ${p.error}` : '',
  ]
    .filter(Boolean)
    .join('  \n');
}
