import { sleep, workflowInfo } from '@temporalio/workflow';

/** Sleeps on a durable timer, then reports which attempt/run finished it. */
export async function durableTimerWorkflow(input: { sleepMs: number }): Promise<{ sleptMs: number; runId: string }> {
  await sleep(input.sleepMs);
  return { sleptMs: input.sleepMs, runId: workflowInfo().runId };
}
