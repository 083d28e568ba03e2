// Input, result and progress of `extractWorkflow`. Types only: safe for workflow code and for callers.
import type { StopReasonCounts } from '../extractor/checkpoint';
import type { CallWaiting } from './call-waiting';
import type { ExtractRunState } from '../extractor/run-state';
import type { ExtractRunTimes } from '../extractor/types';
import type { PollingOptions } from './transfer';
import type { ReceiptOutcome, ReceiptsOption } from './receipts';

/** How pages are fetched: one activity per page, or batches of pages per activity. */
export type ExtractMode = 'page' | 'batch';

/** Fetcher tuning passed to the page fetcher (see `FetchPageOptions`); every field optional. */
export interface ExtractFetchTuning {
  /** Attempts per request for 5xx, 408, 429 and network errors, inside one activity attempt. Default 4. */
  maxAttempts?: number;
  /** Backoff base (ms). Default 250. */
  baseDelayMs?: number;
  /** Backoff cap (ms). Default 5 000. */
  maxDelayMs?: number;
  /** Longest `Retry-After` waited inside the activity (ms); longer asks wait on a durable timer. Default 5 000. */
  maxInlineRetryAfterMs?: number;
  /** Time to receive response headers (ms). Default 30 000. */
  headersTimeoutMs?: number;
}

/** Options of `extractWorkflow`; every field has a documented default. */
export interface ExtractOptions {
  /**
   * `batch` (default): one activity fetches up to `batchPages` pages or `batchSeconds`, staging pages in groups and
   * heartbeating the resume point; `page`: calls of at most 0.5 s (the `pause` and `cancel` updates act between them) in which every page is
   * staged with its checkpoint before the next is fetched, so a crash loses at most the page in flight.
   */
  mode?: ExtractMode;
  /** Pages per activity in batch mode. Default 5000 (`batchSeconds` usually ends a batch first). */
  batchPages?: number;
  /** Longest time one batch keeps fetching (s); the page in flight is finished. Default 10. */
  batchSeconds?: number;
  /** Load the tables into Storage at the end. Default true (false: extract only; the rows stay staged as JSON lines under `<staging>/<runKey>/`). */
  load?: boolean;
  /** After a `cancel` update or a cancellation request, load what was staged so far. Default true. */
  loadOnCancel?: boolean;
  /**
   * Keep the staged pages and built CSVs (under `<staging>/<runKey>/`) after the tables were loaded. Default false:
   * they are removed once every table is loaded. Never removed when nothing was loaded or the run failed.
   */
  keepStaging?: boolean;
  /** Target bucket. Default `in.c-<outputBucket>` (or `outputBucket` as is when it already looks like `in.c-…`/`out.c-…`), else `in.c-extractor`. */
  bucketId?: string;
  /** Load into existing tables incrementally (append/upsert) instead of replacing their rows. Default false. */
  incremental?: boolean;
  /**
   * Tables loaded at once at the end (each a `findTable`, a `buildTableCsv` and an `importTableWorkflow` child); the
   * others wait their turn, in schema order. Default 4 (1–100): an extraction of hundreds of tables starts no more
   * Storage jobs and builds no more CSVs at a time than this.
   */
  loadConcurrency?: number;
  /** Heartbeat timeout of the page-fetching activity (ms): how fast a dead worker's batch is taken over. Default 15 000. */
  heartbeatTimeoutMs?: number;
  /** Continue-as-new after this many pages in one run (besides the server's suggestion). Default: none (tests use it). */
  continueAsNewAfterPages?: number;
  /** Page fetcher tuning. */
  fetch?: ExtractFetchTuning;
  /** Polling of the Storage import jobs. */
  polling?: PollingOptions;
  /** How long an outage of the API's or Storage's services is waited out per call (ms); see `ImportTableInput.outageBudgetMs`. Default 1 hour. */
  outageBudgetMs?: number;
  /**
   * Where the receipts of the table loads go (one row per loaded table, naming this extraction and its window; see
   * `ImportTableInput.receipts`): `{table}`, or `false` for none. Default: the worker's `SAPI_RECEIPTS_TABLE`.
   */
  receipts?: ReceiptsOption;
  /** Task queue of the extraction activities and of the import's transfer (needed with a local staging folder on a multi-host deployment: a queue polled by the one host that has the folder). Default: the workflow's. */
  activityTaskQueue?: string;
}

