/**
 * `npm run bench -- [upload] [download] [extract] [poll-latency] [concurrency] [emulator] [idle] [cli-start] [--size-mib 1024] …`
 *
 * Starts one stack (Temporal dev server, MinIO, the emulator and a worker in their own processes) in a temp folder,
 * runs the chosen scenarios one after another, each against a baseline measured in the same run, prints a table
 * and writes `bench-results/<timestamp>.json`. See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseBenchArgs, type BenchOptions, type ScenarioName } from './lib/args';
import { Fixtures, scenarioContext, untilAborted, type Scenario, type ScenarioResult } from './lib/context';
import { loadLabel, startCpuLoad } from './lib/load';
import { describeError, fileTimestamp, formatGoals, formatTable, ISSUE_41_GOALS, type Figure } from './lib/report';
import { startBenchStack, type BenchStack } from './lib/stack';
import { MIB } from './lib/stats';
import { cliStartScenario } from './scenarios/cli-start';
import { concurrencyScenario } from './scenarios/concurrency';
import { downloadScenario } from './scenarios/download';
import { emulatorScenario } from './scenarios/emulator';
import { extractScenario } from './scenarios/extract';
import { idleScenario } from './scenarios/idle';
import { longJobScenario } from './scenarios/long-job';
import { pollLatencyScenario } from './scenarios/poll-latency';
import { uploadScenario } from './scenarios/upload';

// the AWS SDK's multi-line notice about future releases needing Node 22 (ours are pinned) only clutters the log;
// the bench's child processes inherit this too
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const repoRoot = resolve(__dirname, '..');

/** Slices of the download scenario's export: at least 16 are required, aim for 20 (the export differs in size a bit). */
export const TARGET_EXPORT_SLICES = 20;

/** Scenarios run once per `--load-cores` value. */
const LOADED_SCENARIOS = new Set<ScenarioName>(['upload', 'download']);

const scenarios: Partial<Record<ScenarioName, Scenario>> = {
  upload: uploadScenario,
  download: downloadScenario,
  extract: extractScenario,
  'poll-latency': pollLatencyScenario,
  'long-job': longJobScenario,
  concurrency: concurrencyScenario,
  emulator: emulatorScenario,
  idle: idleScenario,
  'cli-start': cliStartScenario,
};

function log(message: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
}

/** Whether `extractWorkflow` is exported by the plugin's workflow module (it is being written in parallel). */
function extractAvailable(): boolean {
  return /\bextractWorkflow\b/.test(readFileSync(join(repoRoot, 'src', 'workflows', 'index.ts'), 'utf8'));
}

