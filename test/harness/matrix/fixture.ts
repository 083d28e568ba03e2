import { type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startTemporal, type TemporalHandle } from '../../../src/dev/temporal';
import { restartTemporal } from '../temporal-restart';
import type { EmulatorOptions } from '../../../src/emulator';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import { startSapiTestEnv, type SapiTestEnv } from '../sapi-env';
import { testStack, uniqueTaskQueue } from '../stack-state';
import { isAlive, spawnTs, waitForLine } from '../processes';
import { Gate } from './gate';

/** Pages of the sample API's `large/items` the extraction cells fetch. */
export const EXTRACT_PAGES = 6;

/** How many worker processes poll at once: one runs the cell's activity, the other takes over when it is killed. */
export const WORKERS = 2;

/**
 * What the cells of one test file share: one emulator, one own Temporal server (killed and restarted by cells),
 * proxies in front of the emulator, MinIO and (extraction) the sample API, and worker processes that cells SIGKILL.
 */
export interface MatrixFixture {
  env: SapiTestEnv;
  temporal: TemporalHandle;
  client: Client;
  taskQueue: string;
  sapiGate: Gate;
  s3Gate: Gate;
  apiGate?: Gate;
  api?: SampleApi;
  /** Live worker processes by identity. */
  workers: Map<string, ChildProcess>;
  /** Starts workers until {@link WORKERS} are polling. */
  ensureWorkers(): Promise<void>;
  /** SIGKILLs one worker and cuts its proxy connections; a replacement starts in the background. */
  killWorker(identity: string): void;
  /** SIGKILLs the Temporal server; `restart` starts it again on the same port (same SQLite file). */
  killTemporal(): Promise<void>;
  restartTemporal(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMatrixFixture(name: string, options: { emulator?: Partial<EmulatorOptions>; sampleApi?: boolean } = {}): Promise<MatrixFixture> {
  const stack = testStack();
  const env = await startSapiTestEnv(name, { worker: false, emulator: options.emulator });
  const temporalDir = join(env.dataDir, 'temporal');
  let temporal = await startTemporal({ dataDir: temporalDir, headless: true });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const taskQueue = uniqueTaskQueue(`matrix-${name}`);
  const sapiGate = new Gate(env.emulator.url, { path: /^\/v2\/storage\/?$/, from: env.emulator.url });
  const s3Gate = new Gate(stack.minio.endpoint);
  let api: SampleApi | undefined;
  let apiGate: Gate | undefined;
  if (options.sampleApi) {
    api = await createSampleApi({ records: 40, pageSize: 10, largePages: EXTRACT_PAGES, logRequests: false });
    apiGate = new Gate(api.url);
    await apiGate.listen('api');
  }
  const workers = new Map<string, ChildProcess>();
  const starting = new Set<Promise<void>>();
  let next = 0;
  const stagingPrefix = `matrix-${name}-${Date.now().toString(36)}`;

  async function startWorker(): Promise<void> {
    const identity = `${name}-w${++next}`;
    const child = spawnTs('test/harness/worker-child.ts', [], {
      ...stack.env,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      SAPI_URL: await sapiGate.listen(identity),
      SAPI_TOKEN: env.emulator.token,
      AWS_ENDPOINT_URL_S3: await s3Gate.listen(identity),
      AWS_ACCESS_KEY_ID: stack.minio.accessKeyId,
      AWS_SECRET_ACCESS_KEY: stack.minio.secretAccessKey,
      SAPI_STAGING_URL: `s3://matrix-staging/${stagingPrefix}`,
      SAPI_STAGING_TOKEN: 'unused', // loadSettings reads SAPI_<NAME>_URL as a connection and wants its token
      SAPI_PART_SIZE_MIB: '5',
      SAPI_TRANSFER_CONCURRENCY: '1', // parts and slices in order: the cells name "the second part"
      SAPI_WORK_DIR: join(env.dataDir, `work-${identity}`),
      SAPI_TEST_WORKFLOW_BUNDLE: stack.workflowBundlePath,
      SAPI_TEST_WORKER_IDENTITY: identity,
    });
    child.stdout?.resume();
    await waitForLine(child, /^READY$/, 120_000);
    workers.set(identity, child);
    child.once('exit', () => workers.delete(identity));
  }

  const fixture: MatrixFixture = {
    env,
    get temporal() {
      return temporal;
    },
    client,
    taskQueue,
    sapiGate,
    s3Gate,
    apiGate,
    api,
    workers,
    async ensureWorkers() {
      while (starting.size > 0) await Promise.all([...starting]);
      for (const [identity, child] of workers) if (!child.pid || !isAlive(child.pid)) workers.delete(identity);
      const missing = WORKERS - workers.size;
      await Promise.all(Array.from({ length: Math.max(0, missing) }, () => startWorker()));
    },
    killWorker(identity) {
      const child = workers.get(identity);
      if (!child) throw new Error(`no worker ${identity} (alive: ${[...workers.keys()].join(', ')})`);
      child.kill('SIGKILL');
      workers.delete(identity);
      sapiGate.cut(identity);
      s3Gate.cut(identity);
      const replacement = startWorker().catch((err: unknown) => process.stderr.write(`[matrix] replacement worker failed: ${String(err)}\n`));
      const tracked = replacement.then(() => void starting.delete(tracked));
      starting.add(tracked);
    },
    async killTemporal() {
      await temporal.process.kill();
    },
    async restartTemporal() {
      temporal = await restartTemporal(temporal, { dataDir: temporalDir, headless: true });
    },
    async stop() {
      while (starting.size > 0) await Promise.all([...starting]);
      for (const child of workers.values()) child.kill('SIGKILL');
      workers.clear();
      await connection.close().catch(() => undefined);
      await temporal.stop().catch(() => undefined);
      await Promise.all([sapiGate.close(), s3Gate.close(), apiGate?.close(), api?.close()]);
      await env.stop();
    },
  };
  return fixture;
}
