/**
 * The plugin's workflow bundle: its configuration (what `SapiPlugin.configureBundler` applies), and the bundling of a
 * worker's workflows in a child process, so the worker never loads webpack's compiler, swc and their caches (+29 MB
 * V8 heap, +38 MB RSS for the worker's whole life when it bundled in its own process). This module is also the
 * child's entry: forked with IPC, it bundles once and exits.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SimplePlugin } from '@temporalio/plugin';
import {
  DefaultLogger,
  Runtime,
  type BundleOptions,
  type BundlerPlugin,
  type Logger,
  type LogLevel,
  type WorkerOptions,
  type WorkerPlugin,
} from '@temporalio/worker';
import type * as BundlerModule from '@temporalio/worker/lib/workflow/bundler';
import { WorkerStartError } from './errors';
import { loggerOf, withBundlerStatsAtDebug } from './observability/logging';
import { replayTracingPlugin } from './observability/tracing';
import { leanBundleOptions } from './workflow-bundle';

/** Path of the workflow interceptor module that logs each transfer's start and end (`observability/transfer-log`). */
export const transferLogModule: string = require.resolve('./observability/transfer-log');

/** The plugin's name (as `PLUGIN_NAME` of ./plugin, without loading the activities). */
const PLUGIN_NAME = 'sapi-temporal';

/** What the plugin adds at bundling time: its workflow interceptor module (the SDK's rules: appended). */
const bundleWiring = new SimplePlugin({ name: PLUGIN_NAME, workerInterceptors: { workflowModules: [transferLogModule] } });

/**
 * `SapiPlugin.configureBundler`: the bundler's stats at DEBUG (not 20 lines at every start), the lean bundle (see
 * workflow-bundle.ts), the tracing plugin's bundling (its workflow interceptor module) when `tracing` is given, the
 * transfer log module. The same function runs in the bundling child, so both bundle alike.
 */
export function configureSapiBundle(given: BundleOptions, tracing: BundlerPlugin | undefined): BundleOptions {
  const options = leanBundleOptions({ ...given, logger: withBundlerStatsAtDebug(given.logger ?? new DefaultLogger('INFO')) });
  return bundleWiring.configureBundler(tracing?.configureBundler?.(options) ?? options);
}

/**
 * What the child needs to bundle as `Worker.create` would have (the SDK's `getOrCreateBundle` with `workflowsPath`):
 * the options the worker's plugins produced, all plain data, and whether the plugin traces.
 */
export interface ChildBundleSpec {
  workflowsPath: string;
  workflowInterceptorModules: string[];
  payloadConverterPath?: string;
  failureConverterPath?: string;
  ignoreModules?: string[];
  preloadModules?: string[];
  /** The plugin's tracing is on: its bundling adds the OpenTelemetry workflow interceptor module. */
  tracing: boolean;
}

type ChildMessage =
  { kind: 'log'; level: LogLevel; message: string; meta?: Record<string, unknown> } | { kind: 'done'; code: string } | { kind: 'failed'; message: string };

/** A bundling process started ahead: node and the bundler load while the worker connects and runs its checks. */
export interface BundlingChild {
  /**
   * Bundles `spec` (once per child): resolves with the bundle's code; the child's log lines (the bundler's, webpack's
   * errors) go to `logger`. A bundle that does not build rejects with a {@link WorkerStartError} naming the workflow
   * module and webpack's errors.
   */
  bundle(spec: ChildBundleSpec, logger: Logger): Promise<{ code: string }>;
  /** Ends the child when it was not used (the worker's start failed before it bundled). */
  close(): void;
}

/**
 * This module runs from its own file (the package's `lib/`, or the sources): it can be forked as the bundling child.
 * Inside an application bundled into one file (esbuild, ncc), forking `__filename` would start the whole application
 * again: such a worker bundles in process, as the SDK does.
 */
const FORKABLE = /[\\/]worker-bundle\.(js|ts)$/.test(__filename);

