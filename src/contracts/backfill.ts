// Input, result, progress and checkpoint of `backfillWorkflow`. Types only: safe for workflow code and for callers.
import type { ExtractInput } from './extract';
import type { ImportTableInput } from './transfer';

/** Child runs a backfill keeps going at once, by default. */
export const DEFAULT_BACKFILL_PARALLEL = 4;
/** Most child runs a backfill may keep going at once. */
export const MAX_BACKFILL_PARALLEL = 50;
/** Most windows (or sources) one backfill may have. */
export const MAX_BACKFILL_WINDOWS = 1000;
/**
 * The priority key of a backfill's child runs when the backfill was started without one: behind the scheduled runs
 * (2) and ad-hoc runs (the server's default, 3), so tonight's live runs go first on a shared queue.
 */
export const BACKFILL_PRIORITY = 4;
/**
 * Where each window's bounds reach an extraction's configuration: `parameters.config.backfill` = `{from, to}` (ISO
 * 8601 UTC, `from` inclusive, `to` exclusive), so a job reads them as `{"attr": "backfill.from"}` /
 * `{"attr": "backfill.to"}` (the `attr` context of Generic-Extractor user functions: `parameters.config` as dot paths).
 */
export const BACKFILL_CONFIG_KEY = 'backfill';

/** What every backfill takes besides what it runs. */
export interface BackfillCommonInput {
  /** Child runs going at once (a sliding window: the next starts when one ends). Default 4, at most 50. */
  parallel?: number;
  /** Continue-as-new after this many windows ended in one run (besides the server's suggestion). Default: none (tests use it). */
  continueAsNewAfterWindows?: number;
}

/**
 * A backfill of an extraction over a date range: one `extractWorkflow` child per window of `window` from `from` to
 * `to`, each with the window's bounds in `parameters.config.backfill` ({@link BACKFILL_CONFIG_KEY}) and its own
 * checkpoints. The children neither read nor write the run state of `extract.stateKey`.
 */
export interface BackfillExtractInput extends BackfillCommonInput {
  kind: 'extract';
  /** The extraction each window runs (its `stateKey` names the live state: never read or written by a window). */
  extract: ExtractInput;
  /** Start of the range, inclusive: `2025-01-01` (UTC midnight) or an ISO time with `Z` (`2025-01-01T06:00:00Z`). */
  from: string;
  /** End of the range, exclusive; the last window ends here (it may be shorter than `window`). */
  to: string;
  /** Length of a window, ISO 8601: `P7D`, `P1W`, `P1M` (calendar months), `P1Y`, `PT6H`, `PT30M`. */
  window: string;
  /**
   * Once every window succeeded (they are contiguous by construction), store the live run state of `extract.stateKey`
   * once, with `previousStart` = `to`, keeping its other keys; never moved backwards (a live state already past `to`
   * is left as it is). Needs `extract.stateKey`. Default false: the live state is never touched.
   */
  advanceState?: boolean;
}

/**
 * A backfill of imports: one `importTableWorkflow` child per source, each `{...import, source}`, loaded
 * incrementally into the same existing table.
 */
export interface BackfillImportInput extends BackfillCommonInput {
  kind: 'import';
  /** The import each source runs (everything but `source`/`slices`); `incremental: true` is required. */
  import: Omit<ImportTableInput, 'source' | 'slices' | 'sourceGrant'>;
  /** The sources, one child run each, in this order. */
  sources: string[];
}

/** Input of `backfillWorkflow`. */
export type BackfillInput = BackfillExtractInput | BackfillImportInput;

/** One window of a backfill (a date window of an extraction, or one source of imports). */
export interface BackfillWindow {
  /** 0-based position. */
  index: number;
  /** `w0001`: the end of the child's workflow id (`<backfill id>-w0001`). */
  label: string;
  /** Date windows: the bounds (ISO, UTC; `to` exclusive). */
  from?: string;
  to?: string;
  /** Imports: the source. */
  source?: string;
}

/**
 * A window's state: `pending` (not started), `running`, `done`, `failed` (its child failed; the backfill fails once
 * the windows going have ended), `cancelled` (the backfill was cancelled before or while it ran).
 */
export type BackfillWindowState = 'pending' | 'running' | 'done' | 'failed' | 'cancelled';

/** What a window ended with. */
export interface BackfillWindowOutcome {
  /** Rows loaded by its child (all tables); absent when the child had completed before (`alreadyDone`). */
  rows?: number;
  /** The child had completed in an earlier backfill run under the same id: not run again. */
  alreadyDone?: true;
  /** Why it failed or was cancelled. */
  error?: string;
}

/**
 * The compact state a backfill carries through continue-as-new: one character per window (`.` pending, `d` done,
 * `f` failed, `c` cancelled; running windows are never carried: a run drains them before it continues) and the
 * outcomes of the ended ones. The windows themselves are derived from the input again.
 */
export interface BackfillCheckpoint {
  v: 1;
  states: string;
  outcomes: Record<number, BackfillWindowOutcome>;
  paused: boolean;
  runs: number;
}

export type BackfillPhase = 'running' | 'paused' | 'draining' | 'advancing' | 'done' | 'cancelled' | 'failed';

/** Answer of the `progress` query (and of the `pause`/`resume`/`cancel`/`progress` updates). */
export interface BackfillProgress {
  phase: BackfillPhase;
  /** Windows in all, and per state. */
  windows: number;
  counts: Record<BackfillWindowState, number>;
  /** Rows loaded by the windows that ended so far. */
  rows: number;
  /** Each window: where it is. */
  perWindow: Array<BackfillWindow & { state: BackfillWindowState; workflowId: string } & BackfillWindowOutcome>;
  runs: number;
  paused?: boolean;
  cancelling?: string;
  /** Always 0: what moves is rows (kept for the CLI's progress line, which shows bytes of transfers). */
  bytes: number;
  error?: string;
}

/** Result of `backfillWorkflow`. */
export interface BackfillResult {
  workflowId: string;
  kind: 'extract' | 'import';
  windows: number;
  /** Windows done (run by this backfill or completed before under the same child id). */
  done: number;
  /** Windows whose child had completed before (a rerun of the backfill): not run again. */
  alreadyDone: number;
  /** Rows loaded by the windows run (all tables). */
  rows: number;
  cancelled: boolean;
  runs: number;
  perWindow: BackfillProgress['perWindow'];
  /** With `advanceState`: what became of the live state (`stored` previousStart, or why not). */
  state?: { stateKey: string; advanced: boolean; previousStart: number; reason?: string };
}
