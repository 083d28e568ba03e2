import {
  ActivityFailure,
  ApplicationFailure,
  ContinueAsNew,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  executeChild,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
  type ActivityOptions,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { SapiActivities } from '../activities';
import type { FetchPagesResult } from '../activities/extract-activities';
import { columnsOf, createScrollerState, mergeTableSchema, nextStep, type ParentContext } from '../extractor/pure';
import type { ExtractorConfig, JobConfig } from '../extractor/types';
import {
  cursorOf,
  extractBucketId,
  findJob,
  isBucketId,
  MAX_HISTORY_EVENTS,
  MAX_WARNINGS,
  resolveExtractOptions,
  stagingRunKey,
  storageColumnNames,
  type ResolvedExtractOptions,
} from '../contracts/extract-plan';
import type {
  BatchProgress,
  ExtractCheckpoint,
  ExtractInput,
  ExtractPhase,
  ExtractProgress,
  ExtractResult,
  ExtractTableResult,
  JobFrame,
} from '../contracts/extract';
import { importTableWorkflow } from './import-table';
import { ErrorCode, NON_RETRYABLE_ERROR_CODES } from '../contracts/error-codes';

export type * from '../contracts/extract';

/** Query: where the extraction is (phase, job, page, cursor, totals, rows staged per table). */
export const extractProgressQuery = defineQuery<ExtractProgress>('progress');
/** Signal: stop fetching after the batch in flight, until `resume`. */
export const pauseSignal = defineSignal('pause');
/** Signal: carry on after `pause`. */
export const resumeSignal = defineSignal('resume');
/** Signal: stop fetching; with `loadOnCancel` (default) load what was staged; the result says `cancelled: true`. */
export const extractCancelSignal = defineSignal<[reason?: string]>('cancel');

/** Signal the page-fetching activity sends (at most every 5 s) so that `progress` follows a long batch. */
export const extractProgressSignal = defineSignal<[BatchProgress]>('extractProgress');

/** Consecutive rate-limit waits without a page in between before the extraction gives up. */
export const MAX_RATE_LIMIT_WAITS = 50;

/** Failure types the extraction never retries (besides the Storage ones). */
export const EXTRACT_NON_RETRYABLE_ERROR_CODES: readonly string[] = NON_RETRYABLE_ERROR_CODES;

function activityOptionsFor(o: ResolvedExtractOptions, taskQueue: string | undefined) {
  const retry: RetryPolicy = {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: [...EXTRACT_NON_RETRYABLE_ERROR_CODES],
  };
  // short calls heartbeat while they run (asActivity): a dead worker's call is taken over within 10 s
  const short: ActivityOptions = { taskQueue, startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: { ...retry, maximumAttempts: 5 } };
  // a dead worker's batch is taken over within the heartbeat timeout; the retry resumes from the last heartbeat
  const fetch: ActivityOptions = {
    taskQueue,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: o.heartbeatTimeoutMs,
    retry: { ...retry, maximumAttempts: 10 },
  };
  const build: ActivityOptions = { taskQueue, startToCloseTimeout: '6 hours', heartbeatTimeout: '20 seconds', retry: { ...retry, maximumAttempts: 10 } };
  return { short, fetch, build };
}

/** The failure type of an activity failure (our error code), if any. */
function failureOf(err: unknown): ApplicationFailure | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/**
 * Runs a Generic-Extractor configuration durably and loads the output tables into Storage.
 *
 * 1. An activity validates the configuration (a config error fails here, before any request).
 * 2. The jobs run in the reference's order (top-level jobs one after another, each fresh; a page's child runs
 *    before the parent's next page). The workflow keeps, per job run, the scroller state (next request, last hash,
 *    counters), plus the table schema and totals; page data never enters history: `fetchPages` stages it.
 * 3. A long `Retry-After` is waited on a durable timer; `pause`/`resume`/`cancel` signals act between batches.
 * 4. History stays bounded: continue-as-new with the checkpoint when the server suggests it (or after
 *    `MAX_HISTORY_EVENTS` events / `continueAsNewAfterPages` pages).
 * 5. At the end, per table: `buildTableCsv` (staged rows in extraction order, final column union), then an
 *    `importTableWorkflow` child (create the table, or load into the existing one, `incremental` as configured).
 *
 * A non-JSON answer or a 4xx ends the workflow with a failure naming the URL, the status and the body's start; the
 * pages staged so far are kept (under `<staging>/<runKey>/`) but not loaded.
 */
export async function extractWorkflow(input: ExtractInput): Promise<ExtractResult> {
  const info = workflowInfo();
  const { options: o, problems } = resolveExtractOptions(input.options);
  const connection = input.connection;
  const cp: ExtractCheckpoint = input.resume ?? {
    v: 1,
    runKey: stagingRunKey(info.workflowId, info.firstExecutionRunId),
    runId: info.firstExecutionRunId,
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
  let phase: ExtractPhase = cp.paused ? 'paused' : 'extracting';
  let cancelReason: string | undefined;
  let waitingUntil: number | undefined;
  let error: string | undefined;
  /** The batch in flight (`BatchProgress.batch`) and what it reported so far. */
  let inFlight: { batch: string; progress?: BatchProgress } | undefined;

  setHandler(extractProgressQuery, (): ExtractProgress => {
    const frame = cp.frames[cp.frames.length - 1];
    const live = inFlight?.progress;
    const tables = { ...cp.rows };
    for (const [table, rows] of Object.entries(live?.rows ?? {})) tables[table] = (tables[table] ?? 0) + rows;
    return {
      phase,
      job: frame?.jobId ?? null,
      page: live?.page ?? frame?.state.pages ?? 0,
      cursor: live ? live.cursor : frame ? cursorOf(frame.state) : null,
      pages: cp.pages + (live?.pages ?? 0),
      records: cp.records + (live?.records ?? 0),
      bytes: cp.bytes + (live?.bytes ?? 0),
      tables,
      runs: cp.runs,
      warnings: cp.warnings.length + cp.warningsDropped,
      ...(waitingUntil !== undefined ? { waitingUntil } : {}),
      ...(error !== undefined ? { error } : {}),
    };
  });
  setHandler(pauseSignal, () => void (cp.paused = true));
  setHandler(resumeSignal, () => void (cp.paused = false));
  setHandler(extractCancelSignal, (reason) => void (cancelReason = reason ?? 'cancelled by signal'));
  setHandler(extractProgressSignal, (progress) => {
    if (inFlight && progress.batch === inFlight.batch) inFlight.progress = progress;
  });

  const addWarnings = (warnings: readonly string[]) => {
    for (const warning of warnings) {
      if (cp.warnings.includes(warning)) continue;
      log.warn(`extract: ${warning}`, { runKey: cp.runKey });
      if (cp.warnings.length < MAX_WARNINGS) cp.warnings.push(warning);
      else cp.warningsDropped++;
    }
  };

  const { short, fetch, build } = activityOptionsFor(o, input.options?.activityTaskQueue);
  const acts = proxyActivities<SapiActivities>(short);
  const fetcher = proxyActivities<SapiActivities>(fetch);
  const builder = proxyActivities<SapiActivities>(build);

  try {
    if (problems.length > 0) throw ApplicationFailure.nonRetryable(`invalid extract options: ${problems.join('; ')}`, ErrorCode.INVALID_INPUT);
    let config: ExtractorConfig;
    try {
      config = await acts.validateExtractConfig({ config: input.config });
    } catch (err) {
      const failure = failureOf(err);
      if (!failure) throw err;
      throw ApplicationFailure.create({ type: failure.type ?? undefined, message: failure.message, nonRetryable: true, details: failure.details as unknown[] });
    }
    const bucketId = extractBucketId(input.options?.bucketId, config.config.outputBucket);
    if (!isBucketId(bucketId)) {
      throw ApplicationFailure.nonRetryable(`cannot derive a bucket id from outputBucket ${JSON.stringify(config.config.outputBucket)}: set options.bucketId`, ErrorCode.INVALID_INPUT);
    }

    let pagesThisRun = 0;
    let rateLimitWaits = 0;

    const startRun = (job: JobConfig, endpoint: string, parentColumns: Record<string, string>, parent: ParentContext | null): JobFrame => ({
      runNo: cp.nextRunNo++,
      jobId: job.id,
      endpoint,
      parentColumns,
      parent,
      state: createScrollerState({ ...job, endpoint }, config.api, Date.now()),
      pending: null,
    });

    const apply = (r: FetchPagesResult) => {
      cp.pages += r.pages;
      cp.records += r.records;
      cp.bytes += r.bytes;
      cp.schema = mergeTableSchema(cp.schema, Object.entries(r.schema).map(([name, keys]) => ({ name, keys })));
      for (const [table, rows] of Object.entries(r.rows)) cp.rows[table] = (cp.rows[table] ?? 0) + rows;
      addWarnings(r.warnings);
      pagesThisRun += r.pages;
    };

    while (cancelReason === undefined) {
      if (cp.paused) {
        phase = 'paused';
        await condition(() => !cp.paused || cancelReason !== undefined);
        phase = 'extracting';
        continue;
      }
      const frame = cp.frames[cp.frames.length - 1];
      if (!frame) {
        const job = config.config.jobs[cp.nextJob];
        if (!job) break;
        cp.nextJob++;
        cp.frames.push(startRun(job, job.endpoint, {}, null));
        continue;
      }
      if (frame.pending) {
        // the page's children run (each fully paginated) before the parent's next page, as the reference does
        const child = frame.pending.children.shift();
        if (child) {
          cp.frames.push(startRun(findJob(config, child.jobId), child.endpoint, child.parentColumns, child.parent));
          continue;
        }
        const step = nextStep(frame.state, frame.pending.result, Date.now());
        addWarnings(step.warnings);
        frame.state = step.state;
        frame.pending = null;
      }
      if (!frame.state.next) {
        const reasons = (cp.stopReasons[frame.jobId] ??= {});
        const reason = frame.state.stopReason ?? 'no-pagination';
        reasons[reason] = (reasons[reason] ?? 0) + 1;
        cp.frames.pop();
        continue;
      }

      const now = workflowInfo();
      if (now.continueAsNewSuggested || now.historyLength > MAX_HISTORY_EVENTS || (o.continueAsNewAfterPages !== null && pagesThisRun >= o.continueAsNewAfterPages)) {
        await continueAsNew<typeof extractWorkflow>({ ...input, resume: { ...cp, runs: cp.runs + 1 } });
      }

      let r: FetchPagesResult;
      inFlight = { batch: `${frame.runNo}:${frame.state.pages}` };
      try {
        r = await fetcher.fetchPages({
          runKey: cp.runKey,
          runNo: frame.runNo,
          job: { ...findJob(config, frame.jobId), endpoint: frame.endpoint },
          context: { parentColumns: frame.parentColumns, parent: frame.parent },
          state: frame.state,
          maxPages: o.mode === 'page' ? 1 : o.batchPages,
          maxMs: o.batchSeconds * 1000,
          fetch: input.options?.fetch,
        });
      } catch (err) {
        inFlight = undefined;
        const failure = failureOf(err);
        if (!failure) throw err;
        throw ApplicationFailure.create({
          type: failure.type ?? undefined,
          message: `extraction stopped in job '${frame.jobId}' at page ${frame.state.pages + 1}: ${failure.message} (pages staged so far are kept under ${cp.runKey}, not loaded)`,
          nonRetryable: true,
          details: [{ jobId: frame.jobId, page: frame.state.pages + 1, runKey: cp.runKey }, ...((failure.details as unknown[] | undefined) ?? [])],
        });
      }
      inFlight = undefined;
      apply(r);
      frame.state = r.state;
      frame.pending = r.pending;
      if (r.rateLimitedMs !== undefined) {
        rateLimitWaits = r.pages > 0 ? 1 : rateLimitWaits + 1;
        if (rateLimitWaits > MAX_RATE_LIMIT_WAITS) {
          throw ApplicationFailure.nonRetryable(`gave up after ${MAX_RATE_LIMIT_WAITS} rate-limit waits in a row: ${r.rateLimitMessage ?? ''}`, ErrorCode.EXTRACT_RATE_LIMITED);
        }
        const waitMs = Math.max(1, r.rateLimitedMs);
        log.info(`extract: rate limited, waiting ${waitMs} ms on a durable timer`, { job: frame.jobId, message: r.rateLimitMessage });
        waitingUntil = Date.now() + waitMs;
        await condition(() => cancelReason !== undefined, waitMs);
        waitingUntil = undefined;
      } else if (r.pages > 0) {
        rateLimitWaits = 0;
      }
    }

    const cancelled = cancelReason !== undefined;
    if (cancelled) log.info(`extract: cancelled (${cancelReason}); ${o.loadOnCancel ? 'loading what was staged' : 'not loading'}`);
    const tables = !o.load || (cancelled && !o.loadOnCancel) ? notLoaded() : await loadTables(bucketId);
    phase = cancelled ? 'cancelled' : 'done';
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
    };
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    phase = 'failed';
    error = err instanceof Error ? err.message : String(err);
    throw err;
  }

  function stagedTables(): string[] {
    return Object.keys(cp.schema).filter((name) => (cp.rows[name] ?? 0) > 0 && (cp.schema[name]?.length ?? 0) > 0);
  }

  function notLoaded(): ExtractTableResult[] {
    return stagedTables().map((name) => ({
      name,
      tableId: null,
      rows: cp.rows[name] ?? 0,
      stagedRows: cp.rows[name] ?? 0,
      columns: storageColumnNames(columnsOf(cp.schema, name)),
    }));
  }

  async function loadTables(bucketId: string): Promise<ExtractTableResult[]> {
    phase = 'loading';
    return Promise.all(
      stagedTables().map(async (name): Promise<ExtractTableResult> => {
        const keys = cp.schema[name]!;
        const tableId = `${bucketId}.${name}`;
        const existing = await acts.findTable({ connection, tableId });
        // an existing table's columns we did not see are kept (empty values), or Storage refuses the load
        const ours = storageColumnNames(columnsOf(cp.schema, name));
        const known = new Set(ours.map((c) => c.toLowerCase()));
        const columns = [...ours, ...existing.columns.filter((c) => !known.has(c.toLowerCase()))];
        const csv = await builder.buildTableCsv({ runKey: cp.runKey, table: name, keys, columns });
        const imported = await executeChild(importTableWorkflow, {
          workflowId: `${info.workflowId}-load-${name}-${cp.runId.slice(0, 8)}`,
          args: [
            {
              connection,
              source: csv.uri,
              bucketId,
              createBucket: true,
              table: name,
              mode: existing.exists ? 'load' : 'create',
              incremental: o.incremental,
              polling: input.options?.polling,
              transferTaskQueue: input.options?.activityTaskQueue,
            },
          ],
        });
        return { name, tableId: imported.tableId, rows: imported.importedRowsCount, stagedRows: cp.rows[name] ?? 0, columns, csv: csv.uri };
      }),
    );
  }
}
