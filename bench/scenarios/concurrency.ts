/**
 * Concurrency: N (default 200) small imports started at once, each into its own table, on 1 worker process and,
 * with `--workers 1,2,4`, again on 2 and 4 processes polling the same task queue (scale-out). All must succeed with
 * every row; reported per worker count: total time (first start → last result), per-import latency percentiles and
 * the peak RSS of each worker process. Baseline, measured first in the same run: one import alone (median of 3);
 * "N × alone" is what running them one after another would take. After those 3 imports (the warm-up) the first
 * worker's idle RSS is reported with where it goes: V8 heap of the main isolate, external buffers, and the rest of
 * the process by mapping (`/proc/<pid>/smaps`).
 */
import { emptyWorkerEnv } from '../lib/empty-worker';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { ImportTableResult } from '../../src/contracts/transfer';
import type { ScenarioContext, Scenario } from '../lib/context';
import { untilAborted } from '../lib/context';
import { measure } from '../lib/measure';
import { kibToMb, readMemory, readRssBreakdown, RssSampler, type RssBreakdown } from '../lib/proc';
import { figure, type Figure } from '../lib/report';
import { median, percentile } from '../lib/stats';
import { ensureBucket } from '../lib/storage-ops';
import { runNode } from '../lib/stack';
import { historyShape, type HistoryShape } from '../../test/harness/history';
import type { ImportsBaselineCommand, ImportsBaselineResult } from '../imports-baseline-child';

/** Size of each imported CSV (MiB): ~50 KB, about 700 rows. */
export const SMALL_CSV_MIB = 0.05;
/** Targets of issue 14: every import succeeds; one worker's peak RSS ≤ 400 MB with 1,000 in flight; idle ≤ 200 MB. */
export const WORKER_PEAK_TARGET_MB = 400;
export const WORKER_IDLE_TARGET_MB = 200;
/** Targets of issue 27 for small imports (200 concurrent 50 KB imports, one worker). */
export const SMALL_IMPORTS_PER_SECOND_TARGET = 10;
export const WORKER_CPU_MS_PER_IMPORT_TARGET = 50;
/** The shape issue 41 keeps (issue 27 allowed 4 activity tasks and 1 timer). */
export const ACTIVITY_TASKS_PER_IMPORT_TARGET = 2;
export const TIMERS_PER_IMPORT_TARGET = 0;
export const EVENTS_PER_IMPORT_TARGET = 30;
/** Targets of issue 41 against the SDK floor (the same shape with no-op activities, same run). */
export const FLOOR_CPU_TARGET = 1.3;
export const FLOOR_RATE_TARGET = 0.9;

