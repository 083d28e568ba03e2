import { ApplicationFailure, CancellationScope, defineQuery, defineSignal, isCancellation, setHandler } from '@temporalio/workflow';
import type { ProgressReport, TransferProgress } from '../contracts/transfer';
import { ErrorCode } from '../contracts/error-codes';

/** Query: where an import or export is (phase, bytes, job status). */
export const progressQuery = defineQuery<TransferProgress>('progress');
/** Signal: stop the workflow (a transfer in flight is cancelled; a Storage job already started is not polled further). */
export const cancelSignal = defineSignal<[reason?: string]>('cancel');
/** Signal the transfer activities send (throttled) so `progress` can report bytes while they run. */
export const transferProgressSignal = defineSignal<[ProgressReport]>('transferProgress');

/**
 * Runs the body of an import or export with the handlers both share: the `progress` query over `progress`,
 * transfer reports merged into it, and the `cancel` signal cancelling the body. A cancelled run ends with a
 * non-retryable `SAPI_CANCELLED` failure naming `what`; any failure is recorded in `progress` before it propagates.
 */
export async function runTransfer<T>(what: string, progress: TransferProgress, body: () => Promise<T>): Promise<T> {
  setHandler(progressQuery, () => progress);
  setHandler(transferProgressSignal, (report) => void Object.assign(progress, report));
  let cancelReason: string | undefined;
  const scope = new CancellationScope();
  setHandler(cancelSignal, (reason) => {
    cancelReason = reason ?? 'cancelled by signal';
    scope.cancel();
  });
  try {
    return await scope.run(body);
  } catch (err) {
    if (cancelReason !== undefined && isCancellation(err)) {
      progress.phase = 'cancelled';
      throw ApplicationFailure.nonRetryable(`${what} cancelled: ${cancelReason}`, ErrorCode.CANCELLED, { phase: progress.phase });
    }
    progress.phase = isCancellation(err) ? 'cancelled' : 'failed';
    progress.error = err instanceof Error ? err.message : String(err);
    throw err;
  }
}
