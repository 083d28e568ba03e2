/**
 * The traversal of an extraction's job tree as the durable run (`extractWorkflow`) drives it, one batch at a time:
 * which job run fetches next (top-level jobs in order, each fresh; a page's child runs, each fully paginated, before
 * the parent's next page, as the reference does; the child runs handed out in batches, their list staged outside
 * history, see `ChildrenRef`), the scroller stepped once a page's children are done, finished
 * runs counted by stop reason; and the stop decisions that need no I/O (continue-as-new, rate-limit give-up).
 *
 * Workflow-safe: no I/O, no clock (callers pass `nowMs`: workflow time), no randomness. The traversal works in place
 * on the workflow's checkpoint (job-run stack, next job, run numbers, stop reasons), which is what carries over a
 * continue-as-new. Not in `./pure` (it uses the contract's `findJob`, and `src/contracts` imports `./pure`).
 */
import type { ChildrenRef, ChildSpec, ExtractCheckpoint, JobFrame, PendingPage, StopReasonCounts } from './checkpoint';
import type { ParentContext } from './children';
import { functionScopeOf } from './functions';
import { createScrollerState, nextStep, type ScrollerState, type StopReason } from './scroller';
import type { ExtractorConfig, JobConfig } from './types';

/** Consecutive rate-limit waits without a page in between before the extraction gives up. */
export const MAX_RATE_LIMIT_WAITS = 50;

/** Continue-as-new after this many history events even before the server suggests it. */
export const MAX_HISTORY_EVENTS = 2_000;

/** The part of the checkpoint the traversal reads and moves. */
export type Traversal = Pick<ExtractCheckpoint, 'nextJob' | 'nextRunNo' | 'frames' | 'stopReasons'>;

/**
 * What {@link nextJobRunToFetch} decided: the job run whose `state.next` is sent next (`frame`), or a batch of the
 * child runs a page waits for (`children`), or neither (every job is done).
 */
interface NextFetch {
  frame: JobFrame | null;
  /** Child runs to fetch next (then `frame` is null); apply the call's outcome with {@link applyChildBatch}. */
  children?: ChildBatch;
  /** Warnings of the scroller steps taken on the way (in order). */
  warnings: string[];
}

/**
 * Consecutive child runs of the page `parent` waits for, from `ref.next` on: child `ref.next + i` runs as job run
 * `firstRunNo + i` (the numbers the runs would get one by one), each fully paginated, in the list's order.
 */
export interface ChildBatch {
  parent: JobFrame;
  ref: ChildrenRef;
  firstRunNo: number;
}

/** What a call running a {@link ChildBatch} did. */
export interface ChildBatchOutcome {
  /** Child runs finished (paginated to their end), from the batch's first. */
  done: number;
  /** Stop reasons of those runs, per config job. */
  stopReasons: StopReasonCounts;
  /**
   * The run after them when the call stopped inside it (its own children to run, the call's page or time limit, a
   * rate limit): it goes on as a job run of its own (run number `firstRunNo + done`).
   */
  open?: { spec: ChildSpec; state: ScrollerState; pending: PendingPage | null };
}

/** Pushes a new job run (a top-level job, or a child run with its filled endpoint and parent context). */
export function startJobRun(
  t: Traversal,
  config: ExtractorConfig,
  job: JobConfig,
  endpoint: string,
  parentColumns: Record<string, string>,
  parent: ParentContext | null,
  nowMs: number,
): JobFrame {
  const frame: JobFrame = {
    runNo: t.nextRunNo++,
    jobId: job.id,
    endpoint,
    parentColumns,
    parent,
    state: createScrollerState({ ...job, endpoint }, config.api, nowMs, functionScopeOf(config)),
    pending: null,
  };
  t.frames.push(frame);
  return frame;
}

/** Adds stop-reason counts to the traversal's. */
function addStopReasons(t: Traversal, counts: StopReasonCounts): void {
  for (const [jobId, reasons] of Object.entries(counts)) {
    const into = (t.stopReasons[jobId] ??= {});
    for (const [reason, n] of Object.entries(reasons) as Array<[StopReason, number]>) into[reason] = (into[reason] ?? 0) + n;
  }
}

/**
 * Moves the traversal to the next request to send: starts the next top-level job when no run is open, hands out
 * the next child runs of a page waiting for its children (a batch: see {@link applyChildBatch}), steps the scroller
 * (`nextStep`) of a page whose children are done, pops runs that are finished (counting their stop reason per config
 * job). Returns the run to fetch, the batch, or `frame: null` when every job is done.
 */