export const concurrencyScenario: Scenario = async (ctx) => {
  const { options } = ctx;
  const count = options.concurrency;
  const csv = await ctx.fixtures.csv(SMALL_CSV_MIB);
  const tag = Date.now().toString(36);

  const aloneMs: number[] = [];
  for (let i = 1; i <= 3; i++) {
    const run = await ctx.runWorkflow<ImportTableResult>(
      'importTableWorkflow',
      { source: csv.path, bucketId: 'in.c-conc', createBucket: true, table: `alone_${tag}_${i}` },
      'alone',
    );
    aloneMs.push(run.timings.closedMs! - run.timings.startedMs!);
  }
  const alone = median(aloneMs)!;
  ctx.log(`one import alone: ${aloneMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s → median ${(alone / 1000).toFixed(2)} s`);

  const idle = await idleMemory(ctx);
  ctx.log(`worker idle after warm-up: ${describeIdle(idle)}`);
  const figures: Figure[] = [
    figure({
      scenario: 'concurrency',
      metric: 'worker idle RSS after warm-up',
      unit: 'MB',
      ours: kibToMb(idle.rssKiB),
      target: { on: 'ours', op: '<=', value: WORKER_IDLE_TARGET_MB },
      note: idle.breakdown
        ? `V8 heap ${mb(idle.report?.memoryUsage.heapTotal)}, anon ${kibToMb(idle.breakdown.anonymousKiB)}, code ${kibToMb(idle.breakdown.nodeBinaryKiB + idle.breakdown.otherFilesKiB + sum(idle.breakdown.addonsKiB))} MB`
        : '',
    }),
  ];
  const batches: Record<string, unknown> = {};
  if (options.warmUpBatch) batches.warmUp = await warmUpBatch(ctx, options.warmUpBatch, csv.path, csv.rows, `w_${tag}`);
  for (const workers of options.workers) {
    const batch = await runBatch(ctx, { count, workers, table: `t_${tag}_w${workers}`, rows: csv.rows, source: csv.path });
    const label = workers === 1 ? '' : ` on ${workers} workers`;
    figures.push(
      figure({
        scenario: 'concurrency',
        metric: `imports succeeded of ${count}${label}`,
        unit: '',
        ours: batch.succeeded,
        target: { on: 'ours', op: '>=', value: count },
      }),
      figure({
        scenario: 'concurrency',
        metric: `total time for ${count}${label}`,
        unit: 's',
        ours: batch.totalMs / 1000,
        baseline: (count * alone) / 1000,
        note: `baseline: ${count} × one import alone (${(alone / 1000).toFixed(2)} s)`,
      }),
      figure({
        scenario: 'concurrency',
        metric: `import latency p95${label}`,
        unit: 's',
        ours: (batch.latencyMs.p95 ?? 0) / 1000,
        baseline: alone / 1000,
        note: 'baseline: one import alone',
      }),
      figure({
        scenario: 'concurrency',
        metric: `worker peak RSS${workers === 1 ? '' : ` (largest of ${workers})`}`,
        unit: 'MB',
        ours: Math.max(...batch.workerPeakMb),
        baseline: kibToMb(idle.rssKiB),
        note: 'baseline: worker RSS at idle',
        ...(workers === 1 ? { target: { on: 'ours' as const, op: '<=' as const, value: WORKER_PEAK_TARGET_MB } } : {}),
      }),
    );
    batches[`workers${workers}`] = batch;
    if (workers === 1) {
      const costs = await smallImportCosts(ctx, batch, count, csv.path, tag);
      figures.push(...costs.figures);
      batches.costs = costs.details;
      const floor = await sdkFloor(ctx, costs.ours, count, options.warmUpBatch);
      figures.push(...floor.figures);
      batches.floor = floor.details;
    }
  }
  return {
    figures,
    details: { count, csvBytes: csv.bytes, rows: csv.rows, aloneMs, idle, batches, workerSettings: workerSettingsFromEnv() },
  };
};

