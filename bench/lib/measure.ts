/** Wall time, CPU time of every process of the stack, and RSS windows of the worker and the emulator, around a step. */
import { cpuUsage } from 'node:process';
import { readCpuTimes, RssSampler, type RssWindow } from './proc';
import type { BenchStack } from './stack';

export interface Measured<T> {
  value: T;
  ms: number;
  /** CPU seconds spent during the step by each process (`bench` is this process: baselines, sample API). */
  cpuSeconds: { worker?: number; emulator?: number; minio?: number; temporal?: number; bench: number };
  /** The same split into user and system (kernel) seconds: `[user, system]`. */
  cpuSplit: Partial<Record<'worker' | 'emulator' | 'minio' | 'temporal' | 'bench', [number, number]>>;
  worker: RssWindow;
  emulator: RssWindow;
}

/**
 * Runs `step` with the worker's and the emulator's RSS sampled every 100 ms and CPU time read before and after.
 * `workerPid`: the worker that runs the step, when it is not the stack's own (the `--compare-tree`'s).
 */
export async function measure<T>(stack: BenchStack, step: () => Promise<T>, workerPid = stack.pids.worker): Promise<Measured<T>> {
  const names = ['worker', 'emulator', 'minio', 'temporal'] as const;
  const pids = { ...stack.pids, worker: workerPid };
  const before = Object.fromEntries(names.map((n) => [n, readCpuTimes(pids[n])]));
  const benchBefore = cpuUsage();
  const worker = new RssSampler(workerPid).start();
  const emulator = new RssSampler(stack.pids.emulator).start();
  const started = performance.now();
  let value: T;
  let windows: { worker: RssWindow; emulator: RssWindow };
  try {
    value = await step();
  } finally {
    windows = { worker: worker.stop(), emulator: emulator.stop() };
  }
  const ms = performance.now() - started;
  const benchCpu = cpuUsage(benchBefore);
  const cpuSeconds: Measured<T>['cpuSeconds'] = { bench: round1((benchCpu.user + benchCpu.system) / 1e6) };
  const cpuSplit: Measured<T>['cpuSplit'] = { bench: [round1(benchCpu.user / 1e6), round1(benchCpu.system / 1e6)] };
  for (const n of names) {
    const after = readCpuTimes(pids[n]);
    const start = before[n];
    if (after !== undefined && start !== undefined) {
      cpuSeconds[n] = round1(after.total - start.total);
      cpuSplit[n] = [round1(after.user - start.user), round1(after.system - start.system)];
    }
  }
  return { value, ms, cpuSeconds, cpuSplit, ...windows };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
