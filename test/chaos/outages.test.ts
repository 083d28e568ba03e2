import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { createEmulator, type EmulatorHandle } from '../../src/emulator';
import { startTemporal } from '../../src/dev/temporal';
import { restartTemporal } from '../harness/temporal-restart';
import { loadSettings } from '../../src/config';
import { startWorker } from '../../src/worker';
import type { ImportTableResult, TransferProgress } from '../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../harness/stack-state';
import { eventually } from '../harness/processes';

const rowsCsv = (n: number) => `id,v\n${Array.from({ length: n }, (_, i) => `${i},v${i}`).join('\n')}\n`;

describe('imports survive outages of Temporal and of the Storage API', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('outages')));
  afterAll(() => env?.stop());

  // the two restarts run side by side (`it.concurrent`): each has its own worker and task queue, and the Storage API
  // restart its own emulator; the maintenance case runs after them alone (its import's tableCreate must not meet the
  // Temporal restart's held one)
  it.concurrent('finishes an import whose Temporal server was killed and restarted while the job was polled', async () => {
    const stack = testStack();
    const temporal = await startTemporal({ dataDir: join(env.dataDir, 'own-temporal'), headless: true });
    const taskQueue = uniqueTaskQueue('temporal-restart');
    const settings = loadSettings({
      ...stack.env,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      SAPI_URL: env.emulator.url,
      SAPI_TOKEN: env.emulator.token,
    });
    const worker = await startWorker({ settings, worker: { workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') } } });
    let restarted = temporal;
    try {
      // the job runs until Temporal is back
      env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
      const source = join(env.dataDir, 'restart.csv');
      writeFileSync(source, rowsCsv(100));
      const connection = await Connection.connect({ address: temporal.address });
      const client = new Client({ connection });
      const handle = await client.workflow.start('importTableWorkflow', {
        taskQueue,
        workflowId: `temporal-restart-${Date.now()}`,
        args: [{ source, bucketId: 'in.c-restart', createBucket: true, table: 't', polling: { initialMs: 500, maxMs: 1000 } }],
      });
      await eventually(async () => (await handle.query<TransferProgress>('progress')).phase === 'importing', 30_000, 'import never reached the job');
      await temporal.process.kill();
      await new Promise((r) => setTimeout(r, 2_000));
      restarted = await restartTemporal(temporal, { dataDir: join(env.dataDir, 'own-temporal'), headless: true });
      env.emulator.faults.releaseJobs('tableCreate');
      const result = (await handle.result()) as ImportTableResult;
      expect(result.importedRowsCount).toBe(100);
      expect((await env.emulator.readTable('in.c-restart.t')).rows).toHaveLength(100);
      const creates = env.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/buckets/in.c-restart/tables-async'));
      expect(creates).toHaveLength(1);
      await connection.close();
    } finally {
      await worker.stop().catch(() => undefined);
      await restarted.stop();
    }
  });

  it('rides out maintenance (503 + Retry-After) and 500s of the Storage API and imports every row once', async () => {
    // the first polls of the job, whenever they come (the prepare 500s before them take a while: lookups for a file they may have made)
    env.emulator.faults.add({
      method: 'GET',
      path: '/v2/storage/jobs/',
      times: 3,
      action: { type: 'status', status: 503, retryAfter: 1, body: { status: 'maintenance', reason: 'upgrade', estimatedEndTime: null } },
    });
    env.emulator.faults.add({ method: 'POST', path: 'files/prepare$', times: 2, action: { type: 'status', status: 500 } });
    const source = join(env.dataDir, 'maintenance.csv');
    writeFileSync(source, rowsCsv(50));
    const result = (await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `maintenance-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-maintenance', createBucket: true, table: 't', polling: { initialMs: 300, maxMs: 1000 } }],
    })) as ImportTableResult;
    expect(result.importedRowsCount).toBe(50);
    expect((await env.emulator.readTable('in.c-maintenance.t')).rows).toHaveLength(50);
    expect(env.emulator.requests.filter((r) => r.status === 503).length).toBeGreaterThan(0);
    expect(env.emulator.requests.filter((r) => r.status === 500 && r.path.endsWith('files/prepare')).length).toBe(2);
  });

  it.concurrent('finishes an import whose Storage API restarted mid-job (the job survives on its data folder)', async () => {
    const dataDir = join(env.dataDir, 'restart-emulator');
    const stack = testStack();
    const s3 = { ...stack.minio, bucket: `restart-emulator-${Date.now().toString(36)}` };
    let emulator: EmulatorHandle = await createEmulator({ port: 0, dataDir, s3, tokens: [{ token: 'restart-token' }], jobDelays: { processingMs: 12_000 } }); // longer than the short path's 5 s in-activity wait: the workflow polls it
    const port = Number(new URL(emulator.url).port);
    const taskQueue = uniqueTaskQueue('emulator-restart');
    const settings = loadSettings({ ...stack.env, TEMPORAL_TASK_QUEUE: taskQueue, SAPI_URL: emulator.url, SAPI_TOKEN: 'restart-token' });
    const worker = await startWorker({ settings, worker: { workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') } } });
    try {
      const source = join(env.dataDir, 'emulator-restart.csv');
      writeFileSync(source, rowsCsv(30));
      const handle = await env.client.workflow.start('importTableWorkflow', {
        taskQueue,
        workflowId: `emulator-restart-${Date.now()}`,
        args: [{ source, bucketId: 'in.c-er', createBucket: true, table: 't', polling: { initialMs: 300, maxMs: 1000 } }],
      });
      await eventually(async () => (await handle.query<TransferProgress>('progress')).jobStatus === 'processing', 30_000, 'job never processed');
      await emulator.close();
      await new Promise((r) => setTimeout(r, 1_500)); // polls fail meanwhile (connection refused): retried
      emulator = await createEmulator({ port, dataDir, s3, tokens: [{ token: 'restart-token' }] });
      const result = (await handle.result()) as ImportTableResult;
      expect(result.importedRowsCount).toBe(30);
      expect((await emulator.readTable('in.c-er.t')).rows).toHaveLength(30);
    } finally {
      await worker.stop().catch(() => undefined);
      await emulator.close();
    }
  });
});
