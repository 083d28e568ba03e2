/**
 * Starting a worker thread on one of this package's modules, compiled or not. NOT workflow-safe.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Starts a thread on the module with the given `workerData` and options. */
type StartThread = (workerData: unknown, options?: Omit<WorkerOptions, 'workerData' | 'eval'>) => Worker;

/**
 * How to start a thread on `file` (a module's `__filename`): the compiled `.js` directly; the TypeScript sources
 * (tests, `ts-register`) through the repository's `scripts/ts-register.js`, without heap limits (the thread then
 * holds the TypeScript compiler); undefined when neither works (the caller runs the work in its own thread).
 */
export function threadStarter(file: string): StartThread | undefined {
  if (file.endsWith('.js')) return (workerData, options) => new Worker(file, { ...options, workerData });
  const register = join(__dirname, '..', 'scripts', 'ts-register.js');
  if (!existsSync(register)) return undefined;
  return (workerData, options) => {
    const { resourceLimits: _limits, ...rest } = options ?? {};
    return new Worker(`require(${JSON.stringify(register)}); require(${JSON.stringify(file)});`, { ...rest, eval: true, workerData });
  };
}
