// Test-only: a genuine continue-as-new chain into one of the plugin's workflows. `continueInto` waits for the next run (signal
// `next`: its workflow type, task queue and input), then continues as new into it: that run is the second of
// the chain (same workflow id, same first run id, `continuedFromExecutionRunId` set), as a long import's polling run
// is. A test learns the chain's first run id before it sends the input, so it can make objects "of this run" first.
// Never part of a production worker's bundle (a worker that registered it would let anyone continue into any state).
import { condition, defineSignal, makeContinueAsNewFunc, setHandler } from '@temporalio/workflow';

/** What the next run is: its workflow type, task queue and input. */
export interface NextRun {
  workflowType: string;
  taskQueue: string;
  input: unknown;
}

export const nextRunSignal = defineSignal<[NextRun]>('next');

export async function continueInto(): Promise<void> {
  let next: NextRun | undefined;
  setHandler(nextRunSignal, (value) => void (next = value));
  await condition(() => next !== undefined);
  await makeContinueAsNewFunc<(input: unknown) => Promise<unknown>>({ workflowType: next!.workflowType, taskQueue: next!.taskQueue })(next!.input);
}
