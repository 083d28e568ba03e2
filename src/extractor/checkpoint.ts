// The traversal's checkpoint: the job runs in progress and what a run carries on after a continue-as-new. Types
// only: safe for workflow code.
import type { ParentContext } from './children';
import type { ExtractRunState } from './run-state';
import type { PageResult, ScrollerState, StopReason } from './scroller';
import type { TableSchema } from './table-schema';
import type { ExtractRunTimes } from './types';

/** Per config job id (`"0"`, `"0.0"`), how many job runs ended for which reason. */
export type StopReasonCounts = Record<string, Partial<Record<StopReason, number>>>;

/** A child job run to execute: the child config job by id, its endpoint with placeholders filled, its context. */
export interface ChildSpec {
  jobId: string;
  endpoint: string;
  parentColumns: Record<string, string>;
  parent: ParentContext;
}

/**
 * Where the child runs of a page wait: their {@link ChildSpec}s, in order, staged as JSON lines in chunks of
 * `CHILD_CHUNK_SIZE` under `key` in the run's staging (never in history: a page may have 100,000 parent rows), and how
 * far the traversal got. Written by the `fetchPages` call that fetched the page (deterministic keys: a re-fetch
 * replaces them); read by the `fetchPages` calls that run the child runs in batches.
 */
export interface ChildrenRef {
  /** Stage-store key prefix of the chunks (`<runKey>/children/r<run>-p<page>/`). */
  key: string;
  /** Child runs in all. */
  count: number;
  /** Index of the next child run to start (`count`: every one started). */
  next: number;
}

/** A fetched page whose `nextStep` waits for its children (or for the workflow's decision). */
export interface PendingPage {
  pageNo: number;
  /** Body-free input of `nextStep`. */
  result: PageResult;
  /** Child runs to execute before `nextStep`, in order (absent: none). */
  children?: ChildrenRef;
}

/** One job run in progress (a top-level job, or one child run per parent row). */
export interface JobFrame {
  /** Sequence number of the run in this extraction (staging key part). */
  runNo: number;
  jobId: string;
  /** The endpoint the run uses (placeholders filled for child runs). */
  endpoint: string;
  parentColumns: Record<string, string>;
  parent: ParentContext | null;
  state: ScrollerState;
  pending: PendingPage | null;
}

/** Everything a run needs to carry on after a continue-as-new (small JSON; the config stays in the input). */
export interface ExtractCheckpoint {
  v: 1;
  runKey: string;
  runId: string;
  runs: number;
  /** Index of the next top-level job to start. */
  nextJob: number;
  nextRunNo: number;
  /** Job runs in progress, outermost first. */
  frames: JobFrame[];
  schema: TableSchema;
  rows: Record<string, number>;
  pages: number;
  records: number;
  bytes: number;
  warnings: string[];
  warningsDropped: number;
  stopReasons: StopReasonCounts;
  paused: boolean;
  /** Stop fetching once this many pages are fetched (set by the `setLimits` update; absent: no limit). */
  maxPages?: number;
  /** This run's times for `{"time": …}` functions (absent until the run has read its state, at its start). */
  runTimes?: ExtractRunTimes;
  /** The state read at the start (with `stateKey`), kept to write the next one. */
  runState?: { stateKey: string; previous: ExtractRunState | null };
  /** Parent columns renamed so far (JSON parser: `tag` → `tag_u0`), kept for every later page of the run. */
  parentAliases?: Record<string, string>;
  /** Index of the `parameters.iterations` entry being run (absent: the first, or a configuration without iterations). */
  iteration?: number;
}
