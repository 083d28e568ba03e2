/**
 * Idle: the worker's RSS at rest after a warm-up (imports and an export of a small table: the workflow context, the
 * transfer paths and the clients loaded, as in a worker in service), next to an empty SDK worker started with the
 * same node flags, malloc settings and worker options (`bench/empty-worker-child.ts`: no plugin, no activities, a
 * one-workflow bundle, warmed up with a few runs of it): its RSS is the SDK's floor on this machine. A third process,
 * the empty worker with the plugin's workflow bundle (no run), shows what the bundle adds. Each RSS is read after a
 * full GC (`--expose-gc`, through the memory-report request file) and split by mapping (`/proc/<pid>/smaps`).
 * Target (issue 27): ours ≤ 150 MB, or the breakdown shows what the floor is.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ExportTableResult, ImportTableResult } from '../../src/contracts/transfer';
import type { Scenario, ScenarioContext } from '../lib/context';
import { kibToMb, readMemory, readRssBreakdown, type RssBreakdown } from '../lib/proc';
import { emptyWorkerEnv } from '../lib/empty-worker';
import { figure } from '../lib/report';

/** Target of issue 27: the idle worker's RSS (MB). */
export const IDLE_TARGET_MB = 150;
/** Target of issue 41: the idle worker's RSS above the empty SDK worker's (MB). */
export const ABOVE_FLOOR_TARGET_MB = 15;
/** Small imports of the warm-up. */
const WARM_UP_IMPORTS = 2;
/** Runs of the empty worker's workflow before it is measured. */
const EMPTY_WARM_UP_RUNS = 3;
/** Rest before a measurement: the last tasks' buffers go, the SDK's caches settle. */
const SETTLE_MS = 3_000;

interface MemoryReport {
  memoryUsage: NodeJS.MemoryUsage;
  heapSpaces?: { name: string; size: number; used: number }[];
}

interface IdleMemory {
  rssMb: number;
  heapTotalMb?: number;
  heapUsedMb?: number;
  externalMb?: number;
  /** Of the external memory, ArrayBuffers' (Buffers, WebAssembly memories). */
  arrayBuffersMb?: number;
  /** V8's heap spaces of the main thread (size, used), MB. */
  heapSpacesMb?: Record<string, { size: number; used: number }>;
  threads?: number;
  breakdown?: Record<string, number | Record<string, number>>;
}

export const idleScenario: Scenario = async (ctx) => {
  const { stack } = ctx;
  const csv = await ctx.fixtures.csv(1);
  for (let i = 1; i <= WARM_UP_IMPORTS; i++) {
    const run = await ctx.runWorkflow<ImportTableResult>(
      'importTableWorkflow',
      { source: csv.path, bucketId: 'in.c-bench', createBucket: true, table: `idle_warm_up_${i}` },
      'idle-warmup',
    );
    if (i === WARM_UP_IMPORTS) {
      const destination = join(stack.dataDir, 'idle-export.csv');
      await ctx.runWorkflow<ExportTableResult>('exportTableWorkflow', { tableId: run.result.tableId, destination, overwrite: true }, 'idle-warmup-export');
      rmSync(destination, { force: true });
    }
    await stack.storage.deleteTable({ tableId: run.result.tableId }).catch(() => undefined);
  }
  const ours = await idleMemory(ctx, stack.pids.worker, stack.workerMemoryReport);
  ctx.log(`ours idle: ${describe(ours)}`);

  const emptyBundle = join(stack.dataDir, 'empty-workflow-bundle.js');
  await stack.bundleWorkflows(resolve(__dirname, '..', 'empty-workflows'), emptyBundle);
  const measureEmpty = async (label: string, env: Record<string, string>, warmUp: boolean): Promise<IdleMemory> => {
    const taskQueue = `bench-${label}-${Date.now().toString(36)}`;
    const report = join(stack.dataDir, `${label}-memory.json`);
    const side = await stack.startSideProcess(label, 'bench/empty-worker-child.ts', {
      ...env,
      ...emptyWorkerEnv(),
      BENCH_EMPTY_BUNDLE: emptyBundle,
      BENCH_EMPTY_TASK_QUEUE: taskQueue,
      BENCH_MEMORY_REPORT: report,
    });
    try {
      for (let i = 0; warmUp && i < EMPTY_WARM_UP_RUNS; i++) {
        const handle = await stack.client.workflow.start('emptyWorkflow', { taskQueue, workflowId: `${taskQueue}-${i}`, args: [] });
        await handle.result();
      }
      return await idleMemory(ctx, side.pid, report);
    } finally {
      await side.stop();
    }
  };
  const empty = await measureEmpty('empty-sdk-worker', {}, true);
  ctx.log(`empty SDK worker idle: ${describe(empty)}`);
  const emptyOurs = await measureEmpty('empty-sdk-worker-our-bundle', { BENCH_EMPTY_OURS_BUNDLE: '1' }, false);
  ctx.log(`empty SDK worker with the plugin's workflow bundle (no run): ${describe(emptyOurs)}`);
  const note = (m: IdleMemory) => `V8 heap ${m.heapTotalMb ?? '?'} MB, external ${m.externalMb ?? '?'} MB, ${m.threads ?? '?'} threads`;
  return {
    figures: [
      figure({
        scenario: 'idle',
        metric: 'worker idle RSS vs empty SDK worker',
        unit: 'MB',
        ours: ours.rssMb,
        baseline: empty.rssMb,
        target: { on: 'ours', op: '<=', value: IDLE_TARGET_MB },
        note: `ours: ${note(ours)}; empty: ${note(empty)}`,
      }),
      figure({
        scenario: 'idle',
        metric: 'above the SDK floor',
        unit: 'MB',
        ours: Math.round((ours.rssMb - empty.rssMb) * 10) / 10,
        target: { on: 'ours', op: '<=', value: ABOVE_FLOOR_TARGET_MB },
        goal: 'issue 41 target 4',
        note: `the plugin's workflow bundle alone adds ${Math.round((emptyOurs.rssMb - empty.rssMb) * 10) / 10} MB (empty worker with it, no run)`,
      }),
    ],
    details: { ours, empty, emptyWithOurBundle: emptyOurs },
  };
};

