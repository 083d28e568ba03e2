// The plugin's workflows. A TypeScript worker bundles exactly one workflow module: re-export this one from yours
// (`export * from 'sapi-temporal/workflows'`) or point `workflowsPath` at `require.resolve('sapi-temporal/workflows')`.
// Named re-exports only (no `export *` of workflow files), so the bundle holds exactly these.
export { importTableWorkflow } from './import-table';
export { progressQuery, transferCancelUpdate, extendDeadlineUpdate, transferProgressUpdate, type TransferControl } from './transfer-run';
export { exportTableWorkflow } from './export-table';
export type * from '../contracts/transfer';
export type { LoadReceipt, ReceiptOutcome, ReceiptOrigin, ReceiptSource, ReceiptsOption } from '../contracts/receipts';
export {
  extractWorkflow,
  extractProgressQuery,
  pauseUpdate,
  resumeUpdate,
  extractCancelUpdate,
  setLimitsUpdate,
  extractProgressUpdate,
  type ExtractLimits,
  type ExtractInput,
  type ExtractOptions,
  type ExtractResult,
  type ExtractProgress,
  type ExtractTableResult,
} from './extract';
export {
  backfillWorkflow,
  backfillProgressQuery,
  backfillPauseUpdate,
  backfillResumeUpdate,
  backfillCancelUpdate,
  backfillProgressUpdate,
  type BackfillInput,
  type BackfillExtractInput,
  type BackfillImportInput,
  type BackfillResult,
  type BackfillProgress,
  type BackfillWindow,
} from './backfill';
