import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { codecDataConverter } from '../../src/codec';
import { createEmulator, type EmulatorHandle, type EmulatorOptions } from '../../src/emulator';
import { loadSettings, type Settings } from '../../src/config';
import { startWorker, type RunningWorker } from '../../src/worker';
import { type ChildProcess } from 'node:child_process';
import { spawnTs, waitForLine } from './processes';
import { noteSecret } from './secret-ledger';
import { testStack, uniqueTaskQueue } from './stack-state';

export interface SapiTestEnv {
  emulator: EmulatorHandle;
  client: Client;
  taskQueue: string;
  settings: Settings;
  /** The worker of this test file (replace it with `restartWorker`). */
  worker: RunningWorker;
  startWorker(): Promise<RunningWorker>;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * One emulator (own data folder and object bucket, on the run's shared MinIO), one task queue and one in-process
 * worker for a test file, on the run's shared Temporal server.
 */
export async function startSapiTestEnv(
  name: string,
  options: { emulator?: Partial<EmulatorOptions>; env?: Record<string, string>; worker?: boolean; checkConnections?: boolean } = {},
): Promise<SapiTestEnv> {
  const stack = testStack();
  const dataDir = mkdtempSync(join(stack.dataDir, `${name}-`));
  const token = `test-token-${name}`;
  noteSecret(`the Storage token of ${name}`, token);
  const emulator = await createEmulator({
    port: 0,
    dataDir: join(dataDir, 'emulator'),
    s3: { ...stack.minio, bucket: `files-${name.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${Date.now().toString(36)}`.slice(0, 63) },
    tokens: [{ token, description: `${name} tests` }],
    ...options.emulator,
  });
  const taskQueue = uniqueTaskQueue(name);
  const settings = loadSettings({
    ...stack.env,
    TEMPORAL_TASK_QUEUE: taskQueue,
    SAPI_URL: emulator.url,
    SAPI_TOKEN: token,
    SAPI_WORK_DIR: join(dataDir, 'work'),
    SAPI_PART_SIZE_MIB: '5',
    ...options.env,
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  // with SAPI_CODEC_KEYS in options.env, the test's client encrypts like the worker (as the CLI does)
  const client = new Client({ connection, namespace: stack.namespace, dataConverter: codecDataConverter(settings.codecKeys) });
  const bundle = { code: readFileSync(stack.workflowBundlePath, 'utf8') };
  const start = () => startWorker({ settings, worker: { workflowBundle: bundle }, checkConnections: options.checkConnections });
  const env: SapiTestEnv = {
    emulator,
    client,
    taskQueue,
    settings,
    dataDir,
    worker: options.worker === false ? (undefined as unknown as RunningWorker) : await start(),
    startWorker: async () => (env.worker = await start()),
    async stop() {
      await env.worker?.stop().catch(() => undefined);
      await connection.close();
      await emulator.close();
    },
  };
  return env;
}

/**
 * A worker for this env in its own process (so a chaos test can SIGKILL it): the env's task queue, emulator and
 * token, the run's workflow bundle, `extra` on top. Resolves once it polls. The caller kills it after its test.
 */
export async function startWorkerProcess(env: SapiTestEnv, identity: string, extra: Record<string, string> = {}): Promise<ChildProcess> {
  const stack = testStack();
  const child = spawnTs('test/harness/worker-child.ts', [], {
    ...stack.env,
    TEMPORAL_TASK_QUEUE: env.taskQueue,
    SAPI_URL: env.emulator.url,
    SAPI_TOKEN: env.emulator.token,
    SAPI_WORK_DIR: join(env.dataDir, `work-${identity}`),
    SAPI_TEST_WORKFLOW_BUNDLE: stack.workflowBundlePath,
    SAPI_TEST_WORKER_IDENTITY: identity,
    ...extra,
  });
  await waitForLine(child, /^READY$/, 60_000);
  return child;
}
