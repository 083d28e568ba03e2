// The handler side of the Nexus service: each operation starts the plugin's workflow on the worker's own task queue
// (the one the endpoint targets), as a workflow-run operation, so the caller waits on the workflow's completion.
import { startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import type { WorkflowName } from '../contracts/workflows';
import { sapiNexusService } from './index';

/** The workflow id of an operation: derived from the Nexus request id, so a retried start attaches to the same run. */
export function nexusWorkflowId(operation: string, requestId: string): string {
  return `nexus-${operation}-${requestId}`;
}

function backedBy<I>(operation: string, workflowType: WorkflowName) {
  return new WorkflowRunOperationHandler(async (ctx: nexus.StartOperationContext, input: I) =>
    startWorkflow(ctx, workflowType, { workflowId: nexusWorkflowId(operation, ctx.requestId), args: [input] }),
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
