/**
 * A genuine second run of a continue-as-new chain (see `continue-into-workflows.ts`): `begin` starts the chain's first
 * run on a queue of its own and hands back the chain's first run id; `continueWith` makes the chain continue as new
 * into the plugin's workflow on the env's queue with that input, and returns the chain's handle (its result follows
 * the chain).
 */
import { resolve } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { eventually } from './processes';
import type { SapiTestEnv } from './sapi-env';
import { testStack, uniqueTaskQueue } from './stack-state';

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export interface ContinuedRuns {
  /** Starts a chain (workflow id `workflowId`); resolves with its first run id. */
  begin(workflowId: string): Promise<string>;
  /** Continues the chain begun as `workflowId` into `workflowType` (on the env's queue) with `input`. */
  continueWith(workflowId: string, workflowType: string, input: unknown): Promise<WorkflowHandle>;
  stop(): Promise<void>;
}

export async function continuedRuns(env: SapiTestEnv): Promise<ContinuedRuns> {
  const stack = testStack();
  const taskQueue = uniqueTaskQueue('continue-into');
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: resolve(__dirname, 'continue-into-workflows.ts'), logger: quiet });
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  let worker: Worker | undefined;
  await eventually(
    async () => {
      worker = await Worker.create({ connection, namespace: stack.namespace, taskQueue, workflowBundle }).catch(() => undefined);
      return worker !== undefined;
    },
    60_000,
    'the continue-into worker starts',
  );
  const running = worker!.run();
  return {
    async begin(workflowId) {
      const handle = await env.client.workflow.start('continueInto', { taskQueue, workflowId });
      return handle.firstExecutionRunId;
    },
    async continueWith(workflowId, workflowType, input) {
      const handle = env.client.workflow.getHandle(workflowId);
      await handle.signal('next', { workflowType, taskQueue: env.taskQueue, input });
      return handle;
    },
    async stop() {
      worker!.shutdown();
      await running;
      await connection.close();
    },
  };
}