export function nextJobRunToFetch(t: Traversal, config: ExtractorConfig, nowMs: number): NextFetch {
  const warnings: string[] = [];
  for (;;) {
    const frame = t.frames[t.frames.length - 1];
    if (!frame) {
      const job = config.config.jobs[t.nextJob];
      if (!job) return { frame: null, warnings };
      t.nextJob++;
      startJobRun(t, config, job, job.endpoint, {}, null, nowMs);
      continue;
    }
    if (frame.pending) {
      const ref = frame.pending.children;
      if (ref && ref.next < ref.count) return { frame: null, children: { parent: frame, ref, firstRunNo: t.nextRunNo }, warnings };
      const step = nextStep(frame.state, frame.pending.result, nowMs);
      warnings.push(...step.warnings);
      frame.state = step.state;
      frame.pending = null;
    }
    if (!frame.state.next) {
      addStopReasons(t, { [frame.jobId]: { [frame.state.stopReason ?? 'no-pagination']: 1 } });
      t.frames.pop();
      continue;
    }
    return { frame, warnings };
  }
}

/**
 * Applies what a call running `batch` did: its finished child runs are counted (run numbers and stop reasons) and
 * skipped in the list; the run it stopped inside becomes the innermost job run (the next call goes on with it).
 * `batch` must be what {@link nextJobRunToFetch} handed out last (its parent still the innermost run).
 */
export function applyChildBatch(t: Traversal, batch: ChildBatch, outcome: ChildBatchOutcome): void {
  const { parent, ref } = batch;
  if (t.frames[t.frames.length - 1] !== parent || batch.firstRunNo !== t.nextRunNo)
    throw new Error('applyChildBatch: the traversal moved since the batch was handed out');
  const open = outcome.open ? 1 : 0;
  if (!(outcome.done >= 0 && ref.next + outcome.done + open <= ref.count))
    throw new Error(`applyChildBatch: ${outcome.done} runs done from ${ref.next} of ${ref.count}`);
  addStopReasons(t, outcome.stopReasons);
  ref.next += outcome.done;
  t.nextRunNo += outcome.done;
  if (outcome.open) {
    const { spec, state, pending } = outcome.open;
    t.frames.push({ runNo: t.nextRunNo++, jobId: spec.jobId, endpoint: spec.endpoint, parentColumns: spec.parentColumns, parent: spec.parent, state, pending });
    ref.next++;
  }
}

/** What the run knows about its history (`workflowInfo()`). */
interface HistoryInfo {
  continueAsNewSuggested: boolean;
  historyLength: number;
}

/**
 * Whether to continue-as-new before the next batch: the server suggests it, the history passed
 * `MAX_HISTORY_EVENTS` events, or this run fetched `afterPages` pages (`null`: no page limit).
 */
export function shouldContinueAsNew(history: HistoryInfo, pagesThisRun: number, afterPages: number | null): boolean {
  return history.continueAsNewSuggested || history.historyLength > MAX_HISTORY_EVENTS || (afterPages !== null && pagesThisRun >= afterPages);
}

/** What a batch reported about rate limiting. */
interface BatchRateLimit {
  /** Pages the batch extracted. */
  pages: number;
  /** The API asked to wait this long (ms) before the next request; absent when it did not. */
  rateLimitedMs?: number;
}

/** What to do after a batch: the new count of consecutive waits, how long to wait (ms, `null`: no wait), or give up. */
interface RateLimitDecision {
  waits: number;
  waitMs: number | null;
  /** More than {@link MAX_RATE_LIMIT_WAITS} waits in a row without a page in between. */
  giveUp: boolean;
}

/**
 * Counts consecutive rate-limit waits (a batch that extracted pages starts the count again) and decides the wait: at
 * least 1 ms, as long as the API asked.
 */
export function rateLimitAfterBatch(waits: number, batch: BatchRateLimit): RateLimitDecision {
  if (batch.rateLimitedMs === undefined) return { waits: batch.pages > 0 ? 0 : waits, waitMs: null, giveUp: false };
  const next = batch.pages > 0 ? 1 : waits + 1;
  return { waits: next, waitMs: Math.max(1, batch.rateLimitedMs), giveUp: next > MAX_RATE_LIMIT_WAITS };
}
