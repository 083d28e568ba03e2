// The handler side of the Nexus service: each operation starts the plugin's workflow on the worker's own task queue
// (the one the endpoint targets), as a workflow-run operation, so the caller waits on the workflow's completion.
import { startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import type { WorkflowInput, WorkflowName, WorkflowResult } from '../contracts/workflows';
import { sapiNexusService } from './index';

/** The workflow id of an operation: derived from the Nexus request id, so a retried start attaches to the same run. */
export function nexusWorkflowId(operation: string, requestId: string): string {
  return `nexus-${operation}-${requestId}`;
}

/** An operation backed by workflow `W`: its input and result are the workflow's (the service contract is checked against them). */
function backedBy<W extends WorkflowName>(operation: string, workflowType: W) {
  return new WorkflowRunOperationHandler<WorkflowInput<W>, WorkflowResult<W>>(async (ctx: nexus.StartOperationContext, input: WorkflowInput<W>) =>
    startWorkflow<(input: WorkflowInput<W>) => Promise<WorkflowResult<W>>>(ctx, workflowType, { workflowId: nexusWorkflowId(operation, ctx.requestId), args: [input] }),
  );
}

/** The service's handler, for a worker's `nexusServices` (the plugin registers it with `nexus: true`). */
export function createSapiNexusHandler() {
  return nexus.serviceHandler(sapiNexusService, {
    importTable: backedBy('importTable', 'importTableWorkflow'),
    exportTable: backedBy('exportTable', 'exportTableWorkflow'),
    extract: backedBy('extract', 'extractWorkflow'),
  });
}
