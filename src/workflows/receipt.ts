// The receipt step of a load: after the load's job ended well, one `writeReceipt` activity upserts the
// load's receipt into the receipts table. Workflow code (sandbox-safe).
import { ActivityFailure, ApplicationFailure, CancellationScope, log, workflowInfo } from '@temporalio/workflow';
import type { SapiActivities } from '../activities';
import { receiptIdOf, type LoadReceipt, type ReceiptOrigin, type ReceiptOutcome, type ReceiptsOption } from '../contracts/receipts';
import type { ImportTableInput, ImportTableResult } from '../contracts/transfer';

/** What the receipt step needs of the import's input. */
export type ReceiptInput = Pick<ImportTableInput, 'connection' | 'source' | 'slices' | 'mode' | 'incremental'> & {
  receipts?: ReceiptsOption;
  receiptOrigin?: ReceiptOrigin;
};

/** The receipt of a load that ended well, from the run's own facts (workflow time: the same on replay). */
export function receiptOf(
  input: ReceiptInput,
  result: Pick<ImportTableResult, 'tableId' | 'importedRowsCount' | 'bytes' | 'fileId' | 'jobId'>,
  startedAt: number,
  endedAt: number,
): LoadReceipt {
  const info = workflowInfo();
  const runId = info.firstExecutionRunId;
  const origin = input.receiptOrigin;
  const base = { workflowId: info.workflowId, runId, tableId: result.tableId, jobId: result.jobId };
  return {
    receiptId: receiptIdOf(base),
    ...base,
    originWorkflowId: origin?.workflowId ?? info.workflowId,
    originRunId: origin?.runId ?? runId,
    buildId: info.currentDeploymentVersion?.buildId ?? '',
    mode: (input.mode ?? 'create') === 'create' ? 'create' : input.incremental ? 'incremental' : 'full',
    rows: result.importedRowsCount,
    bytes: result.bytes,
    fileId: result.fileId,
    source: origin?.source ?? { kind: 'file', location: (input.slices?.length ? input.slices.join(',') : input.source).replace(/[?#].*$/, '') },
    startedAt: new Date(startedAt).toISOString(),
    endedAt: new Date(endedAt).toISOString(),
  };
}

/**
 * Writes the receipt of a load that ended well and says what became of it. `receipts: false` writes none. The write
 * runs to its end even when the run is cancelled meanwhile (the load is done: its receipt belongs to it); it is
 * retried by its own activity through an outage (the run's budget); a write that still fails is reported in the
 * outcome and a warning, never as the run's failure, and never redoes the load. Writing it twice upserts one row.
 */
export async function writeReceiptStep(acts: Pick<SapiActivities, 'writeReceipt'>, input: ReceiptInput, receipt: LoadReceipt): Promise<ReceiptOutcome> {
  if (input.receipts === false) return { receipt, status: 'off' };
  const table = input.receipts?.table;
  try {
    const written = await CancellationScope.nonCancellable(() =>
      acts.writeReceipt({ connection: input.connection, receipt, ...(table !== undefined ? { table } : {}) }),
    );
    return written.status === 'off' ? { receipt, status: 'off' } : { receipt, status: 'written', table: written.table };
  } catch (err) {
    const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
    const error = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
    log.warn(`the receipt of the load into ${receipt.tableId} was not written (the load stands): ${error}`, { receiptId: receipt.receiptId });
    return { receipt, status: 'failed', ...(table !== undefined ? { table } : {}), error };
  }
}