/** A process's RSS at rest: after {@link SETTLE_MS}, one full GC (its memory report), then `/proc`. */
async function idleMemory(ctx: ScenarioContext, pid: number, reportPath: string): Promise<IdleMemory> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  rmSync(reportPath, { force: true });
  let report: MemoryReport | undefined;
  try {
    writeFileSync(`${reportPath}.request`, '');
    for (let i = 0; i < 50 && !existsSync(reportPath); i++) await new Promise((r) => setTimeout(r, 100));
    report = JSON.parse(readFileSync(reportPath, 'utf8')) as MemoryReport;
  } catch (err) {
    ctx.log(`no memory report from pid ${pid}: ${err instanceof Error ? err.message : String(err)}`);
  }
  await new Promise((r) => setTimeout(r, 500)); // the GC's freed pages back to the system
  const memory = readMemory(pid);
  const b: RssBreakdown | undefined = readRssBreakdown(pid);
  const mb = (bytes: number | undefined) => (bytes === undefined ? undefined : Math.round(bytes / 1e5) / 10);
  return {
    rssMb: kibToMb(memory?.rssKiB ?? 0),
    heapTotalMb: mb(report?.memoryUsage.heapTotal),
    heapUsedMb: mb(report?.memoryUsage.heapUsed),
    externalMb: mb(report?.memoryUsage.external),
    arrayBuffersMb: mb(report?.memoryUsage.arrayBuffers),
    heapSpacesMb: report?.heapSpaces && Object.fromEntries(report.heapSpaces.map((s) => [s.name, { size: mb(s.size)!, used: mb(s.used)! }])),
    threads: memory?.threads,
    breakdown: b && {
      anonymousMb: kibToMb(b.anonymousKiB),
      brkHeapMb: kibToMb(b.brkHeapKiB),
      nodeBinaryMb: kibToMb(b.nodeBinaryKiB),
      addonsMb: Object.fromEntries(Object.entries(b.addonsKiB).map(([name, kib]) => [name, kibToMb(kib)])),
      otherFilesMb: kibToMb(b.otherFilesKiB),
    },
  };
}

function describe(m: IdleMemory): string {
  return `RSS ${m.rssMb} MB; V8 heap ${m.heapTotalMb} MB (used ${m.heapUsedMb}), external ${m.externalMb} MB (ArrayBuffers ${m.arrayBuffersMb}), ${m.threads} threads; by mapping ${JSON.stringify(m.breakdown)}`;
}
