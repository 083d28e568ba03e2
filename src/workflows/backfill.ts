import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  executeChild,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, type Priority } from '@temporalio/common';
import type { SapiActivities } from '../activities';
import {
  BACKFILL_PRIORITY,
  type BackfillCheckpoint,
  type BackfillInput,
  type BackfillPhase,
  type BackfillProgress,
  type BackfillResult,
  type BackfillWindow,
  type BackfillWindowState,
} from '../contracts/backfill';
import { backfillWindows, boundSeconds, parallelOf, windowExtractInput, windowImportInput, windowWorkflowId } from '../contracts/backfill-plan';
import { SapiErrorCode } from '../errors';
import { defaultFairnessKey } from '../contracts/priority';
import { backfillAttributes } from '../contracts/search-attributes';
import { nextRunState } from '../extractor/run-state';
import { ownContinuation } from './continued';
import { extractWorkflow } from './extract';
import { importTableWorkflow } from './import-table';
import { activityOptions, budgetSpent, outageBudget } from './options';
import { detailLine, RunView } from './run-view';
import { checkCancelRequest, refuse } from './transfer-run';

export type * from '../contracts/backfill';

/** Query: the backfill's phase, counts and every window's state. */
export const backfillProgressQuery = defineQuery<BackfillProgress>('progress');
/** Update: start no further window (the windows going run to their end); refused when paused or ending. Answers the progress. */
export const backfillPauseUpdate = defineUpdate<BackfillProgress>('pause');
/** Update: start windows again after a pause; refused when not paused. Answers the progress. */
export const backfillResumeUpdate = defineUpdate<BackfillProgress>('resume');
/**
 * Update: start no further window; the windows going run to their end (a window is loaded whole or not at all), the
 * rest end `cancelled` and the result says `cancelled: true`. Refused when already cancelling or ended.
 */
export const backfillCancelUpdate = defineUpdate<BackfillProgress, [request: { reason?: string }]>('cancel');
/** Update: answers the progress and changes nothing (what a typed start that attaches to a running backfill learns). */
export const backfillProgressUpdate = defineUpdate<BackfillProgress>('progress');

/** Window states as the checkpoint keeps them, one character each (running windows are never carried). */
const CODE: Record<Exclude<BackfillWindowState, 'running'>, string> = { pending: '.', done: 'd', failed: 'f', cancelled: 'c' };
const STATE_OF: Record<string, BackfillWindowState> = { '.': 'pending', d: 'done', f: 'failed', c: 'cancelled' };

function freshCheckpoint(windows: number): BackfillCheckpoint {
  return { v: 1, states: '.'.repeat(windows), outcomes: {}, paused: false, runs: 1 };
}

function setState(cp: BackfillCheckpoint, index: number, state: Exclude<BackfillWindowState, 'running'>): void {
  cp.states = `${cp.states.slice(0, index)}${CODE[state]}${cp.states.slice(index + 1)}`;
}

/** A carried checkpoint that does not fit this input's windows is refused (a continued run carries its own). */
function checkedResume(resume: BackfillCheckpoint | undefined, windows: number): BackfillCheckpoint | undefined {
  if (resume === undefined) return undefined;
  if (typeof resume.states !== 'string' || resume.states.length !== windows || /[^.dfc]/.test(resume.states)) {
    throw ApplicationFailure.create({
      type: SapiErrorCode.INPUT_FORBIDDEN,
      message: 'backfillWorkflow: input field resume does not fit the windows of this input',
      nonRetryable: true,
      details: [{ field: 'resume' }],
    });
  }
  return resume;
}

/** The priority of the window runs: the backfill's own key, else {@link BACKFILL_PRIORITY}; its fairness key, else the live runs' default. */
function windowPriority(input: BackfillInput): Priority {
  const own = workflowInfo().priority;
  const fairnessKey = own?.fairnessKey
    ? own.fairnessKey
    : input.kind === 'extract'
      ? defaultFairnessKey({ operation: 'extract', input: input.extract })
      : defaultFairnessKey({ operation: 'import', connection: input.import.connection });
  return {
    priorityKey: own?.priorityKey ? own.priorityKey : BACKFILL_PRIORITY,
    ...(fairnessKey !== undefined ? { fairnessKey } : {}),
    ...(own?.fairnessWeight ? { fairnessWeight: own.fairnessWeight } : {}),
  };
}

