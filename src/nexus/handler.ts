// The handler side of the Nexus service: each operation starts the plugin's workflow on the worker's own task queue
// (the one the endpoint targets), as a workflow-run operation, so the caller waits on the workflow's completion.
import { startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import { SapiInputForbiddenError, toApplicationFailure } from '../errors';
import { INTERNAL_INPUT_FIELDS } from '../contracts/run-state';
import type { WorkflowInput, WorkflowName, WorkflowResult } from '../contracts/workflows';
import { sapiNexusService } from './index';

/** The workflow id of an operation: derived from the Nexus request id, so a retried start attaches to the same run. */
export function nexusWorkflowId(operation: string, requestId: string): string {
  return `nexus-${operation}-${requestId}`;
}

/**
 * Refuses an operation input that carries internal run state (`INTERNAL_INPUT_FIELDS`: `resume`, `sourceGrant`): a
 * `BAD_REQUEST` whose cause is a `SAPI_INPUT_FORBIDDEN` failure naming the field, before any workflow starts. The input
 * is never forwarded with such a field (a forged `resume` would name another run's staging, file, table or bucket).
 */
export function refuseInternalState(operation: string, input: unknown): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return; // the workflow validates its input
  for (const field of INTERNAL_INPUT_FIELDS) {
    if (Object.prototype.hasOwnProperty.call(input, field)) {
      const failure = toApplicationFailure(
        new SapiInputForbiddenError(
          field,
          `internal run state, set only by the plugin's own workflows; a caller of the ${operation} operation may not send it`,
        ),
      );
      throw new nexus.HandlerError('BAD_REQUEST', failure.message, { cause: failure, retryableOverride: false });
    }
  }
}

/** An operation backed by workflow `W`: its input and result are the workflow's (the service contract is checked against them). */
function backedBy<W extends WorkflowName>(operation: string, workflowType: W) {
  return new WorkflowRunOperationHandler<WorkflowInput<W>, WorkflowResult<W>>(async (ctx: nexus.StartOperationContext, input: WorkflowInput<W>) => {
    refuseInternalState(operation, input);
    return startWorkflow<(input: WorkflowInput<W>) => Promise<WorkflowResult<W>>>(ctx, workflowType, {
      workflowId: nexusWorkflowId(operation, ctx.requestId),
      args: [input],
    });
  });
}

/** The service's handler, for a worker's `nexusServices` (the plugin registers it with `nexus: true`). */
export function createSapiNexusHandler() {
  return nexus.serviceHandler(sapiNexusService, {
    importTable: backedBy('importTable', 'importTableWorkflow'),
    exportTable: backedBy('exportTable', 'exportTableWorkflow'),
    extract: backedBy('extract', 'extractWorkflow'),
  });
}
