import { WithStartWorkflowOperation, type Client, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { ExtractInput } from '../../src/contracts/extract';

/**
 * Starts an extraction paused: the `pause` update sent with the start (Update-with-Start), so the run stops before its
 * first fetch and every later step of a test meets it where the test says. One accepted update in its history.
 */
export async function startPaused(
  client: Client,
  options: { taskQueue: string; workflowId: string; input: ExtractInput },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const operation = new WithStartWorkflowOperation('extractWorkflow', {
    taskQueue: options.taskQueue,
    workflowId: options.workflowId,
    args: [options.input],
    workflowIdConflictPolicy: 'FAIL',
  });
  await client.workflow.executeUpdateWithStart('pause', { startWorkflowOperation: operation });
  const handle = await operation.workflowHandle();
  const { runId } = await handle.describe();
  return Object.assign(handle, { firstExecutionRunId: runId });
}
