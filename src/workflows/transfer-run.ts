import { ApplicationFailure, CancellationScope, defineQuery, defineUpdate, isCancellation, setHandler } from '@temporalio/workflow';
import type { PollingOptions, TransferProgress } from '../contracts/transfer';
import { DEFAULT_JOB_DEADLINE_MS } from './polling';
import { SapiErrorCode } from '../errors';
import type { RunAttributeValues } from '../contracts/search-attributes';
import { bytesText, detailLine, RunView } from './run-view';
import { budgetSpent } from './options';

/** Query: where an import or export is (phase, bytes, job status). */
export const progressQuery = defineQuery<TransferProgress>('progress');
/**
 * Update: cancel now (a transfer in flight is cancelled; a Storage job already started is not polled further);
 * refused once the run is ending or already cancelling. Answers the progress.
 */
export const transferCancelUpdate = defineUpdate<TransferProgress, [request: { reason?: string }]>('cancel');
/**
 * Update: move the deadline of the Storage job being polled to `until` (ISO time or ms since epoch); refused when no
 * job is polled, or `until` is past or not later than the current deadline. Answers the progress (`deadlineAt`).
 */
export const extendDeadlineUpdate = defineUpdate<TransferProgress, [request: { until: string | number }]>('extendDeadline');
/**
 * Update: answers the progress and changes nothing (never refused). The typed start helpers send it with their start
 * (Update-with-Start, `USE_EXISTING`): a start under the id of a running run attaches to it and learns where it is.
 */
export const transferProgressUpdate = defineUpdate<TransferProgress>('progress');

/** What the body of a transfer shares with its handlers. */
export interface TransferControl {
  /** The job polling options: pass them to `waitForJob` (and on to a continue-as-new); `extendDeadline` changes them. */
  polling: PollingOptions;
  /** Call before polling a job whose wait began at `since` (workflow time): sets the deadline `extendDeadline` moves. */
  pollingFrom(since: number): void;
}

/** Phases in which a run is past cancelling (its job ended, or the run did). */
const ENDING: ReadonlySet<string> = new Set(['metadata', 'done', 'failed', 'cancelled']);

/** Refuses an update: its validator throws, and nothing is written to history. */
export function refuse(why: string): never {
  throw new Error(why);
}

/** Refuses a cancel request whose `reason` is not a string. */
export function checkCancelRequest(request: { reason?: unknown } | undefined): void {
  if (request?.reason !== undefined && typeof request.reason !== 'string') refuse('reason must be a string');
}

/** An ISO time or ms since epoch as ms since epoch (NaN when it is neither). */
function timeOf(until: unknown): number {
  return typeof until === 'number' ? until : typeof until === 'string' ? Date.parse(until) : Number.NaN;
}

/** Refuses `until` unless it is a valid time later than now and than `current`. */
function checkLaterDeadline(until: unknown, current: number): void {
  const at = timeOf(until);
  if (!Number.isFinite(at)) refuse(`until must be an ISO time or ms since epoch, got ${JSON.stringify(until)}`);
  if (at <= Date.now()) refuse(`until ${new Date(at).toISOString()} is in the past`);
  if (at <= current) refuse(`until ${new Date(at).toISOString()} is not later than the current deadline ${new Date(current).toISOString()}`);
}

/**
 * Runs the body of an import or export with the handlers both share: the `progress` query and update over
 * `progress`, the `cancel` update cancelling the body and `extendDeadline`. A run cancelled by the update ends with a
 * non-retryable `SAPI_CANCELLED` failure naming `what`; any failure is recorded in `progress` before it propagates.
 * The body gets the run's {@link RunView} (search attributes `attributes` from the start, the phase as it goes, and
 * `totals` of the result at the end; current details from `progress`).
 */
