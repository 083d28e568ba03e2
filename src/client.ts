// Typed starts of the plugin's workflows for a user's own client code: the input is checked by the compiler, the
// handle's result is typed, the run shows its summary and details in the Temporal UI, and a start under an id that
// is already running attaches to that run instead of failing (or starting a second transfer).
import type { Client, WorkflowHandleWithFirstExecutionRunId, WorkflowStartOptions } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE } from './config';
import { runMetadata } from './contracts/search-attributes';
import type { WorkflowInput, WorkflowName, WorkflowResult } from './contracts/workflows';

/** Start options of the typed helpers: the client's, with `taskQueue` (default `sapi-temporal`) and `workflowId` optional. */
export type SapiStartOptions = Partial<Omit<WorkflowStartOptions, 'args'>>;

/** A workflow handle whose `result()` is the workflow's typed result. */
export type SapiWorkflowHandle<W extends WorkflowName> = WorkflowHandleWithFirstExecutionRunId<(input: WorkflowInput<W>) => Promise<WorkflowResult<W>>>;

/**
 * Starts workflow `W` with a typed input. Without `workflowId`, a new id (`<verb>-<target>-<time><random>`); with
 * one, a run already going under it is attached to (`USE_EXISTING`), so a retried start never doubles a transfer.
 */
export async function startSapiWorkflow<W extends WorkflowName>(client: Client, workflowType: W, input: WorkflowInput<W>, options: SapiStartOptions = {}): Promise<SapiWorkflowHandle<W>> {
  const { workflowId, taskQueue, ...rest } = options;
  const run = { workflowType, input } as Parameters<typeof runMetadata>[0];
  return client.workflow.start<(input: WorkflowInput<W>) => Promise<WorkflowResult<W>>>(workflowType, {
    ...runMetadata(run, 'sapi-temporal client'),
    ...(workflowId !== undefined ? { workflowIdConflictPolicy: 'USE_EXISTING' as const } : {}),
    ...rest,
    taskQueue: taskQueue ?? DEFAULT_TASK_QUEUE,
    workflowId: workflowId ?? generatedId(workflowType, input),
    args: [input],
  });
}

/** Starts `importTableWorkflow`. */
export const startImport = (client: Client, input: WorkflowInput<'importTableWorkflow'>, options?: SapiStartOptions) => startSapiWorkflow(client, 'importTableWorkflow', input, options);
/** Starts `exportTableWorkflow`. */
export const startExport = (client: Client, input: WorkflowInput<'exportTableWorkflow'>, options?: SapiStartOptions) => startSapiWorkflow(client, 'exportTableWorkflow', input, options);
/** Starts `extractWorkflow`. */
export const startExtract = (client: Client, input: WorkflowInput<'extractWorkflow'>, options?: SapiStartOptions) => startSapiWorkflow(client, 'extractWorkflow', input, options);

/** Runs `importTableWorkflow` to its end and resolves with its result (rejects with `WorkflowFailedError`). */
export const executeImport = async (client: Client, input: WorkflowInput<'importTableWorkflow'>, options?: SapiStartOptions) => (await startImport(client, input, options)).result();
/** Runs `exportTableWorkflow` to its end and resolves with its result. */
export const executeExport = async (client: Client, input: WorkflowInput<'exportTableWorkflow'>, options?: SapiStartOptions) => (await startExport(client, input, options)).result();
/** Runs `extractWorkflow` to its end and resolves with its result. */
export const executeExtract = async (client: Client, input: WorkflowInput<'extractWorkflow'>, options?: SapiStartOptions) => (await startExtract(client, input, options)).result();

function generatedId<W extends WorkflowName>(workflowType: W, input: WorkflowInput<W>): string {
  const i = input as Partial<WorkflowInput<'importTableWorkflow'> & WorkflowInput<'exportTableWorkflow'>>;
  const [verb, target] =
    workflowType === 'importTableWorkflow' ? ['import', `${i.bucketId}.${i.table}`] : workflowType === 'exportTableWorkflow' ? ['export', i.tableId] : ['extract', 'config'];
  return `${verb}-${target}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
