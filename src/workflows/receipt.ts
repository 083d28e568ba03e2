// The receipt step of a load: after the load's job ended well, one `writeReceipt` activity upserts the
// load's receipt into the receipts table, unless the short path's `uploadAndStartJob` saw the job end within its own
// call and wrote it there (same row, same key). Workflow code (sandbox-safe).
import { ActivityFailure, ApplicationFailure, CancellationScope, log, workflowInfo } from '@temporalio/workflow';
import type { SapiActivities } from '../activities';
import { completeReceipt, type LoadReceipt, type ReceiptDraft, type ReceiptOrigin, type ReceiptOutcome, type ReceiptsOption } from '../contracts/receipts';
import type { ImportTableInput, ImportTableResult } from '../contracts/transfer';

/** What the receipt step needs of the import's input. */
export type ReceiptInput = Pick<ImportTableInput, 'connection' | 'source' | 'slices' | 'mode' | 'incremental'> & {
  receipts?: ReceiptsOption;
  receiptOrigin?: ReceiptOrigin;
};

/** The run's part of a load's receipt, known before its job starts (workflow time: the same on replay). */
export function receiptDraftOf(input: ReceiptInput, fileId: number, startedAt: number): ReceiptDraft {
  const info = workflowInfo();
  const runId = info.firstExecutionRunId;
  const origin = input.receiptOrigin;
  return {
    workflowId: info.workflowId,
    runId,
    originWorkflowId: origin?.workflowId ?? info.workflowId,
    originRunId: origin?.runId ?? runId,
    buildId: info.currentDeploymentVersion?.buildId ?? '',
    mode: (input.mode ?? 'create') === 'create' ? 'create' : input.incremental ? 'incremental' : 'full',
    fileId,
    source: origin?.source ?? { kind: 'file', location: (input.slices?.length ? input.slices.join(',') : input.source).replace(/[?#].*$/, '') },
    startedAt: new Date(startedAt).toISOString(),
  };
}

/** The receipt of a load that ended well, from the run's own facts (workflow time: the same on replay). */
export function receiptOf(
  input: ReceiptInput,
  result: Pick<ImportTableResult, 'tableId' | 'importedRowsCount' | 'bytes' | 'fileId' | 'jobId'>,
  startedAt: number,
  endedAt: number,
): LoadReceipt {
  return completeReceipt(receiptDraftOf(input, result.fileId, startedAt), {
    tableId: result.tableId,
    rows: result.importedRowsCount,
    bytes: result.bytes,
    jobId: result.jobId,
    endedAt: new Date(endedAt).toISOString(),
  });
}

/**
 * Where the receipt goes, for an activity that writes it itself (the short path's `uploadAndStartJob`): none when the
 * run turned receipts off.
 */
export function receiptRequestOf(input: ReceiptInput, fileId: number, startedAt: number): { draft: ReceiptDraft; table?: string } | undefined {
  if (input.receipts === false) return undefined;
  const table = input.receipts?.table;
  return { draft: receiptDraftOf(input, fileId, startedAt), ...(table !== undefined ? { table } : {}) };
}

/**
 * The outcome of a receipt an activity wrote itself, when it stands (`written` or `off`): the step is over with no
 * activity and no await (a small import's usual end).
 */
export function standingReceipt(inActivity: ReceiptOutcome | undefined): ReceiptOutcome | undefined {
  return inActivity?.status === 'written' || inActivity?.status === 'off' ? inActivity : undefined;
}

/**
 * The receipt an activity wrote itself, as the step's outcome: `written` or `off` stand ({@link standingReceipt});
 * anything else (not written there, or its write failed there) is written by {@link writeReceiptStep} with the
 * receipt the activity completed.
 */
export async function receiptStepAfter(
  acts: Pick<SapiActivities, 'writeReceipt'>,
  input: ReceiptInput,
  inActivity: ReceiptOutcome | undefined,
  otherwise: () => LoadReceipt,
): Promise<ReceiptOutcome> {
  return standingReceipt(inActivity) ?? writeReceiptStep(acts, input, inActivity?.receipt ?? otherwise());
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