/** Input of `extractWorkflow`. */
export interface ExtractInput {
  /** Named Storage connection configured on the worker (default `default`). Never a token. */
  connection?: string;
  /** The Generic-Extractor configuration JSON (`{parameters: {api, config}}`), validated by an activity before any request. */
  config: unknown;
  options?: ExtractOptions;
  /**
   * Names the run state of this configuration (1–200 of `[A-Za-z0-9._-]`, e.g. the configuration id): the run reads
   * `previousStart` from it at its start and, only when its tables were loaded, stores the next state (previousStart =
   * this run's start). It lives in the stage store (`SAPI_STAGING_URL`) at `run-state/<stateKey>.json`. Without it,
   * nothing is read or stored and `previousStart` is 0.
   */
  stateKey?: string;
  /**
   * A state to start from instead of the stored one: a reference extractor's `state.json` (to continue incrementally
   * after migrating), or `{}` to reset (`previousStart` 0). Stored like any state after a successful load.
   */
  importState?: unknown;
}

/** One output table. */
export interface ExtractTableResult {
  /** Table name (safe name of the `dataType`, or `<table>_<property>` for child tables). */
  name: string;
  /** `bucket.table` once loaded; `null` when not loaded (`load: false`, or cancelled without `loadOnCancel`). */
  tableId: string | null;
  /** Rows loaded (the import job's count), or rows staged when not loaded. */
  rows: number;
  /** Rows staged from the pages (equals `rows` after a full load). */
  stagedRows: number;
  /** CSV header: safe, unique Storage column names. */
  columns: string[];
  /** The primary key the table was created with (a mapped table's; absent when none or when loaded into an existing table). */
  primaryKey?: string[];
  /**
   * Where the CSV that was loaded was built (`s3://…` or a path on the worker's host); absent when not loaded.
   * Removed with the rest of the staging after the load unless `keepStaging` (see `ExtractResult.staging`).
   */
  csv?: string;
  /** The load's receipt and whether it was written (absent when not loaded). */
  receipt?: ReceiptOutcome;
}

/** Result of `extractWorkflow`. */
export interface ExtractResult {
  workflowId: string;
  /** Run id of the first run of the chain (also the staging key of this extraction). */
  runId: string;
  /** Runs in the continue-as-new chain (1 = none). */
  runs: number;
  bucketId: string;
  tables: ExtractTableResult[];
  /** Pages extracted (repeated responses excluded). */
  pages: number;
  records: number;
  /** Response-body bytes. */
  bytes: number;
  /** Warnings (deduplicated, at most 100; `warningsDropped` counts the rest). */
  warnings: string[];
  warningsDropped: number;
  stopReasons: StopReasonCounts;
  /** True when ended by the `cancel` update or a cancellation request. */
  cancelled: boolean;
  /** Where the pages were staged: `<staging>/<runKey>/…`. */
  runKey: string;
  /**
   * What became of the staging: `removed` objects after the tables were loaded, or `kept` (with `keepStaging`, when
   * nothing was loaded, or on a run that started before this field existed: absent then).
   */
  staging?: { removed: number } | { kept: true };
  /** This run's times (Unix seconds): `previousStart` from the state read at the start, `currentStart` this run's. */
  runTimes?: ExtractRunTimes;
  /** With `stateKey`: the state stored for the next run (`null` when not stored: nothing loaded, or cancelled). */
  runState?: { stateKey: string; stored: ExtractRunState | null };
}

export type ExtractPhase = 'extracting' | 'paused' | 'loading' | 'done' | 'cancelled' | 'failed';

/** Answer of the `progress` query. */
export interface ExtractProgress {
  phase: ExtractPhase;
  /** Config id of the job being paginated (`"0"`, `"0.1"`), or null between jobs. */
  job: string | null;
  /** Pages of the current job run. */
  page: number;
  /** The next request's cursor value (or URL), shortened. */
  cursor: string | null;
  /** Totals over the whole extraction. */
  pages: number;
  records: number;
  bytes: number;
  /** Rows staged per table. */
  tables: Record<string, number>;
  runs: number;
  warnings: number;
  /** Set while waiting for a rate limit (ms since epoch when fetching resumes). */
  waitingUntil?: number;
  /** While a call waits an outage out (Temporal retries it): which, its last failure and since when. */
  waitingFor?: CallWaiting;
  /** Paused, or asked to pause (it pauses once the batch in flight ends). */
  paused?: boolean;
  /** Asked to cancel (the reason): it stops once the batch in flight ends. */
  cancelling?: string;
  /** The page limit set with `setLimits`. */
  maxPages?: number;
  /** Child runs of the page being waited for: started so far and in all (absent when no page waits for children). */
  children?: { started: number; of: number };
  /** The batch of child runs the run waits for next (`c<firstRunNo>:<from>`, a child batch's heartbeat tag). */
  childBatch?: string;
  error?: string;
  /** This run's times (Unix seconds), once known. */
  runTimes?: ExtractRunTimes;
}
