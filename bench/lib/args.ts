/** Command line of `npm run bench -- [scenario …] [--size-mib N] …`, parsed into frozen options (pure). */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/** Every scenario, in the order they run. */
export const SCENARIOS = ['idle', 'upload', 'download', 'extract', 'poll-latency', 'long-job', 'concurrency', 'emulator', 'cli-start'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Default size of the generated CSV for upload, download and emulator (MiB). */
export const DEFAULT_SIZE_MIB = 1024;
/** Default pages of the extraction scenario. */
export const DEFAULT_PAGES = 5_000;
/** From this many pages on, the extraction runs in batch mode only (page mode would start one activity per page). */
export const LONG_RUN_PAGES = 20_000;
/** Default job durations of the poll-latency scenario (s). */
export const DEFAULT_DURATIONS_S = [2, 10, 30];
/** Default time compression of the long-job scenario: its 1-hour job is held 3600 / 30 = 120 s. */
export const DEFAULT_LONG_JOB_COMPRESSION = 30;
/** Default number of concurrent imports. */
export const DEFAULT_CONCURRENCY = 200;
/** Default time limit of one scenario (min). */
export const DEFAULT_TIMEOUT_MIN = 60;

export interface BenchOptions {
  scenarios: ScenarioName[];
  /** CSV size for upload and download (MiB). */
  sizeMiB: number;
  /** CSV size for the emulator scenario (MiB); default `sizeMiB`. */
  emulatorSizeMiB: number;
  pages: number;
  /** Extraction modes to measure: both up to {@link LONG_RUN_PAGES} pages, else batch only. */
  extractModes: Array<'batch' | 'page'>;
  /** Alternations: baseline, then (ours, baseline) × repeat. */
  repeat: number;
  durationsS: number[];
  /**
   * Time compression of the long-job scenario: its 1-hour job is held `3600 / n` s and every wait of the poll schedule
   * is divided by `n` (default {@link DEFAULT_LONG_JOB_COMPRESSION}).
   */
  longJobCompression: number;
  /**
   * Busy cores beside upload and download, one pass per value (`--load-cores 0,1`: unloaded, then with one busy core):
   * a child process each that spins on the CPU while that pass runs, baselines and ours alike. Default [0].
   */
  loadCores: number[];
  concurrency: number;
  /** Worker processes of the concurrency scenario, one batch per count (scale-out); default [1]. */
  workers: number[];
  /**
   * Imports started at once, untimed, on the concurrency scenario's first worker before its measured batches, and as
   * many runs at once on the SDK floor's worker before its measured batch (both sides alike): the batch is then
   * measured on warm workers (code compiled, heaps grown), as a worker in service runs. Default 0 (none).
   */
  warmUpBatch: number;
  timeoutMin: number;
  /** Where the stack and the generated files live; default a new folder under the system temp dir. */
  dataDir?: string;
  /** Keep `dataDir` afterwards (default: removed when the bench created it). */
  keep: boolean;
  /** Folder for the JSON results. */
  resultsDir: string;
  /** Where generated CSV files are kept between runs. */
  fixturesDir: string;
  /** Run the worker and the emulator through the ts-register hook instead of transpiled ahead of time. */
  tsHook: boolean;
  /** Write CPU profiles of the worker and the baseline processes to this folder. */
  profileDir?: string;
  /** Cap each S3 connection of the worker and the baselines at this many MB/s (throttling proxy); default none. */
  linkMBps?: number;
  /**
   * Another checkout of this repository (e.g. a `git worktree` of an older commit, with its own node_modules): a
   * second worker runs its sources on a task queue of its own, and upload and download alternate it with ours and
   * the baseline in the same run.
   */
  compareTree?: string;
}

/** Parses the arguments after `bench/run.ts`; throws a message naming the bad argument and what is accepted. */
export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      'size-mib': { type: 'string' },
      'emulator-size-mib': { type: 'string' },
      pages: { type: 'string' },
      modes: { type: 'string' },
      repeat: { type: 'string' },
      durations: { type: 'string' },
      'long-job-compression': { type: 'string' },
      'load-cores': { type: 'string' },
      concurrency: { type: 'string' },
      workers: { type: 'string' },
      'warm-up-batch': { type: 'string' },
      'timeout-min': { type: 'string' },
      'data-dir': { type: 'string' },
      'results-dir': { type: 'string' },
      'fixtures-dir': { type: 'string' },
      keep: { type: 'boolean' },
      'ts-hook': { type: 'boolean' },
      'profile-dir': { type: 'string' },
      'link-mbps': { type: 'string' },
      'compare-tree': { type: 'string' },
    },
  });
  const unknown = positionals.filter((p) => !(SCENARIOS as readonly string[]).includes(p));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.map((u) => JSON.stringify(u)).join(', ')}; choose from ${SCENARIOS.join(', ')}`);
  const scenarios = positionals.length ? SCENARIOS.filter((s) => positionals.includes(s)) : [...SCENARIOS];
  const sizeMiB = positiveNumber(values['size-mib'], '--size-mib', DEFAULT_SIZE_MIB);
  const pages = positiveInteger(values.pages, '--pages', DEFAULT_PAGES);
  const modes = values.modes === undefined ? (pages > LONG_RUN_PAGES ? ['batch'] : ['batch', 'page']) : values.modes.split(',').map((m) => m.trim());
  const badMode = modes.find((m) => m !== 'batch' && m !== 'page');
  if (badMode !== undefined) throw new Error(`--modes takes batch and/or page (comma-separated), got ${JSON.stringify(badMode)}`);
  const durations = values.durations === undefined ? DEFAULT_DURATIONS_S : values.durations.split(',').map((d) => positiveNumber(d.trim(), '--durations', 0));
  return Object.freeze({
    scenarios,
    sizeMiB,
    emulatorSizeMiB: positiveNumber(values['emulator-size-mib'], '--emulator-size-mib', sizeMiB),
    pages,
    extractModes: modes as Array<'batch' | 'page'>,
    repeat: positiveInteger(values.repeat, '--repeat', 1),
    durationsS: durations,
    longJobCompression: positiveNumber(values['long-job-compression'], '--long-job-compression', DEFAULT_LONG_JOB_COMPRESSION),
    loadCores: values['load-cores'] === undefined ? [0] : values['load-cores'].split(',').map((c) => nonNegativeInteger(c.trim(), '--load-cores')),
    concurrency: positiveInteger(values.concurrency, '--concurrency', DEFAULT_CONCURRENCY),
    workers: values.workers === undefined ? [1] : distinct(values.workers.split(',').map((w) => positiveInteger(w.trim(), '--workers', 1)), '--workers'),
    warmUpBatch: values['warm-up-batch'] === undefined ? 0 : positiveInteger(values['warm-up-batch'], '--warm-up-batch', 0),
    timeoutMin: positiveNumber(values['timeout-min'], '--timeout-min', DEFAULT_TIMEOUT_MIN),
    dataDir: values['data-dir'],
    keep: values.keep ?? false,
    tsHook: values['ts-hook'] ?? false,
    profileDir: values['profile-dir'],
    linkMBps: values['link-mbps'] === undefined ? undefined : positiveNumber(values['link-mbps'], '--link-mbps', 0),
    resultsDir: values['results-dir'] ?? 'bench-results',
    fixturesDir: values['fixtures-dir'] ?? join(tmpdir(), 'sapi-temporal-bench-fixtures'),
    compareTree: values['compare-tree'] === undefined ? undefined : resolve(values['compare-tree']),
  });
}

function positiveNumber(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

function nonNegativeInteger(raw: string, name: string): number {
  const n = Number(raw);
  if (raw === '' || !Number.isInteger(n) || n < 0) throw new Error(`${name} takes whole numbers ≥ 0 (comma-separated), got ${JSON.stringify(raw)}`);
  return n;
}

function positiveInteger(raw: string | undefined, name: string, fallback: number): number {
  const n = positiveNumber(raw, name, fallback);
  if (!Number.isInteger(n)) throw new Error(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * The run order of baseline (`B`) and ours (`O`) for `repeat` alternations: B, then (O, B) × repeat, so every
 * "ours" run sits between two baseline runs and slow drifts of the machine hit both sides. With a compare tree
 * (`C`, `--compare-tree`): B, then (O, C, B), (C, O, B), … so neither tree always runs first after the baseline.
 */
export function alternation(repeat: number, compare = false): Side[] {
  const order: Side[] = ['baseline'];
  for (let i = 0; i < repeat; i++) {
    if (!compare) order.push('ours', 'baseline');
    else order.push(...(i % 2 === 0 ? (['ours', 'compare'] as const) : (['compare', 'ours'] as const)), 'baseline');
  }
  return order;
}

/** Who runs a step of upload or download: the baseline, this tree's worker, or the `--compare-tree`'s worker. */
export type Side = 'baseline' | 'ours' | 'compare';

/** The list itself; a value given twice is refused (two batches of one worker count would share their tables). */
function distinct(values: number[], flag: string): number[] {
  const twice = values.find((v, i) => values.indexOf(v) !== i);
  if (twice !== undefined) throw new Error(`${flag} names ${twice} twice: each worker count runs once`);
  return values;
}
