/**
 * The bench's stack: the dev stack's Temporal and MinIO, then the emulator and a worker, each in its own process
 * (so their RSS and CPU are theirs alone), all registered with the dev stack's orphan watchdog. One per bench run.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { transpileTree } from './compile';
import { ManagedProcess } from '../../src/dev/process';
import { DEFAULT_FILES_BUCKET, startDevStack, type DevStack, type DevStackService } from '../../src/dev/stack';
import { EMULATOR_OPTIONS_ENV, type EmulatorOptions } from '../../src/emulator/options';
import type { BaselineCommand, BaselineResult } from '../baseline-child';
import { createStorageClient, type StorageClient } from '../../src/storage-api';

const repoRoot = resolve(__dirname, '..', '..');
const tsRegisterOf = (tree = repoRoot) => join(tree, 'scripts', 'ts-register.js');

export interface BenchStackOptions {
  dataDir: string;
  /** Export slicing threshold of the emulator (bytes). */
  sliceSizeBytes?: number;
  /**
   * How the worker and emulator processes run: `compiled` (default; the sources transpiled ahead of time to plain
   * JS, as in production) or `ts-hook` (`node -r scripts/ts-register.js`, which keeps the TypeScript compiler,
   * ~50 MB, in each process).
   */
  runtime?: 'compiled' | 'ts-hook';
  /** Write V8 CPU profiles of the worker and every baseline process here (`--cpu-prof`); for finding what limits. */
  profileDir?: string;
  /**
   * Cap every S3 connection of the worker and of the baselines at this many bytes per second (a throttling TCP proxy
   * in front of MinIO); the emulator still reaches MinIO directly. Default: no proxy.
   */
  linkBytesPerSecond?: number;
  /** Folders the worker may read sources from and write exports to (`SAPI_LOCAL_ROOTS`): the bench's data and fixtures. */
  localRoots?: string[];
  /**
   * Another checkout of this repository with its own node_modules (`--compare-tree`): a second worker runs its
   * sources (its `bench/worker-child.ts`, its workflows bundled by its `bench/bundle-child.ts`) with the same
   * settings on the task queue `<queue>-compare`, beside ours, on the same Temporal, MinIO and emulator.
   */
  compareTree?: string;
  log: (message: string) => void;
}

export interface BenchStack {
  dataDir: string;
  env: Record<string, string>;
  taskQueue: string;
  client: Client;
  storage: StorageClient;
  sapiUrl: string;
  token: string;
  /** The S3 endpoint the worker and the baselines use: MinIO, or the throttling proxy in front of it. */
  s3Endpoint: string;
  minio: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string; bucket: string };
  /** Process ids: the worker and the emulator are node processes started by the bench. */
  pids: { worker: number; emulator: number; minio: number; temporal: number };
  /** The `--compare-tree`'s worker: its task queue, process id and checkout. */
  compare?: { taskQueue: string; pid: number; tree: string };
  /** Where the worker keeps temporary files (slice downloads, staged pages). */
  workerWorkDir: string;
  /** JSON file the worker writes its in-process memory figures to when `<it>.request` appears (`bench/worker-child.ts`). */
  workerMemoryReport: string;
  /**
   * Starts another node process (a repository script, e.g. `bench/empty-worker-child.ts`) as the worker processes run
   * (their node flags and malloc settings, the stack's environment), ready when it prints `READY`; stop it when done.
   */
  startSideProcess(name: string, path: string, env: Record<string, string>): Promise<{ pid: number; stop(): Promise<void> }>;
  /** Bundles the workflows of a folder (a throwaway process) into `out`. */
  bundleWorkflows(workflowsDir: string, out: string): Promise<void>;
  /** Starts one more worker process on the same task queue (scale-out); stop it when done. */
  startExtraWorker(): Promise<{ pid: number; stop(): Promise<void> }>;
  /** `POST /_emulator/faults` (a rule, `{slowJob}`, `{failJob}`). */
  emulatorFault(body: unknown): Promise<void>;
  /** An S3 client with MinIO's root keys and default SDK settings (the "bare" baselines use it). */
  rootS3(): S3Client;
  /** Runs a baseline in its own lean process (`bench/baseline-child.ts`) and returns what it measured. */
  runBaseline(command: BaselineCommand, timeoutMs?: number): Promise<BaselineResult>;
  stop(): Promise<void>;
}