/** Forks this module as a bundling child, which loads the bundler and waits for its {@link ChildBundleSpec}. */
export function startBundlingChild(): BundlingChild {
  const child = fork(__filename, [], {
    // the worker's node flags (heap sizes, profiling) but not its inspector's port; sources (tests, `ts-register`):
    // the child loads them through the same hook
    execArgv: withTsRegister(process.execArgv.filter((arg) => !arg.startsWith('--inspect'))),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  let logger: Logger | undefined;
  let outcome: ChildMessage | undefined;
  let failure: Error | undefined;
  child.on('message', (message: ChildMessage) => {
    if (message.kind === 'log') logger?.log(message.level, message.message, message.meta);
    else outcome = message;
  });
  child.once('error', (err) => (failure ??= err));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.once('exit', (code, signal) => ok({ code, signal })));
  // a child that is not used must not keep the worker's event loop alive
  child.unref();
  child.channel?.unref();
  return {
    async bundle(spec, log) {
      logger = log;
      const failed = (cause: string, err?: unknown) => new WorkerStartError(`bundling the workflows (${spec.workflowsPath}) failed: ${cause}`, { cause: err });
      child.ref();
      child.channel?.ref();
      if (!failure) child.send(spec, (err) => (failure ??= err ?? undefined));
      const { code, signal } = await exited;
      if (outcome?.kind === 'done') return { code: outcome.code };
      if (outcome?.kind === 'failed') throw failed(outcome.message);
      throw failed(failure ? failure.message : `the bundling process exited (${signal ?? `code ${code}`}) without a bundle`, failure);
    },
    close() {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    },
  };
}

/** Bundles `spec` in a child process started now: see {@link BundlingChild.bundle}. */
export function bundleInChild(spec: ChildBundleSpec, logger: Logger): Promise<{ code: string }> {
  return startBundlingChild().bundle(spec, logger);
}

function withTsRegister(execArgv: string[]): string[] {
  if (!__filename.endsWith('.ts')) return execArgv;
  const register = join(__dirname, '..', 'scripts', 'ts-register.js');
  return execArgv.some((arg) => arg.includes('ts-register')) || !existsSync(register) ? execArgv : [...execArgv, '-r', register];
}

/**
 * A worker plugin, placed after `SapiPlugin` (and any other plugin) on `Worker.create`: it takes the options the
 * plugins produced for a worker with `workflowsPath`, bundles them in a child ({@link bundleInChild}) and hands the
 * worker the code (`workflowBundle`), without `workflowsPath` and the workflow interceptor modules, which are in the
 * bundle already (the SDK would warn that it ignores them). One bundle per distinct configuration (the host queue's
 * worker takes the same). `onBundle` sees the code before the worker does (the deployment's build id).
 * `sapiPlugin`: the plugin whose `configureBundler` the child applies; a worker with another plugin that configures the
 * bundler, or with a `webpackConfigHook` (functions the child cannot receive), bundles in process as before. The first
 * child starts at once (it loads while the worker connects); `close()` ends it if no worker took it.
 */
export function childBundling(
  sapiPlugin: BundlerPlugin,
  tracing: boolean,
  onBundle: (code: string, options: WorkerOptions) => WorkerOptions = (_code, options) => options,
): WorkerPlugin & { close(): void } {
  const built = new Map<string, Promise<{ code: string }>>();
  let ahead: BundlingChild | undefined = FORKABLE ? startBundlingChild() : undefined;
  const take = () => {
    const child = ahead ?? startBundlingChild();
    ahead = undefined;
    return child;
  };
  return {
    name: `${PLUGIN_NAME}-child-bundling`,
    close: () => ahead?.close(),
    async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
      const others = (options.plugins ?? []).filter((plugin) => plugin !== sapiPlugin && (plugin as BundlerPlugin).configureBundler !== undefined);
      if (!FORKABLE || options.workflowBundle || !options.workflowsPath || others.length > 0 || options.bundlerOptions?.webpackConfigHook) return options;
      const spec: ChildBundleSpec = {
        workflowsPath: options.workflowsPath,
        workflowInterceptorModules: options.interceptors?.workflowModules ?? [],
        payloadConverterPath: options.dataConverter?.payloadConverterPath,
        failureConverterPath: options.dataConverter?.failureConverterPath,
        ignoreModules: options.bundlerOptions?.ignoreModules,
        preloadModules: options.bundlerOptions?.preloadModules,
        tracing,
      };
      const key = JSON.stringify(spec);
      if (!built.has(key)) built.set(key, take().bundle(spec, bundlerLogger(options.taskQueue)));
      const bundle = await built.get(key)!;
      const { bundlerOptions: _bundler, workflowsPath: _path, ...rest } = options;
      return onBundle(bundle.code, { ...rest, workflowBundle: bundle, interceptors: { ...options.interceptors, workflowModules: undefined } });
    },
  };
}

/** The worker's logger as the SDK gives it to the bundler (the runtime's, `sdkComponent: worker`, the task queue). */
function bundlerLogger(taskQueue: string | undefined): Logger {
  return loggerOf((level, message, meta) =>
    Runtime.instance().logger.log(level, message, { sdkComponent: 'worker', taskQueue: taskQueue ?? 'default', ...meta }),
  );
}

/** In the child: the bundle of `spec`, built as the SDK's `Worker.create` builds one from `workflowsPath`. */
async function bundleAsWorker(spec: ChildBundleSpec, logger: Logger, bundler: Promise<typeof BundlerModule>): Promise<string> {
  const { WorkflowCodeBundler } = await bundler;
  const tracing = spec.tracing ? replayTracingPlugin() : undefined;
  const sapiBundler: BundlerPlugin = { name: PLUGIN_NAME, configureBundler: (given) => configureSapiBundle(given, tracing) };
  const codeBundler = new WorkflowCodeBundler({
    logger,
    workflowsPath: spec.workflowsPath,
    workflowInterceptorModules: spec.workflowInterceptorModules,
    failureConverterPath: spec.failureConverterPath,
    payloadConverterPath: spec.payloadConverterPath,
    ignoreModules: spec.ignoreModules,
    preloadModules: spec.preloadModules,
    plugins: [sapiBundler],
  });
  return (await codeBundler.createBundle()).code;
}

if (require.main === module && process.send) {
  const send = (message: ChildMessage) => new Promise<void>((ok) => process.send!(message, undefined, {}, () => ok()));
  // webpack's errors come as one ERROR line of its stats before the bundler's generic rejection: the failure names them
  const errors: string[] = [];
  const logger = loggerOf((level, message, meta) => {
    if (level === 'ERROR') errors.push(...message.split('\n').filter((line) => /^(ERROR in |Module not found|Module parse failed|\s*\S*Error: )/.test(line)));
    void send({ kind: 'log', level, message, meta: plain(meta) });
  });
  // the parent gone (its start failed, it was killed): nothing to bundle for
  process.once('disconnect', () => process.exit(0));
  // load the bundler (webpack) while the parent connects and checks
  const bundler = import('@temporalio/worker/lib/workflow/bundler');
  process.once('message', (spec: ChildBundleSpec) => {
    bundleAsWorker(spec, logger, bundler)
      .then((code) => send({ kind: 'done', code }))
      .catch((err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        return send({ kind: 'failed', message: errors.length ? `${errors.slice(0, 6).join('; ')} (${message})` : message });
      })
      .finally(() => process.disconnect());
  });
}

/** A log line's metadata as the IPC channel can carry it (webpack's stats objects may hold functions). */
function plain(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (meta === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(meta)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
