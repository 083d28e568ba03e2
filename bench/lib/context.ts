/** What every scenario gets: the stack, the options, shared fixtures, a workflow runner with history timings. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { BenchOptions } from './args';
import { writeCsv, type GeneratedCsv } from './csv';
import { historyTimings, type HistoryTimings } from './history';
import type { Figure } from './report';
import type { BenchStack } from './stack';
import { importCsvDirect } from './storage-ops';
import { MIB } from './stats';

export interface ScenarioResult {
  figures: Figure[];
  /** Everything else worth keeping in the JSON (per-run numbers, CPU, RSS timelines). */
  details: Record<string, unknown>;
}

export interface WorkflowRun<T> {
  workflowId: string;
  result: T;
  /** Wall time from start request to result, as the bench saw it. */
  ms: number;
  timings: HistoryTimings;
}

export interface ScenarioContext {
  stack: BenchStack;
  options: BenchOptions;
  fixtures: Fixtures;
  /** Aborted when the scenario's time limit passes. */
  signal: AbortSignal;
  log(message: string): void;
  /**
   * Starts a workflow by name on the stack's queue (or `taskQueue`: the compare tree's), waits for its result (or
   * the time limit), reads its history.
   */
  runWorkflow<T>(workflowType: string, input: unknown, label: string, taskQueue?: string): Promise<WorkflowRun<T>>;
  /** Starts a workflow and returns its handle; it is terminated if the scenario ends while it is still running. */
  startWorkflow(workflowType: string, input: unknown, label: string, taskQueue?: string): Promise<WorkflowHandle>;
}

export type Scenario = (ctx: ScenarioContext) => Promise<ScenarioResult>;

/** Generated files and loaded tables shared by scenarios of one run (and files across runs, by size). */
export class Fixtures {
  private readonly csvs = new Map<number, Promise<GeneratedCsv>>();
  private readonly tables = new Map<number, Promise<string>>();

  constructor(
    private readonly stack: BenchStack,
    private readonly dir: string,
    private readonly log: (message: string) => void,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** A generated CSV of `sizeMiB` MiB (kept in the fixtures folder between runs). */
  csv(sizeMiB: number): Promise<GeneratedCsv> {
    let file = this.csvs.get(sizeMiB);
    if (!file) {
      const started = Date.now();
      file = writeCsv(join(this.dir, `data-${sizeMiB}mib.csv`), Math.round(sizeMiB * MIB)).then((csv) => {
        this.log(`CSV of ${sizeMiB} MiB ready (${csv.rows} rows) in ${Date.now() - started} ms: ${csv.path}`);
        return csv;
      });
      this.csvs.set(sizeMiB, file);
    }
    return file;
  }

  /** Records a table that holds the `sizeMiB` CSV (e.g. one the upload scenario loaded), for the export scenarios. */
  rememberTable(sizeMiB: number, tableId: string): void {
    if (!this.tables.has(sizeMiB)) this.tables.set(sizeMiB, Promise.resolve(tableId));
  }

  hasTable(sizeMiB: number): boolean {
    return this.tables.has(sizeMiB);
  }

  /** A table holding the `sizeMiB` CSV: one loaded earlier in this run, else imported directly (no Temporal). */
  table(sizeMiB: number): Promise<string> {
    let table = this.tables.get(sizeMiB);
    if (!table) {
      table = (async () => {
        const csv = await this.csv(sizeMiB);
        const started = Date.now();
        this.log(`loading the ${sizeMiB} MiB CSV into a table (direct import) …`);
        const { tableId } = await importCsvDirect(this.stack, csv.path, 'bench', `fixture_${String(sizeMiB).replace(/\W/g, '_')}mib`);
        this.log(`table ${tableId} loaded in ${Math.round((Date.now() - started) / 1000)} s`);
        return tableId;
      })();
      this.tables.set(sizeMiB, table);
    }
    return table;
  }
}

/** Builds the context of one scenario; `close()` terminates the workflows it left running. */
export function scenarioContext(base: { stack: BenchStack; options: BenchOptions; fixtures: Fixtures; log(message: string): void }, name: string, signal: AbortSignal) {
  const open = new Set<WorkflowHandle>();
  const runTag = `${Date.now().toString(36)}`;
  let sequence = 0;
  const startWorkflow = async (workflowType: string, input: unknown, label: string, taskQueue = base.stack.taskQueue): Promise<WorkflowHandle> => {
    signal.throwIfAborted();
    const handle = await base.stack.client.workflow.start(workflowType, {
      taskQueue,
      workflowId: `bench-${name}-${label}-${runTag}-${++sequence}`,
      args: [input],
    });
    open.add(handle);
    return handle;
  };
  const ctx: ScenarioContext = {
    ...base,
    signal,
    log: (message) => base.log(`[${name}] ${message}`),
    startWorkflow,
    async runWorkflow<T>(workflowType: string, input: unknown, label: string, taskQueue?: string): Promise<WorkflowRun<T>> {
      const started = performance.now();
      const handle = await startWorkflow(workflowType, input, label, taskQueue);
      const result = await untilAborted(handle.result() as Promise<T>, signal);
      const ms = performance.now() - started;
      open.delete(handle);
      const history = await handle.fetchHistory();
      return { workflowId: handle.workflowId, result, ms, timings: historyTimings(history.events ?? []) };
    },
  };
  return {
    ctx,
    async close(): Promise<void> {
      for (const handle of open) {
        await handle.terminate('bench scenario ended').catch(() => undefined);
      }
      open.clear();
    },
  };
}

/** Resolves with `promise`, or rejects with the signal's reason once it aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
