/**
 * The plugin as a Nexus service on the real dev server: a caller namespace whose worker has no Storage token imports
 * and exports through an endpoint that targets the plugin's worker (SAPI_NEXUS_SERVICE=true); cancelling the caller
 * cancels the import it started. (A worker without the setting serves no Nexus service: test/unit/nexus.)
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { nexusWorkflowId } from '../../../src/nexus/handler';
import { eventually } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';

jest.setTimeout(240_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('the sapi-temporal Nexus service', () => {
  const stack = testStack();
  const suffix = Date.now().toString(36);
  const callerNamespace = `caller-${suffix}`;
  const endpoint = `sapi-${suffix}`;
  let env: SapiTestEnv;
  let connection: Connection;
  let caller: Client;
  let callerWorker: { stop(): Promise<void> };
  const callerQueue = uniqueTaskQueue('nexus-caller');

  beforeAll(async () => {
    // the handler: the plugin's worker with the service on, jobs slow enough to cancel one mid-way
    env = await startSapiTestEnv('nexus', { env: { SAPI_NEXUS_SERVICE: 'true' }, emulator: { jobDelays: { processingMs: 4000 } } });
    connection = await Connection.connect({ address: stack.temporalAddress });
    await connection.workflowService.registerNamespace({ namespace: callerNamespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    await connection.operatorService.createNexusEndpoint({
      spec: { name: endpoint, target: { worker: { namespace: stack.namespace, taskQueue: env.taskQueue } } },
    });
    caller = new Client({ connection, namespace: callerNamespace });

    // the caller's worker: its own namespace and bundle, no plugin, no Storage settings
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: resolve(__dirname, '../../harness/nexus-caller-workflows.ts'), logger: quiet });
    const workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    let worker: Worker | undefined;
    await eventually(
      async () => {
        worker = await Worker.create({ connection: workerConnection, namespace: callerNamespace, taskQueue: callerQueue, workflowBundle }).catch(
          () => undefined,
        );
        return worker !== undefined;
      },
      60_000,
      'the caller namespace is served',
    );
    const running = worker!.run();
    callerWorker = {
      async stop() {
        worker!.shutdown();
        await running;
        await workerConnection.close();
      },
    };
  });
  afterAll(async () => {
    await callerWorker?.stop();
    await connection?.close();
    await env?.stop();
  });

  function csv(name: string, content: string): string {
    const path = join(env.dataDir, name);
    writeFileSync(path, content);
    return path;
  }

  it('imports a table for a caller in another namespace and hands it the result; the export comes back the same way', async () => {
    const rows = Array.from({ length: 500 }, (_, i) => `${i},name-${i}`);
    const result = await caller.workflow.execute('importThroughNexus', {
      taskQueue: callerQueue,
      workflowId: `nexus-import-${suffix}`,
      args: [
        endpoint,
        {
          source: csv('orders.csv', `id,name\n${rows.join('\n')}\n`),
          bucketId: 'in.c-nexus',
          createBucket: true,
          table: 'orders',
          primaryKey: ['id'],
          polling: { initialMs: 200, maxMs: 1000 },
        },
      ],
    });
    expect(result).toMatchObject({ tableId: 'in.c-nexus.orders' });
    const table = await env.emulator.readTable('in.c-nexus.orders');
    expect(table.columns).toEqual(['id', 'name']);
    expect(table.rows.map((r) => r.join(',')).sort()).toEqual([...rows].sort());

    // the run in the handler's namespace is the plugin's import workflow, linked to the caller's operation
    const handlerRuns = await collect(env.client.workflow.list({ query: `WorkflowType="importTableWorkflow" AND TaskQueue="${env.taskQueue}"` }));
    expect(handlerRuns.map((r) => r.workflowId)).toEqual([expect.stringMatching(/^nexus-importTable-/)]);

    const destination = join(env.dataDir, 'out', 'orders.csv');
    const exported = await caller.workflow.execute('exportThroughNexus', {
      taskQueue: callerQueue,
      workflowId: `nexus-export-${suffix}`,
      args: [endpoint, { tableId: 'in.c-nexus.orders', destination, polling: { initialMs: 200, maxMs: 1000 } }],
    });
    const written = readFileSync(destination);
    expect(exported).toMatchObject({ path: destination, bytes: written.length, sha256: createHash('sha256').update(written).digest('hex') });
    const lines = written.toString('utf8').trim().split('\n');
    expect(lines.slice(1).sort()).toEqual(
      rows
        .map((r) =>
          r
            .split(',')
            .map((v) => `"${v}"`)
            .join(','),
        )
        .sort(),
    );
  });

  it('cancelling the caller cancels the import it started through the service', async () => {
    // the import's job runs until the import was cancelled, however slow the machine (with the 4 s jobs alone it
    // sometimes ended first and the caller completed with its result)
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const handle = await caller.workflow.start('importThroughNexus', {
      taskQueue: callerQueue,
      workflowId: `nexus-cancel-${suffix}`,
      args: [endpoint, { source: csv('slow.csv', 'id\n1\n2\n'), bucketId: 'in.c-nexus', table: 'slow', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    let importId = '';
    await eventually(
      async () => {
        const runs = await collect(
          env.client.workflow.list({ query: `WorkflowType="importTableWorkflow" AND TaskQueue="${env.taskQueue}" AND ExecutionStatus="Running"` }),
        );
        importId = runs[0]?.workflowId ?? '';
        return importId !== '';
      },
      30_000,
      'the import started in the handler namespace',
    );
    expect(importId).toMatch(/^nexus-importTable-/);
    await handle.cancel();
    const failure = await handle.result().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    await eventually(async () => (await env.client.workflow.getHandle(importId).describe()).status.name === 'CANCELLED', 60_000, 'the import is cancelled');
    env.emulator.faults.releaseJobs('tableCreate');
  });

  it('derives the workflow id from the Nexus request id (a retried start attaches to the same run)', () => {
    expect(nexusWorkflowId('importTable', 'req-1')).toBe('nexus-importTable-req-1');
  });
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