function gitCommit(): string | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${commit}+dirty` : commit;
  } catch {
    return undefined;
  }
}

/** Tracked files with uncommitted changes (others work in this tree in parallel: the run measured those too). */
function uncommittedFiles(): string[] {
  try {
    return execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
  } catch {
    return [];
  }
}

async function main(options: BenchOptions): Promise<number> {
  const startedAt = new Date();
  const selected = options.scenarios.filter((name) => {
    if (name === 'extract' && !extractAvailable()) {
      log('extract: skipped, src/workflows/index.ts does not export extractWorkflow yet');
      return false;
    }
    if (!scenarios[name]) {
      log(`${name}: skipped, not implemented in this bench`);
      return false;
    }
    return true;
  });
  if (selected.length === 0) {
    log('nothing to run');
    return 1;
  }
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ? resolve(options.dataDir) : mkdtempSync(join(tmpdir(), 'sapi-temporal-bench-'));
  const sliceSizeBytes = selected.includes('download') ? Math.floor((options.sizeMiB * MIB) / TARGET_EXPORT_SLICES) : undefined;
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    totalMemMb: Math.round(totalmem() / 1e6),
    loadavgAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
  };
  log(`bench ${selected.join(', ')} | size ${options.sizeMiB} MiB | ${machine.cpus} CPUs, load ${machine.loadavgAtStart.join(' ')} | data ${dataDir}`);

  const figures: Figure[] = [];
  const results: Record<string, ScenarioResult | { error: string }> = {};
  const timings: Record<string, { startedAt: string; seconds: number; loadavgBefore: number[]; loadavgAfter: number[] }> = {};
  let stack: BenchStack | undefined;
  const interrupted = new AbortController();
  const onSignal = () => {
    log('interrupted: stopping the current scenario and the stack …');
    interrupted.abort(new Error('interrupted'));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    stack = await startBenchStack({
      dataDir,
      sliceSizeBytes,
      runtime: options.tsHook ? 'ts-hook' : 'compiled',
      profileDir: options.profileDir,
      linkBytesPerSecond: options.linkMBps === undefined ? undefined : options.linkMBps * 1e6,
      localRoots: [options.fixturesDir],
      compareTree: options.compareTree,
      log,
    });
    const fixtures = new Fixtures(stack, options.fixturesDir, log);
    // upload and download run once per --load-cores value (unloaded, then beside busy cores); the others once, unloaded
    const passes = selected.flatMap((name) => (LOADED_SCENARIOS.has(name) ? options.loadCores : [0]).map((cores) => ({ name, cores })));
    for (const { name, cores } of passes) {
      if (interrupted.signal.aborted) break;
      const key = `${name}${loadLabel(cores)}`;
      const limit = AbortSignal.timeout(options.timeoutMin * 60_000);
      const signal = AbortSignal.any([limit, interrupted.signal]);
      setMaxListeners(0, signal); // one listener per awaited workflow (200 concurrent imports)
      const { ctx, close } = scenarioContext({ stack, options, fixtures, log }, name, signal);
      const began = Date.now();
      const loadavgBefore = loadavg().map((l) => Math.round(l * 100) / 100);
      const load = startCpuLoad(cores);
      log(`=== ${key} (time limit ${options.timeoutMin} min, load ${loadavgBefore.join(' ')}${cores ? `; busy processes ${load.pids.join(', ')}` : ''})`);
      try {
        // a step that does not watch the signal (a baseline transfer) must not hold the run past the limit
        const result = await untilAborted(scenarios[name]!(ctx), signal);
        results[key] = result;
        figures.push(...result.figures.map((f) => (cores ? { ...f, metric: `${f.metric}${loadLabel(cores)}` } : f)));
      } catch (err) {
        const message = signal.aborted && limit.aborted ? `time limit of ${options.timeoutMin} min reached` : describeError(err);
        log(`${key} FAILED: ${message}`);
        results[key] = { error: message };
        figures.push({
          scenario: name,
          metric: `FAILED${loadLabel(cores)}`,
          unit: '',
          note: message
            .split('\n')
            .filter((l) => !l.startsWith('    at '))
            .at(-1)!
            .slice(0, 160),
        });
      } finally {
        await load.stop();
        await close();
      }
      timings[key] = {
        startedAt: new Date(began).toISOString(),
        seconds: Math.round((Date.now() - began) / 1000),
        loadavgBefore,
        loadavgAfter: loadavg().map((l) => Math.round(l * 100) / 100),
      };
      log(`=== ${key} done in ${timings[key].seconds} s`);
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await stack?.stop().catch((err: unknown) => log(`stopping the stack: ${String(err)}`));
    if (ownDataDir && !options.keep) rmSync(dataDir, { recursive: true, force: true });
    else log(`data kept in ${dataDir}`);
  }

  const table = formatTable(figures);
  process.stdout.write(
    `\n${table}\n\nTargets of issue 41 (load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}):\n${formatGoals(figures, ISSUE_41_GOALS)}\n\n`,
  );
  const resultsDir = resolve(repoRoot, options.resultsDir);
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${fileTimestamp(startedAt)}.json`);
  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commit: gitCommit(),
    uncommitted: uncommittedFiles(),
    argv: process.argv.slice(2),
    options,
    machine: { ...machine, loadavgAtEnd: loadavg().map((l) => Math.round(l * 100) / 100) },
    figures,
    scenarios: results,
    timings,
  };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  log(`results written to ${file}`);
  return Object.values(results).some((r) => 'error' in r) ? 1 : 0;
}

let options: BenchOptions;
try {
  options = parseBenchArgs(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
main(options).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