export async function runTransfer<T>(
  what: string,
  progress: TransferProgress,
  body: (view: RunView, control: TransferControl) => Promise<T>,
  {
    attributes = {},
    totals = () => ({}),
    polling = {},
  }: {
    attributes?: RunAttributeValues;
    totals?: (result: T) => RunAttributeValues;
    polling?: PollingOptions;
  } = {},
): Promise<T> {
  let view: RunView | undefined;
  // a cancellation request (`sapi-temporal cancel`, `temporal workflow cancel`, the UI) cancels the body as well and
  // ends the run cancelled; the progress says so meanwhile (read when answered: no promise of its own per run)
  const root = CancellationScope.current();
  /** The progress as answered: with the call waiting an outage out, while one does. */
  const answer = (): TransferProgress => {
    // computed, not stored: a query handler changes no state
    const cancelling = progress.cancelling ?? (root.consideredCancelled ? 'cancellation requested' : undefined);
    const waitingFor = view?.waitingFor();
    return { ...progress, ...(cancelling !== undefined ? { cancelling } : {}), ...(waitingFor ? { waitingFor } : {}) };
  };
  setHandler(progressQuery, answer);
  setHandler(transferProgressUpdate, answer);
  const control: TransferControl = {
    polling: { ...polling },
    pollingFrom: (since) => void (progress.deadlineAt = since + (control.polling.deadlineMs ?? DEFAULT_JOB_DEADLINE_MS)),
  };
  let cancelReason: string | undefined;
  const scope = new CancellationScope();
  const cancel = (reason: string) => {
    cancelReason = reason;
    progress.cancelling = reason;
    scope.cancel();
  };
  // the same as validated updates: a refused one writes no history, an accepted one answers the new state
  setHandler(
    transferCancelUpdate,
    (request) => {
      cancel(request?.reason ?? 'cancelled by update');
      return answer();
    },
    {
      validator: (request) => {
        checkCancelRequest(request);
        if (cancelReason !== undefined) refuse(`already being cancelled (${cancelReason})`);
        if (ENDING.has(progress.phase)) refuse(`too late to cancel: the run is ${progress.phase === 'metadata' ? 'past its Storage job' : progress.phase}`);
      },
    },
  );
  setHandler(
    extendDeadlineUpdate,
    (request) => {
      const at = timeOf(request.until);
      control.polling.deadlineMs = (control.polling.deadlineMs ?? DEFAULT_JOB_DEADLINE_MS) + (at - progress.deadlineAt!);
      progress.deadlineAt = at;
      return answer();
    },
    {
      validator: (request) => {
        if (progress.deadlineAt === undefined || ENDING.has(progress.phase)) refuse('no Storage job is being polled');
        checkLaterDeadline(request?.until, progress.deadlineAt);
      },
    },
  );
  try {
    const result = await scope.run(async () => {
      view = await RunView.open(attributes, { phase: () => progress.phase, details: () => transferDetails(what, progress, view) });
      return body(view, control);
    });
    // the end totals and the last phase in one upsert
    view?.set({ ...totals(result), SapiPhase: progress.phase });
    view?.refresh();
    return result;
  } catch (err) {
    if (cancelReason !== undefined && isCancellation(err)) {
      progress.phase = 'cancelled';
      view?.refresh();
      throw ApplicationFailure.nonRetryable(`${what} cancelled: ${cancelReason}`, SapiErrorCode.CANCELLED, { phase: progress.phase });
    }
    progress.phase = isCancellation(err) ? 'cancelled' : 'failed';
    const failure = budgetSpent(err);
    progress.error = failure instanceof Error ? failure.message : String(failure);
    view?.refresh();
    throw failure;
  }
}

/** Current details of an import or export: phase and bytes, then the file and the Storage job, then the error. */
function transferDetails(what: string, p: TransferProgress, view: RunView | undefined): string {
  const polls = view?.callCount('getJob') ?? 0;
  return [
    `${what}`,
    detailLine({ phase: p.phase, bytes: bytesText(p.bytes, p.totalBytes), slices: p.slices !== undefined ? `${p.slicesDone ?? 0}/${p.slices}` : undefined }),
    detailLine({ file: p.fileId, job: p.jobId !== undefined ? `${p.jobId} ${p.jobStatus ?? ''}`.trim() : undefined, polls: polls || undefined }),
    p.error ? `**error** ${p.error}` : '',
  ]
    .filter(Boolean)
    .join('  \n');
}