/** Rows a window's child loaded (all its tables). */
function rowsOf(result: { tables?: Array<{ rows: number; tableId: string | null }>; importedRowsCount?: number }): number {
  if (result.importedRowsCount !== undefined) return result.importedRowsCount;
  return (result.tables ?? []).reduce((sum, table) => sum + (table.tableId !== null ? table.rows : 0), 0);
}

/**
 * The message of a child's failure: the cause a user can act on, with its code — through the child's failure and the
 * activity failure inside it to the error the activity raised (`SAPI_INPUT_FORBIDDEN: source …`), not "Activity task
 * failed".
 */
function failureMessage(err: unknown): string {
  let cause: unknown = err;
  while ((cause instanceof ChildWorkflowFailure || cause instanceof ActivityFailure) && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure && cause.type) return `${cause.type}: ${cause.message}`;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * Runs an extraction over a date range, or imports over a list of sources, as a sliding window of child runs.
 *
 * 1. The windows are derived from the input (`from`..`to` in steps of `window`, or one per source); each runs as a
 *    child (`extractWorkflow` / `importTableWorkflow`) under a deterministic id `<backfill id>-w0001`, with its own
 *    checkpoints, the priority key {@link BACKFILL_PRIORITY} (unless the backfill has one) and the fairness key the
 *    live runs use, so the API's and Storage's limits hold for both.
 * 2. At most `parallel` children run at once; the next window starts when one ends (an extraction's first window runs
 *    alone: it creates the tables the others load into). A child id whose run completed
 *    before (a rerun of the backfill under the same id) is not started again: the window counts as done.
 * 3. An extraction's window gets its bounds in `parameters.config.backfill` and neither reads nor writes the live run
 *    state; with `advanceState`, once every window is done, the state is stored once (`previousStart` = `to`).
 * 4. `pause`/`resume`/`cancel` updates (and a cancellation request, as `cancel`) stop or restart the starting of
 *    windows; running windows always run to their end. History stays bounded: the run drains its windows and
 *    continues as new with one character per window when the server suggests it.
 * 5. A failed window stops the starting of others; the backfill fails once those going have ended, naming the
 *    failed windows. Run it again under the same id: the done windows are not redone.
 */
export async function backfillWorkflow(input: BackfillInput & { resume?: BackfillCheckpoint }): Promise<BackfillResult> {
  const info = workflowInfo();
  const { windows, problems } = backfillWindows(input);
  const resumed = checkedResume(ownContinuation(input.resume, 'backfillWorkflow'), windows.length);
  const cp: BackfillCheckpoint = resumed ?? freshCheckpoint(windows.length);
  const parallel = parallelOf(input);
  const running = new Set<number>();
  let phase: BackfillPhase = cp.paused ? 'paused' : 'running';
  let cancelReason: string | undefined;
  let cancelRequested = false;
  let error: string | undefined;
  /** Bumped on every event the loop waits for (a window ended, an update): the loop's condition. */
  let events = 0;
  let endedThisRun = 0;

  CancellationScope.current().cancelRequested.catch(() => {
    cancelRequested = true;
    cancelReason ??= 'cancellation requested';
    events++;
  });

  const stateOf = (index: number): BackfillWindowState => (running.has(index) ? 'running' : (STATE_OF[cp.states[index] ?? '.'] ?? 'pending'));
  const progress = (): BackfillProgress => {
    const counts: Record<BackfillWindowState, number> = { pending: 0, running: 0, done: 0, failed: 0, cancelled: 0 };
    let rows = 0;
    const perWindow = windows.map((w) => {
      const state = stateOf(w.index);
      counts[state]++;
      const outcome = cp.outcomes[w.index] ?? {};
      rows += outcome.rows ?? 0;
      return { ...w, state, workflowId: windowWorkflowId(info.workflowId, w), ...outcome };
    });
    return {
      phase,
      windows: windows.length,
      counts,
      rows,
      perWindow,
      runs: cp.runs,
      bytes: 0,
      ...(cp.paused ? { paused: true } : {}),
      ...(cancelReason !== undefined ? { cancelling: cancelReason } : {}),
      ...(error !== undefined ? { error } : {}),
    };
  };
  const active = (what: string) => {
    if (cancelReason !== undefined) refuse(`cannot ${what}: the backfill is being cancelled (${cancelReason})`);
    if (phase !== 'running' && phase !== 'paused') refuse(`cannot ${what}: the backfill is ${phase}`);
  };
  setHandler(backfillProgressQuery, progress);
  setHandler(backfillProgressUpdate, progress);
  setHandler(
    backfillPauseUpdate,
    () => {
      cp.paused = true;
      events++;
      return progress();
    },
    { validator: () => (active('pause'), cp.paused && refuse('the backfill is already paused')) },
  );
  setHandler(
    backfillResumeUpdate,
    () => {
      cp.paused = false;
      events++;
      return progress();
    },
    { validator: () => (active('resume'), !cp.paused && refuse('the backfill is not paused')) },
  );
  setHandler(
    backfillCancelUpdate,
    (request) => {
      cancelReason = request?.reason ?? 'cancelled by update';
      events++;
      return progress();
    },
    { validator: (request) => (checkCancelRequest(request), active('cancel')) },
  );

  let view: RunView | undefined;
  const run = async (): Promise<BackfillResult> => {
    view = await RunView.open(backfillAttributes(input), { phase: () => phase, details: () => backfillDetails(progress()) });
    try {
      if (problems.length > 0) throw ApplicationFailure.nonRetryable(`invalid backfill input: ${problems.join('; ')}`, SapiErrorCode.INVALID_INPUT);
      const priority = windowPriority(input);

      const startWindow = (w: BackfillWindow) => {
        running.add(w.index);
        const workflowId = windowWorkflowId(info.workflowId, w);
        // a child whose run completed before (a rerun of this backfill) is not started again; a failed one is
        const common = {
          workflowId,
          priority,
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' as const,
          staticSummary: `backfill ${info.workflowId} window ${w.label}`,
        };
        const child: Promise<{ tables?: Array<{ rows: number; tableId: string | null }>; importedRowsCount?: number }> =
          input.kind === 'extract'
            ? executeChild(extractWorkflow, { ...common, args: [windowExtractInput(input.extract, w)] })
            : executeChild(importTableWorkflow, { ...common, args: [windowImportInput(input.import, w)] });
        void child
          .then(
            (result) => {
              setState(cp, w.index, 'done');
              cp.outcomes[w.index] = { rows: rowsOf(result) };
            },
            (err: unknown) => {
              if (err instanceof WorkflowExecutionAlreadyStartedError) {
                log.info(`backfill: window ${w.label}: ${workflowId} ran before (completed or still running): not started again`);
                setState(cp, w.index, 'done');
                cp.outcomes[w.index] = { alreadyDone: true };
                return;
              }
              setState(cp, w.index, 'failed');
              cp.outcomes[w.index] = { error: failureMessage(err) };
              log.warn(`backfill: window ${w.label} failed: ${failureMessage(err)}`);
            },
          )
          .finally(() => {
            running.delete(w.index);
            endedThisRun++;
            events++;
            view?.refresh();
          });
      };

      const nextPending = () => windows.find((w) => !running.has(w.index) && cp.states[w.index] === '.');
      const failedAny = () => cp.states.includes('f');
      const continueNow = () =>
        workflowInfo().continueAsNewSuggested || (input.continueAsNewAfterWindows !== undefined && endedThisRun >= input.continueAsNewAfterWindows);

      for (;;) {
        const stopping = cancelReason !== undefined || failedAny();
        const draining = !stopping && continueNow();
        if (!stopping && !draining && !cp.paused) {
          // an extraction's first window runs alone: it creates the tables the others load into (no two creating one)
          const limit = input.kind === 'extract' && !cp.states.includes('d') ? 1 : parallel;
          for (let w = nextPending(); w !== undefined && running.size < limit; w = nextPending()) startWindow(w);
        }
        if (running.size === 0) {
          if (stopping || nextPending() === undefined) break;
          if (draining) {
            await condition(allHandlersFinished);
            await continueAsNew<typeof backfillWorkflow>({ ...input, resume: { ...cp, runs: cp.runs + 1 } });
          }
        }
        phase = running.size === 0 && cp.paused && !stopping ? 'paused' : draining && running.size > 0 ? 'draining' : 'running';
        view.refresh();
        const seen = events;
        await condition(() => events !== seen);
      }

      const cancelled = cancelReason !== undefined && !failedAny();
      if (cancelled) {
        for (const w of windows) if (cp.states[w.index] === '.') setState(cp, w.index, 'cancelled');
      }
      if (failedAny()) {
        const failed = windows.filter((w) => cp.states[w.index] === 'f');
        const list = failed.map((w) => `${w.label} (${w.source ?? `${w.from}..${w.to}`}): ${cp.outcomes[w.index]?.error ?? 'failed'}`).join('; ');
        throw ApplicationFailure.create({
          type: SapiErrorCode.BACKFILL_WINDOW_FAILED,
          message: `backfill stopped: ${failed.length} window(s) failed: ${list}. The done windows are kept; run the backfill again under the same id to run the others (done windows are not redone)`,
          nonRetryable: true,
          details: failed.map((w) => ({ window: w.label, workflowId: windowWorkflowId(info.workflowId, w), error: cp.outcomes[w.index]?.error })),
        });
      }

      let state: BackfillResult['state'];
      if (!cancelled && input.kind === 'extract' && input.advanceState && input.extract.stateKey !== undefined) {
        phase = 'advancing';
        view.refresh();
        state = await advanceLiveState(input.extract.stateKey, input.to, input.extract.options?.activityTaskQueue, input.extract.options?.outageBudgetMs);
      }
      phase = cancelled ? 'cancelled' : 'done';
      const final = progress();
      view.set({ SapiRows: final.rows });
      view.refresh();
      return {
        workflowId: info.workflowId,
        kind: input.kind,
        windows: windows.length,
        done: final.counts.done,
        alreadyDone: Object.values(cp.outcomes).filter((o) => o.alreadyDone).length,
        rows: final.rows,
        cancelled,
        runs: cp.runs,
        perWindow: final.perWindow,
        ...(state ? { state } : {}),
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
  if (cancelRequested)
    throw new CancelledFailure(`backfill cancelled (${cancelReason ?? 'cancellation requested'}): ${result.done} of ${result.windows} windows done`);
  return result;
}

/**
 * Stores the live run state of `stateKey` once, with `previousStart` = the backfill's end (`to`), every other key
 * kept; a stored state already at or past it is left alone (a backfill never moves the live state back).
 */
async function advanceLiveState(
  stateKey: string,
  to: string,
  taskQueue: string | undefined,
  budgetMs: number | undefined,
): Promise<NonNullable<BackfillResult['state']>> {
  const acts = proxyActivities<SapiActivities>({ ...activityOptions(outageBudget(budgetMs)), taskQueue });
  const target = boundSeconds(to);
  const { state: stored } = await acts.readRunState({ stateKey });
  const current = stored?.time.previousStart ?? 0;
  if (current >= target) {
    return {
      stateKey,
      advanced: false,
      previousStart: current,
      reason: `the live state is already at previousStart ${current}, not before ${to}: left as it is`,
    };
  }
  // a failure here (after the outage budget) fails the backfill; a rerun under the same id redoes no window, only this
  await acts.writeRunState({ stateKey, state: nextRunState(stored, { previousStart: current, currentStart: target }) });
  return { stateKey, advanced: true, previousStart: target };
}

/** Current details of a backfill: phase and counts. */
function backfillDetails(p: BackfillProgress): string {
  return [
    detailLine({
      phase: p.phase,
      windows: p.windows,
      done: p.counts.done,
      running: p.counts.running,
      pending: p.counts.pending,
      failed: p.counts.failed || undefined,
      rows: p.rows,
    }),
    p.error ? `**error** ${p.error}` : '',
  ]
    .filter(Boolean)
    .join('  \n');
}
