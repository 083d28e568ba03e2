import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';

const EventType = temporal.api.enums.v1.EventType;

describe('durable timers on the real Temporal dev server', () => {
  const stack = testStack();
  let connection: Connection;
  let client: Client;
  beforeAll(async () => {
    connection = await Connection.connect({ address: stack.temporalAddress });
    client = new Client({ connection, namespace: stack.namespace });
  });
  afterAll(() => connection.close());

  async function startWorker(taskQueue: string, identity: string) {
    const workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    const worker = await Worker.create({
      connection: workerConnection,
      namespace: stack.namespace,
      taskQueue,
      identity,
      workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') },
    });
    const running = worker.run();
    return {
      async stop() {
        worker.shutdown();
        await running;
        await workerConnection.close();
      },
    };
  }

  it('completes a workflow whose worker was stopped mid-timer once a new worker starts', async () => {
    const taskQueue = uniqueTaskQueue('timer');
    const first = await startWorker(taskQueue, 'worker-before-restart');
    const handle = await client.workflow.start('durableTimerWorkflow', {
      taskQueue,
      workflowId: `timer-${taskQueue}`,
      args: [{ sleepMs: 4000 }],
    });
    // wait until the timer is in history, then take the only worker away
    for (;;) {
      const history = await handle.fetchHistory();
      if (history.events?.some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await first.stop();
    const second = await startWorker(taskQueue, 'worker-after-restart');
    try {
      const result = await handle.result();
      expect(result).toEqual({ sleptMs: 4000, runId: handle.firstExecutionRunId });
      const events = (await handle.fetchHistory()).events ?? [];
      const types = events.map((e) => e.eventType);
      expect(types).toContain(EventType.EVENT_TYPE_TIMER_FIRED);
      const lastTask = [...events].reverse().find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      expect(lastTask?.workflowTaskCompletedEventAttributes?.identity).toBe('worker-after-restart');
    } finally {
      await second.stop();
    }
  });
});