/** One batch of `count` imports started at once, with `workers` worker processes polling (extra ones started here). */
async function runBatch(ctx: ScenarioContext, input: { count: number; workers: number; table: string; rows: number; source: string }) {
  const { stack } = ctx;
  const extras = [];
  try {
    for (let i = 1; i < input.workers; i++) extras.push(await stack.startExtraWorker());
    if (extras.length) ctx.log(`${extras.length} more worker process(es) started (pids ${extras.map((e) => e.pid).join(', ')})`);
    const samplers = extras.map((e) => new RssSampler(e.pid).start());
    ctx.log(`starting ${input.count} imports at once on ${input.workers} worker(s) …`);
    const latencies: number[] = [];
    const failures: string[] = [];
    const run = await measure(stack, async () => {
      const started = performance.now();
      const handles: Array<{ handle: WorkflowHandle; startMs: number }> = await Promise.all(
        Array.from({ length: input.count }, async (_, i) => {
          const startMs = performance.now();
          const handle = await ctx.startWorkflow(
            'importTableWorkflow',
            { source: input.source, bucketId: 'in.c-conc', createBucket: true, table: `${input.table}_${i}` },
            'concurrent',
          );
          return { handle, startMs };
        }),
      );
      const startedAllMs = performance.now() - started;
      await Promise.all(
        handles.map(async ({ handle, startMs }) => {
          try {
            const result = (await untilAborted(handle.result(), ctx.signal)) as ImportTableResult;
            if (result.importedRowsCount !== input.rows) failures.push(`${handle.workflowId}: ${result.importedRowsCount} rows, expected ${input.rows}`);
            latencies.push(performance.now() - startMs);
          } catch (err) {
            failures.push(`${handle.workflowId}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }),
      );
      return { startedAllMs, handles };
    });
    const handles = run.value.handles;
    const workerPeakMb = [kibToMb(run.worker.peakKiB), ...samplers.map((s) => kibToMb(s.stop().peakKiB))];
    // one run's history shows what an import costs in Temporal terms (all runs of a batch take the same path)
    const sample = handles[0]?.handle;
    const shape = sample ? historyShape((await sample.fetchHistory()).events ?? []) : undefined;
    const latencyMs = { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: percentile(latencies, 100) };
    const succeeded = input.count - failures.length;
    ctx.log(
      `${succeeded}/${input.count} succeeded on ${input.workers} worker(s) in ${(run.ms / 1000).toFixed(1)} s (all started after ${(run.value.startedAllMs / 1000).toFixed(1)} s); ` +
        `latency p50 ${((latencyMs.p50 ?? 0) / 1000).toFixed(1)} s, p95 ${((latencyMs.p95 ?? 0) / 1000).toFixed(1)} s; ` +
        `worker peak ${workerPeakMb.join(', ')} MB; cpu [user, sys] s ${JSON.stringify(run.cpuSplit)}`,
    );
    if (failures.length) ctx.log(`failures (first 5): ${failures.slice(0, 5).join(' | ')}`);
    return {
      workers: input.workers,
      succeeded,
      totalMs: Math.round(run.ms),
      startedAllMs: Math.round(run.value.startedAllMs),
      latencyMs,
      workerPeakMb,
      failures,
      cpuSeconds: run.cpuSeconds,
      cpuSplit: run.cpuSplit,
      emulatorPeakMb: kibToMb(run.emulator.peakKiB),
      shape,
    };
  } finally {
    await Promise.all(extras.map((e) => e.stop()));
  }
}

/**
 * `--warm-up-batch N`: N imports at once on the first worker, untimed, before the measured batches (the SDK floor's
 * worker gets as many runs at once before its own): a worker in service has compiled its code and grown its heaps.
 */
async function warmUpBatch(ctx: ScenarioContext, count: number, source: string, rows: number, table: string) {
  ctx.log(`warm-up batch: ${count} imports at once, untimed …`);
  const started = performance.now();
  const handles = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      ctx.startWorkflow('importTableWorkflow', { source, bucketId: 'in.c-conc', createBucket: true, table: `${table}_${i}` }, 'warm-up'),
    ),
  );
  const results = await Promise.all(handles.map((h) => untilAborted(h.result(), ctx.signal) as Promise<ImportTableResult>));
  const wrong = results.filter((r) => r.importedRowsCount !== rows).length;
  if (wrong) throw new Error(`warm-up batch: ${wrong} of ${count} imports did not import ${rows} rows`);
  const ms = Math.round(performance.now() - started);
  ctx.log(`warm-up batch: ${count} in ${(ms / 1000).toFixed(1)} s`);
  return { count, ms };
}

interface WorkerMemoryReport {
  gcBeforeReport: boolean;
  memoryUsage: NodeJS.MemoryUsage;
  heapLimit: number;
  heapSpaces: Array<{ name: string; size: number; used: number }>;
  mallocedMemory: number;
  externalMemory: number;
}

/** The first worker's RSS at rest, its `/proc` breakdown and its own figures (asked for through a request file, after a GC). */
async function idleMemory(ctx: ScenarioContext): Promise<{ rssKiB: number; breakdown?: RssBreakdown; report?: WorkerMemoryReport }> {
  const { stack } = ctx;
  await new Promise((r) => setTimeout(r, 2000)); // let the last tasks' buffers go
  rmSync(stack.workerMemoryReport, { force: true });
  let report: WorkerMemoryReport | undefined;
  try {
    writeFileSync(`${stack.workerMemoryReport}.request`, '');
    for (let i = 0; i < 50 && !existsSync(stack.workerMemoryReport); i++) await new Promise((r) => setTimeout(r, 100));
    report = JSON.parse(readFileSync(stack.workerMemoryReport, 'utf8')) as WorkerMemoryReport;
  } catch (err) {
    ctx.log(`no memory report from the worker: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { rssKiB: readMemory(stack.pids.worker)?.rssKiB ?? 0, breakdown: readRssBreakdown(stack.pids.worker), report };
}

function describeIdle(idle: Awaited<ReturnType<typeof idleMemory>>): string {
  const parts = [`RSS ${kibToMb(idle.rssKiB)} MB`];
  const u = idle.report?.memoryUsage;
  if (u) parts.push(`main isolate heap ${mb(u.heapTotal)} MB (used ${mb(u.heapUsed)}), external ${mb(u.external)} MB (array buffers ${mb(u.arrayBuffers)})`);
  const b = idle.breakdown;
  if (b) {
    const addons = Object.entries(b.addonsKiB)
      .map(([name, kib]) => `${name} ${kibToMb(kib)}`)
      .join(', ');
    parts.push(
      `by mapping: anonymous ${kibToMb(b.anonymousKiB)} MB, brk heap ${kibToMb(b.brkHeapKiB)} MB, node binary ${kibToMb(b.nodeBinaryKiB)} MB, addons [${addons}] MB, other files ${kibToMb(b.otherFilesKiB)} MB`,
    );
  }
  return parts.join('; ');
}

const mb = (bytes: number | undefined): number => Math.round((bytes ?? 0) / 1e5) / 10;
const sum = (values: Record<string, number>): number => Object.values(values).reduce((a, b) => a + b, 0);

/** The worker tuning variables the run had (they pass to the worker processes through the environment). */
function workerSettingsFromEnv(): Record<string, string | undefined> {
  const names = ['SAPI_MAX_CACHED_WORKFLOWS', 'SAPI_MAX_CONCURRENT_ACTIVITIES', 'SAPI_MAX_CONCURRENT_WORKFLOW_TASKS', 'NODE_OPTIONS', 'MALLOC_ARENA_MAX'];
  return Object.fromEntries(names.map((n) => [n, process.env[n]]));
}

type Batch = Awaited<ReturnType<typeof runBatch>>;

/** What one worker's batch of small imports cost: imports per second, worker CPU per import, Temporal's CPU seconds. */
interface BatchCosts {
  rate: number;
  workerCpuMs: number;
  temporalCpuS: number;
}

/**
 * Issue 27's figures of the one-worker batch, with the "bare" baseline beside them: the same Storage calls (prepare,
 * one PutObject, tables-async, polls) in a plain async loop in its own process, `count` at once, with every process's
 * CPU measured around it as around the batch. The difference is the orchestration's share (Temporal, the worker,
 * the workflow's checks and bookkeeping). Activity tasks, timers and events per import come from one run's history.
 */
async function smallImportCosts(
  ctx: ScenarioContext,
  batch: Batch,
  count: number,
  source: string,
  tag: string,
): Promise<{ figures: Figure[]; ours: BatchCosts; details: Record<string, unknown> }> {
  const { stack } = ctx;
  const bucketId = await ensureBucket(stack.storage, 'bare');
  const command: ImportsBaselineCommand = {
    sapiUrl: stack.sapiUrl,
    token: stack.token,
    s3Endpoint: stack.s3Endpoint,
    region: stack.minio.region,
    csvPath: source,
    bucketId,
    tablePrefix: `bare_${tag}`,
    count,
  };
  const compiled = join(stack.dataDir, 'compiled', 'bench', 'imports-baseline-child.js');
  const hook = !existsSync(compiled);
  const script = hook ? resolve(__dirname, '..', 'imports-baseline-child.ts') : compiled;
  ctx.log(`bare baseline: ${count} imports at once in a plain loop (own process) …`);
  const bare = await measure(stack, async () => {
    const stdout = await runNode([script], { hook, timeoutMs: 30 * 60_000, env: { BENCH_IMPORTS_BASELINE: JSON.stringify(command) } });
    const line = /^IMPORTS_BASELINE_RESULT (.+)$/m.exec(stdout);
    if (!line) throw new Error(`imports-baseline-child printed no result; stdout: ${stdout.slice(-500)}`);
    return JSON.parse(line[1]!) as ImportsBaselineResult;
  });
  const b = bare.value;
  const bareCpuMs = ((b.cpu.user + b.cpu.system) * 1000) / count;
  const bareRate = (count / b.ms) * 1000;
  const bareP95 = percentile(b.latencyMs, 95) ?? 0;
  const ours: BatchCosts = {
    rate: (count / batch.totalMs) * 1000,
    workerCpuMs: ((batch.cpuSeconds.worker ?? 0) * 1000) / count,
    temporalCpuS: batch.cpuSeconds.temporal ?? 0,
  };
  const shape: HistoryShape | undefined = batch.shape;
  ctx.log(
    `bare: ${count} in ${(b.ms / 1000).toFixed(1)} s (${bareRate.toFixed(1)}/s), p95 ${(bareP95 / 1000).toFixed(1)} s, its CPU ${bareCpuMs.toFixed(1)} ms per import; ` +
      `cpu s around it ${JSON.stringify(bare.cpuSeconds)}; ours ${ours.rate.toFixed(1)}/s, worker ${ours.workerCpuMs.toFixed(1)} ms CPU per import, Temporal ${ours.temporalCpuS} CPU-s; ` +
      `one import's history: ${JSON.stringify(shape)}`,
  );
  const share = (oursValue: number, bareValue: number) => (oursValue > 0 ? `orchestration's share ${Math.round((1 - bareValue / oursValue) * 100)} %` : '');
  const bareTemporalFree = 'baseline: the bare loop (no Temporal)';
  const figures: Figure[] = [
    figure({
      scenario: 'concurrency',
      metric: `small imports per second (${count} at once, 1 worker)`,
      unit: '/s',
      ours: ours.rate,
      baseline: bareRate,
      target: { on: 'ours', op: '>=', value: SMALL_IMPORTS_PER_SECOND_TARGET },
      note: `${bareTemporalFree}; ${share(1 / ours.rate, 1 / bareRate)} of the time`,
    }),
    figure({
      scenario: 'concurrency',
      metric: 'small import latency p95 vs bare',
      unit: 's',
      ours: (batch.latencyMs.p95 ?? 0) / 1000,
      baseline: bareP95 / 1000,
      note: bareTemporalFree,
    }),
    figure({
      scenario: 'concurrency',
      metric: 'worker CPU per small import',
      unit: 'ms',
      ours: ours.workerCpuMs,
      baseline: bareCpuMs,
      target: { on: 'ours', op: '<=', value: WORKER_CPU_MS_PER_IMPORT_TARGET },
      note: `baseline: the bare loop's own CPU; ${share(ours.workerCpuMs, bareCpuMs)} of the client-side CPU`,
    }),
    figure({
      scenario: 'concurrency',
      metric: 'Temporal server CPU per small import',
      unit: 'ms',
      ours: (ours.temporalCpuS * 1000) / count,
      note: `${ours.temporalCpuS} CPU-s for ${count}; emulator ${batch.cpuSeconds.emulator ?? '?'} CPU-s (bare: ${bare.cpuSeconds.emulator ?? '?'}), MinIO ${batch.cpuSeconds.minio ?? '?'} (bare: ${bare.cpuSeconds.minio ?? '?'})`,
    }),
  ];
  if (shape) {
    const note = `one run's history: ${shape.activityTypes.join(', ') || 'no activity'}; ${shape.workflowTasks} workflow tasks, ${shape.markers} markers`;
    figures.push(
      figure({
        scenario: 'concurrency',
        metric: 'activity tasks per small import',
        unit: '',
        ours: shape.activityTasks,
        target: { on: 'ours', op: '<=', value: ACTIVITY_TASKS_PER_IMPORT_TARGET },
        goal: 'issue 41 target 1',
        note,
      }),
      figure({
        scenario: 'concurrency',
        metric: 'timers per small import',
        unit: '',
        ours: shape.timers,
        target: { on: 'ours', op: '<=', value: TIMERS_PER_IMPORT_TARGET },
        goal: 'issue 41 target 1',
      }),
      figure({
        scenario: 'concurrency',
        metric: 'history events per small import',
        unit: '',
        ours: shape.events,
        target: { on: 'ours', op: '<=', value: EVENTS_PER_IMPORT_TARGET },
        goal: 'issue 41 target 1',
      }),
    );
  }
  return {
    figures,
    ours,
    details: { bare: { ...b, latencyMs: { p50: percentile(b.latencyMs, 50), p95: bareP95 } }, bareCpuSeconds: bare.cpuSeconds, ours, shape },
  };
}

/** Runs of the floor's workflow before it is measured. */
const FLOOR_WARM_UP_RUNS = 3;

/**
 * The orchestration's floor for a small import's shape: `count` runs at once of `importShapeWorkflow`
 * (bench/empty-workflows: the same events as a small import on the short path, no-op activities) on an empty SDK
 * worker with the `sapi-temporal worker` command's options and node flags (`bench/empty-worker-child.ts`), with every
 * process's CPU measured around it as around the batch. What the worker and Temporal spend on it is what any plugin
 * pays for that shape on this machine; ours minus it is what the plugin's own work costs.
 */
async function sdkFloor(
  ctx: ScenarioContext,
  ours: BatchCosts,
  count: number,
  warmUpBatch: number,
): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
  const { stack } = ctx;
  const bundle = join(stack.dataDir, 'empty-workflow-bundle.js');
  if (!existsSync(bundle)) await stack.bundleWorkflows(resolve(__dirname, '..', 'empty-workflows'), bundle);
  const taskQueue = `bench-floor-${Date.now().toString(36)}`;
  const side = await stack.startSideProcess('sdk-floor-worker', 'bench/empty-worker-child.ts', {
    ...emptyWorkerEnv(),
    BENCH_EMPTY_BUNDLE: bundle,
    BENCH_EMPTY_TASK_QUEUE: taskQueue,
    BENCH_EMPTY_FLOOR: '1',
    BENCH_MEMORY_REPORT: join(stack.dataDir, 'sdk-floor-memory.json'),
  });
  try {
    const runOne = async (id: string) =>
      stack.client.workflow.start('importShapeWorkflow', { taskQueue, workflowId: `${taskQueue}-${id}`, args: [{ table: `in.c-floor.t_${id}` }] });
    for (let i = 0; i < FLOOR_WARM_UP_RUNS; i++) await (await runOne(`warm-${i}`)).result();
    if (warmUpBatch) {
      ctx.log(`SDK floor: warm-up batch of ${warmUpBatch} runs at once, untimed …`);
      const warm = await Promise.all(Array.from({ length: warmUpBatch }, (_, i) => runOne(`warm-batch-${i}`)));
      await Promise.all(warm.map((h) => untilAborted(h.result(), ctx.signal)));
    }
    ctx.log(`SDK floor: ${count} runs of the small import's shape (no-op activities) at once on an empty SDK worker …`);
    const run = await measure(
      stack,
      async () => {
        const handles = await Promise.all(Array.from({ length: count }, (_, i) => runOne(String(i))));
        await Promise.all(handles.map((h) => untilAborted(h.result(), ctx.signal)));
        return handles[0];
      },
      side.pid,
    );
    const shape = run.value ? historyShape((await run.value.fetchHistory()).events ?? []) : undefined;
    const rate = (count / run.ms) * 1000;
    const workerCpuMs = ((run.cpuSeconds.worker ?? 0) * 1000) / count;
    const temporalCpuMs = ((run.cpuSeconds.temporal ?? 0) * 1000) / count;
    ctx.log(
      `SDK floor: ${count} in ${(run.ms / 1000).toFixed(1)} s (${rate.toFixed(1)}/s), worker ${workerCpuMs.toFixed(1)} ms CPU per run, Temporal ${temporalCpuMs.toFixed(1)} ms per run; ` +
        `cpu [user, sys] s ${JSON.stringify(run.cpuSplit)}; one run's history: ${JSON.stringify(shape)}`,
    );
    const note = `baseline: the same Temporal shape (${shape ? `${shape.events} events, ${shape.activityTasks} activity tasks, ${shape.workflowTasks} workflow tasks` : '?'}) with no-op activities on an empty SDK worker`;
    return {
      figures: [
        figure({
          scenario: 'concurrency',
          metric: `small imports per second vs SDK floor (${count} at once)`,
          unit: '/s',
          ours: ours.rate,
          baseline: rate,
          target: { on: 'ratio', op: '>=', value: FLOOR_RATE_TARGET },
          goal: 'issue 41 target 1',
          note,
        }),
        figure({
          scenario: 'concurrency',
          metric: 'worker CPU per small import vs SDK floor',
          unit: 'ms',
          ours: ours.workerCpuMs,
          baseline: workerCpuMs,
          target: { on: 'ratio', op: '<=', value: FLOOR_CPU_TARGET },
          goal: 'issue 41 target 1',
          note: `${note}; above the floor: ${(ours.workerCpuMs - workerCpuMs).toFixed(0)} ms`,
        }),
        figure({
          scenario: 'concurrency',
          metric: 'Temporal server CPU per small import vs SDK floor',
          unit: 'ms',
          ours: (ours.temporalCpuS * 1000) / count,
          baseline: temporalCpuMs,
          note,
        }),
      ],
      details: { ms: Math.round(run.ms), rate, workerCpuMs, temporalCpuMs, cpuSplit: run.cpuSplit, shape },
    };
  } finally {
    await side.stop();
  }
}
