import { ApplicationFailure, CancellationScope, defineQuery, defineSignal, isCancellation, setHandler } from '@temporalio/workflow';
import type { ProgressReport, TransferProgress } from '../contracts/transfer';
import { ErrorCode } from '../contracts/error-codes';
import type { RunAttributeValues } from '../contracts/search-attributes';
import { bytesText, detailLine, RunView } from './run-view';

/** Query: where an import or export is (phase, bytes, job status). */
export const progressQuery = defineQuery<TransferProgress>('progress');
/** Signal: stop the workflow (a transfer in flight is cancelled; a Storage job already started is not polled further). */
export const cancelSignal = defineSignal<[reason?: string]>('cancel');
/**
 * Signal the transfer activities of earlier versions sent (throttled) so `progress` could report bytes while they ran;
 * still accepted. Activities now heartbeat their bytes instead (no history event per report; see `src/cli/live-progress.ts`).
 */
export const transferProgressSignal = defineSignal<[ProgressReport]>('transferProgress');

/**
 * Runs the body of an import or export with the handlers both share: the `progress` query over `progress`,
 * transfer reports merged into it, and the `cancel` signal cancelling the body. A cancelled run ends with a
 * non-retryable `SAPI_CANCELLED` failure naming `what`; any failure is recorded in `progress` before it propagates.
 * The body gets the run's {@link RunView} (search attributes `attributes` from the start, the phase as it goes, and
 * `totals` of the result at the end; current details from `progress`).
 */
export async function runTransfer<T>(
  what: string,
  progress: TransferProgress,
  body: (view: RunView) => Promise<T>,
  attributes: RunAttributeValues = {},
  totals: (result: T) => RunAttributeValues = () => ({}),
): Promise<T> {
  setHandler(progressQuery, () => progress);
  let view: RunView | undefined;
  setHandler(transferProgressSignal, (report) => {
    Object.assign(progress, report);
    view?.refresh();
  });
  let cancelReason: string | undefined;
  const scope = new CancellationScope();
  setHandler(cancelSignal, (reason) => {
    cancelReason = reason ?? 'cancelled by signal';
    scope.cancel();
  });
  try {
    const result = await scope.run(async () => {
      view = await RunView.open(attributes, { phase: () => progress.phase, details: () => transferDetails(what, progress, view) });
      return body(view);
    });
    view?.set(totals(result));
    view?.refresh();
    return result;
  } catch (err) {
    if (cancelReason !== undefined && isCancellation(err)) {
      progress.phase = 'cancelled';
      view?.refresh();
      throw ApplicationFailure.nonRetryable(`${what} cancelled: ${cancelReason}`, ErrorCode.CANCELLED, { phase: progress.phase });
    }
    progress.phase = isCancellation(err) ? 'cancelled' : 'failed';
    progress.error = err instanceof Error ? err.message : String(err);
    view?.refresh();
    throw err;
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
