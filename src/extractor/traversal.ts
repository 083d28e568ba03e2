/**
 * The traversal of an extraction's job tree as the durable run (`extractWorkflow`) drives it, one batch at a time:
 * which job run fetches next (top-level jobs in order, each fresh; a page's child runs, each fully paginated, before
 * the parent's next page, as the reference does), the scroller stepped once a page's children are done, finished
 * runs counted by stop reason; and the stop decisions that need no I/O (continue-as-new, rate-limit give-up).
 *
 * Workflow-safe: no I/O, no clock (callers pass `nowMs`: workflow time), no randomness. The traversal works in place
 * on the workflow's checkpoint (job-run stack, next job, run numbers, stop reasons), which is what carries over a
 * continue-as-new. Not in `./pure` (it uses the contract's `findJob`, and `src/contracts` imports `./pure`).
 */
import type { ExtractCheckpoint, JobFrame } from '../contracts/extract';
import { findJob, MAX_HISTORY_EVENTS } from '../contracts/extract-plan';
import type { ParentContext } from './children';
import { functionScopeOf } from './functions';
import { createScrollerState, nextStep } from './scroller';
import type { ExtractorConfig, JobConfig } from './types';

/** Consecutive rate-limit waits without a page in between before the extraction gives up. */
export const MAX_RATE_LIMIT_WAITS = 50;

/** The part of the checkpoint the traversal reads and moves. */
export type Traversal = Pick<ExtractCheckpoint, 'nextJob' | 'nextRunNo' | 'frames' | 'stopReasons'>;

/** What {@link nextJobRunToFetch} decided: the job run whose `state.next` is sent next (`null`: every job is done). */
export interface NextFetch {
  frame: JobFrame | null;
  /** Warnings of the scroller steps taken on the way (in order). */
  warnings: string[];
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

/**
 * Moves the traversal to the next request to send: starts the next top-level job when no run is open, starts the
 * next child run of a page waiting for its children, steps the scroller (`nextStep`) of a page whose children are
 * done, pops runs that are finished (counting their stop reason per config job). Returns the run to fetch, or
 * `frame: null` when every job is done.
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
      const child = frame.pending.children.shift();
      if (child) {
        startJobRun(t, config, findJob(config, child.jobId), child.endpoint, child.parentColumns, child.parent, nowMs);
        continue;
      }
      const step = nextStep(frame.state, frame.pending.result, nowMs);
      warnings.push(...step.warnings);
      frame.state = step.state;
      frame.pending = null;
    }
    if (!frame.state.next) {
      const reasons = (t.stopReasons[frame.jobId] ??= {});
      const reason = frame.state.stopReason ?? 'no-pagination';
      reasons[reason] = (reasons[reason] ?? 0) + 1;
      t.frames.pop();
      continue;
    }
    return { frame, warnings };
  }
}

/** What the run knows about its history (`workflowInfo()`). */
export interface HistoryInfo {
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
export interface BatchRateLimit {
  /** Pages the batch extracted. */
  pages: number;
  /** The API asked to wait this long (ms) before the next request; absent when it did not. */
  rateLimitedMs?: number;
}

/** What to do after a batch: the new count of consecutive waits, how long to wait (ms, `null`: no wait), or give up. */
export interface RateLimitDecision {
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
