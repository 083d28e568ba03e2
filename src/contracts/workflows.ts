/**
 * The workflows this package registers, by name, with their input and result: what a client (the CLI, a user's
 * code, a schedule) needs to start one with a typed input. Types only.
 */
import type { BackfillInput, BackfillResult } from './backfill';
import type { ExtractInput, ExtractResult } from './extract';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from './transfer';

export interface WorkflowContracts {
  importTableWorkflow: { input: ImportTableInput; result: ImportTableResult };
  exportTableWorkflow: { input: ExportTableInput; result: ExportTableResult };
  extractWorkflow: { input: ExtractInput; result: ExtractResult };
  backfillWorkflow: { input: BackfillInput; result: BackfillResult };
}

/** A registered workflow type. */
export type WorkflowName = keyof WorkflowContracts;
/** The input of workflow `W`. */
export type WorkflowInput<W extends WorkflowName> = WorkflowContracts[W]['input'];
/** The result of workflow `W`. */
export type WorkflowResult<W extends WorkflowName> = WorkflowContracts[W]['result'];