/** Starts Temporal + MinIO (dev stack), the emulator and the worker (child processes), and a client for each. */
export async function startBenchStack(options: BenchStackOptions): Promise<BenchStack> {
  const { dataDir, log } = options;
  mkdirSync(dataDir, { recursive: true });
  const token = `bench-${randomBytes(12).toString('hex')}`;
  const adminToken = `bench-admin-${randomBytes(12).toString('hex')}`;
  const workerWorkDir = join(dataDir, 'worker');
  const bundlePath = join(dataDir, 'workflow-bundle.js');
  const pids = { worker: -1, emulator: -1, minio: -1, temporal: -1 };
  const runtime = options.runtime ?? 'compiled';
  const compiledDir = join(dataDir, 'compiled');
  let started = Date.now();
  if (runtime === 'compiled') {
    const files = transpileTree(repoRoot, ['src', 'test/harness', 'bench'], compiledDir);
    log(`transpiled ${files} source files to ${compiledDir} in ${Date.now() - started} ms`);
  }
  const compareTree = options.compareTree;
  if (compareTree) {
    const needed = ['src/workflows/index.ts', 'bench/worker-child.ts', 'bench/bundle-child.ts', 'scripts/ts-register.js', 'node_modules'];
    const missing = needed.filter((p) => !existsSync(join(compareTree, p)));
    if (missing.length) throw new Error(`--compare-tree ${compareTree} is not a checkout of this repository with its node_modules: no ${missing.join(', ')}`);
    if (runtime === 'compiled') {
      const files = transpileTree(compareTree, ['src', 'test/harness', 'bench'], join(compiledDir, 'compare'));
      log(`transpiled ${files} source files of ${compareTree} to ${join(compiledDir, 'compare')}`);
    }
  }
  const script = (path: string, tree = repoRoot) => {
    const compiled = tree === repoRoot ? compiledDir : join(compiledDir, 'compare');
    return runtime === 'compiled' ? { script: join(compiled, path.replace(/\.ts$/, '.js')), hook: false, tree } : { script: join(tree, path), hook: true, tree };
  };
  const nodeArgs = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(options.profileDir)}`] : [];
  started = Date.now();
  log('bundling the workflows …');
  await runNode([join(repoRoot, 'bench', 'bundle-child.ts'), bundlePath], { hook: true, timeoutMs: 180_000 });
  const compareBundlePath = join(dataDir, 'workflow-bundle-compare.js');
  if (compareTree) await runNode([join(compareTree, 'bench', 'bundle-child.ts'), compareBundlePath], { hook: true, timeoutMs: 180_000, tree: compareTree });
  log(`bundled in ${Date.now() - started} ms; starting Temporal, MinIO, the emulator and the worker …`);
  started = Date.now();

  const emulatorService: DevStackService = async (core) => {
    const emulatorOptions: EmulatorOptions = {
      port: 0,
      dataDir: join(core.dataDir, 'emulator'),
      s3: {
        endpoint: core.minio.endpoint,
        region: core.minio.region,
        accessKeyId: core.minio.accessKeyId,
        secretAccessKey: core.minio.secretAccessKey,
        bucket: DEFAULT_FILES_BUCKET,
      },
      tokens: [{ token, description: 'bench' }],
      adminToken,
      sliceSizeBytes: options.sliceSizeBytes,
    };
    const child = await startNodeChild({
      name: 'emulator',
      ...script('src/emulator/child.ts'),
      env: { [EMULATOR_OPTIONS_ENV]: JSON.stringify(emulatorOptions) },
      logFile: join(core.dataDir, 'logs', 'emulator.log'),
      readyPattern: /^EMULATOR_READY (.+)$/m,
      watchdogPidFile: join(core.dataDir, 'stack.pids'),
    });
    pids.emulator = child.process.pid;
    const ready = JSON.parse(child.match[1]!) as { url: string; importUrl: string };
    return {
      env: { SAPI_URL: ready.url, SAPI_IMPORT_URL: ready.importUrl, SAPI_TOKEN: token },
      stop: () => child.process.stop(),
    };
  };

  let s3Endpoint = '';
  const throttleService: DevStackService = async (core) => {
    s3Endpoint = core.minio.endpoint;
    if (!options.linkBytesPerSecond) return { env: {}, stop: async () => undefined };
    const child = await startNodeChild({
      name: 'throttle',
      ...script('bench/throttle-child.ts'),
      env: { BENCH_THROTTLE_TARGET: core.minio.endpoint, BENCH_THROTTLE_BPS: String(options.linkBytesPerSecond) },
      logFile: join(core.dataDir, 'logs', 'throttle.log'),
      readyPattern: /^THROTTLE_READY (\S+)$/m,
      watchdogPidFile: join(core.dataDir, 'stack.pids'),
    });
    s3Endpoint = child.match[1]!;
    log(`S3 connections of the worker and the baselines capped at ${options.linkBytesPerSecond} B/s each through ${s3Endpoint}`);
    return { env: {}, stop: () => child.process.stop() };
  };

  const workerMemoryReport = join(dataDir, 'worker-memory.json');
  let workerEnv: Record<string, string> = {};
  const startWorkerChild = async (index: number, compare?: { tree: string; taskQueue: string }) => {
    const child = await startNodeChild({
      name: compare ? 'worker-compare' : index ? `worker-${index}` : 'worker',
      ...script('bench/worker-child.ts', compare?.tree),
      env: {
        // as the package's `sapi-temporal` wrapper (and so the worker image) runs it
        MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
        MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
        ...workerEnv,
        SAPI_TEST_WORKER_IDENTITY: `bench-worker-${compare ? 'compare' : index}@${process.pid}`,
        SAPI_WORK_DIR: compare ? `${workerWorkDir}-compare` : index ? `${workerWorkDir}-${index}` : workerWorkDir,
        ...(index || compare ? {} : { BENCH_MEMORY_REPORT: workerMemoryReport }),
        ...(compare ? { SAPI_TEST_WORKFLOW_BUNDLE: compareBundlePath, TEMPORAL_TASK_QUEUE: compare.taskQueue } : {}),
      },
      logFile: join(dataDir, 'logs', compare ? 'worker-compare.log' : index ? `worker-${index}.log` : 'worker.log'),
      readyPattern: /^READY$/m,
      // BENCH_WORKER_NODE_ARGS: node flags for the worker processes only (e.g. `--max-semi-space-size=4`); 8 MB
      // semi-spaces unless they say otherwise, as the `sapi-temporal` command runs it
      nodeArgs: [...nodeArgs, '--expose-gc', ...workerNodeArgs()],
      watchdogPidFile: join(dataDir, 'stack.pids'),
    });
    return child.process;
  };
  const workerService: DevStackService = async (core) => {
    // the worker's input policy: its sources and destinations are the bench's own folders (as an operator sets them)
    workerEnv = { ...core.env, AWS_ENDPOINT_URL_S3: s3Endpoint, SAPI_TEST_WORKFLOW_BUNDLE: bundlePath, SAPI_LOCAL_ROOTS: [dataDir, ...(options.localRoots ?? [])].join(',') };
    const child = await startWorkerChild(0);
    pids.worker = child.pid;
    return { env: {}, stop: () => child.stop(15_000) };
  };
  let compare: BenchStack['compare'];
  const compareWorkerService: DevStackService = async (core) => {
    if (!compareTree) return { env: {}, stop: async () => undefined };
    const taskQueue = `${core.taskQueue}-compare`;
    const child = await startWorkerChild(0, { tree: compareTree, taskQueue });
    compare = { taskQueue, pid: child.pid, tree: compareTree };
    log(`compare worker (${compareTree}) pid ${child.pid} polls ${taskQueue}`);
    return { env: {}, stop: () => child.stop(15_000) };
  };
  let extraWorkers = 0;

  const stack: DevStack = await startDevStack({ dataDir, headless: true, services: [emulatorService, throttleService, workerService, compareWorkerService] });
  let connection: Connection | undefined;
  let storage: StorageClient | undefined;
  try {
    pids.minio = stack.minio.process.pid;
    pids.temporal = stack.temporal.process.pid;
    connection = await Connection.connect({ address: stack.temporal.address });
    const client = new Client({ connection, namespace: stack.temporal.namespace });
    const sapiUrl = stack.env.SAPI_URL!;
    storage = createStorageClient({ url: sapiUrl, token });
    log(`stack up in ${Date.now() - started} ms (worker pid ${pids.worker}, emulator pid ${pids.emulator}) under ${dataDir}`);
    const minio = {
      endpoint: stack.minio.endpoint,
      region: stack.minio.region,
      accessKeyId: stack.minio.accessKeyId,
      secretAccessKey: stack.minio.secretAccessKey,
      bucket: DEFAULT_FILES_BUCKET,
    };
    const s3Clients: S3Client[] = [];
    const openStorage = storage;
    const openConnection = connection;
    return {
      dataDir,
      env: { ...stack.env },
      taskQueue: stack.taskQueue,
      client,
      storage,
      sapiUrl,
      token,
      s3Endpoint,
      minio,
      pids,
      compare,
      workerWorkDir,
      workerMemoryReport,
      async startSideProcess(name, path, env) {
        const child = await startNodeChild({
          name,
          ...script(path),
          env: { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2', MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072', ...workerEnv, ...env },
          logFile: join(dataDir, 'logs', `${name}.log`),
          readyPattern: /^READY$/m,
          nodeArgs: [...nodeArgs, '--expose-gc', ...workerNodeArgs()],
          watchdogPidFile: join(dataDir, 'stack.pids'),
        });
        return { pid: child.process.pid, stop: () => child.process.stop(15_000) };
      },
      async bundleWorkflows(workflowsDir, out) {
        await runNode([join(repoRoot, 'bench', 'bundle-child.ts'), out, workflowsDir], { hook: true, timeoutMs: 180_000 });
      },
      async startExtraWorker() {
        const child = await startWorkerChild(++extraWorkers);
        return { pid: child.pid, stop: () => child.stop(15_000) };
      },
      async emulatorFault(body) {
        const res = await request(`${sapiUrl}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` }, body: JSON.stringify(body) });
        const text = await res.body.text();
        if (res.statusCode >= 300) throw new Error(`POST /_emulator/faults answered ${res.statusCode}: ${text}`);
      },
      rootS3() {
        const s3 = new S3Client({
          endpoint: minio.endpoint,
          region: minio.region,
          forcePathStyle: true,
          credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
        });
        s3Clients.push(s3);
        return s3;
      },
      async runBaseline(command, timeoutMs = 30 * 60_000) {
        const { script: path, hook } = script('bench/baseline-child.ts');
        const stdout = await runNode([...nodeArgs, path], { hook, timeoutMs, env: { BENCH_BASELINE: JSON.stringify(command) } });
        const line = /^BASELINE_RESULT (.+)$/m.exec(stdout);
        if (!line) throw new Error(`baseline-child printed no result; stdout: ${stdout.slice(-500)}`);
        return JSON.parse(line[1]!) as BaselineResult;
      },
      async stop() {
        for (const s3 of s3Clients) s3.destroy();
        await openStorage.close().catch(() => undefined);
        await openConnection.close().catch(() => undefined);
        await stack.stop();
      },
    };
  } catch (err) {
    await storage?.close().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await stack.stop();
    throw err;
  }
}

/**
 * `node [-r ts-register] <script>` as a managed process (own group, watchdog), ready when its log shows the pattern.
 * Packages resolve through `NODE_PATH` so that transpiled output outside the repository finds `node_modules`.
 */
async function startNodeChild(options: {
  name: string;
  script: string;
  hook: boolean;
  /** The checkout the script belongs to: its ts-register hook, its node_modules, its folder as cwd (default this one). */
  tree?: string;
  /** Extra node options (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  env: Record<string, string>;
  logFile: string;
  readyPattern: RegExp;
  watchdogPidFile: string;
}): Promise<{ process: ManagedProcess; match: RegExpMatchArray }> {
  let match: RegExpMatchArray | null = null;
  mkdirSync(dirname(options.logFile), { recursive: true });
  writeFileSync(options.logFile, ''); // a reused data dir must not show the last run's ready line
  const child = await ManagedProcess.start({
    name: options.name,
    command: process.execPath,
    args: [...(options.nodeArgs ?? []), ...(options.hook ? ['-r', tsRegisterOf(options.tree)] : []), options.script],
    env: { ...process.env, NODE_PATH: join(options.tree ?? repoRoot, 'node_modules'), ...options.env },
    cwd: options.tree ?? repoRoot,
    logFile: options.logFile,
    healthTimeoutMs: 120_000,
    watchdogPidFile: options.watchdogPidFile,
    healthy: async () => {
      match = readFileSync(options.logFile, 'utf8').match(options.readyPattern);
      return match !== null;
    },
  });
  return { process: child, match: match! };
}

/** Runs `node [-r ts-register] <args>` to completion; resolves with its stdout, rejects with its stderr tail. */
export function runNode(args: string[], options: { hook: boolean; timeoutMs: number; env?: Record<string, string>; tree?: string }): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, options.hook ? ['-r', tsRegisterOf(options.tree), ...args] : args, {
      cwd: options.tree ?? repoRoot,
      env: { ...process.env, NODE_PATH: join(options.tree ?? repoRoot, 'node_modules'), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise(stdout);
      else reject(new Error(`${args[0]} exited with ${code ?? signal}${signal === 'SIGKILL' ? ` (time limit ${options.timeoutMs} ms?)` : ''}: ${stderr.trim().split('\n').slice(-8).join('\n')}`));
    });
  });
}

/** Node flags of the bench's worker processes: `BENCH_WORKER_NODE_ARGS`, and the `sapi-temporal` command's semi-space size unless they set one. */
function workerNodeArgs(): string[] {
  const extra = process.env.BENCH_WORKER_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? [];
  return extra.some((a) => a.startsWith('--max-semi-space-size')) ? extra : ['--max-semi-space-size=8', ...extra];
}
