/**
 * Concurrency: N (default 200) small imports started at once on the one worker, each into its own table. All must
 * succeed with every row; reported: total time (first start → last result), per-import latency percentiles and the
 * worker's peak RSS. Baseline, measured first in the same run: one import alone (median of 3); "200 × alone" is what
 * running them one after another would take.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { ImportTableResult } from '../../src/contracts/transfer';
import type { Scenario } from '../lib/context';
import { untilAborted } from '../lib/context';
import { measure } from '../lib/measure';
import { kibToMb, readMemory } from '../lib/proc';
import { figure } from '../lib/report';
import { median, percentile } from '../lib/stats';

/** Size of each imported CSV (MiB): ~50 KB, about 700 rows. */
export const SMALL_CSV_MIB = 0.05;

export const concurrencyScenario: Scenario = async (ctx) => {
  const { stack, options } = ctx;
  const count = options.concurrency;
  const csv = await ctx.fixtures.csv(SMALL_CSV_MIB);
  const tag = Date.now().toString(36);

  const aloneMs: number[] = [];
  for (let i = 1; i <= 3; i++) {
    const run = await ctx.runWorkflow<ImportTableResult>('importTableWorkflow', { source: csv.path, bucketId: 'in.c-conc', createBucket: true, table: `alone_${tag}_${i}` }, 'alone');
    aloneMs.push(run.timings.closedMs! - run.timings.startedMs!);
  }
  const alone = median(aloneMs)!;
  ctx.log(`one import alone: ${aloneMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s → median ${(alone / 1000).toFixed(2)} s`);

  const workerIdleKiB = readMemory(stack.pids.worker)?.rssKiB ?? 0;
  ctx.log(`starting ${count} imports at once …`);
  const latencies: number[] = [];
  const failures: string[] = [];
  const run = await measure(stack, async () => {
    const started = performance.now();
    const handles: Array<{ handle: WorkflowHandle; startMs: number }> = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const startMs = performance.now();
        const handle = await ctx.startWorkflow('importTableWorkflow', { source: csv.path, bucketId: 'in.c-conc', createBucket: true, table: `t_${tag}_${i}` }, 'concurrent');
        return { handle, startMs };
      }),
    );
    const startedAllMs = performance.now() - started;
    await Promise.all(
      handles.map(async ({ handle, startMs }) => {
        try {
          const result = (await untilAborted(handle.result(), ctx.signal)) as ImportTableResult;
          if (result.importedRowsCount !== csv.rows) failures.push(`${handle.workflowId}: ${result.importedRowsCount} rows, expected ${csv.rows}`);
          latencies.push(performance.now() - startMs);
        } catch (err) {
          failures.push(`${handle.workflowId}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }),
    );
    return { startedAllMs };
  });
  const succeeded = count - failures.length;
  ctx.log(
    `${succeeded}/${count} succeeded in ${(run.ms / 1000).toFixed(1)} s (all started after ${(run.value.startedAllMs / 1000).toFixed(1)} s); ` +
      `latency p50 ${((percentile(latencies, 50) ?? 0) / 1000).toFixed(1)} s, p95 ${((percentile(latencies, 95) ?? 0) / 1000).toFixed(1)} s; ` +
      `worker peak ${kibToMb(run.worker.peakKiB)} MB; cpu [user, sys] s ${JSON.stringify(run.cpuSplit)}`,
  );
  if (failures.length) ctx.log(`failures (first 5): ${failures.slice(0, 5).join(' | ')}`);
  return {
    figures: [
      figure({ scenario: 'concurrency', metric: `imports succeeded of ${count}`, unit: '', ours: succeeded, target: { on: 'ours', op: '>=', value: count } }),
      figure({ scenario: 'concurrency', metric: `total time for ${count}`, unit: 's', ours: run.ms / 1000, baseline: (count * alone) / 1000, note: `baseline: ${count} × one import alone (${(alone / 1000).toFixed(2)} s)` }),
      figure({ scenario: 'concurrency', metric: 'import latency p95', unit: 's', ours: (percentile(latencies, 95) ?? 0) / 1000, baseline: alone / 1000, note: 'baseline: one import alone' }),
      figure({ scenario: 'concurrency', metric: 'worker peak RSS', unit: 'MB', ours: kibToMb(run.worker.peakKiB), baseline: kibToMb(workerIdleKiB), note: 'baseline: worker RSS at idle' }),
    ],
    details: {
      count,
      csvBytes: csv.bytes,
      rows: csv.rows,
      aloneMs,
      totalMs: Math.round(run.ms),
      startedAllMs: Math.round(run.value.startedAllMs),
      latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: percentile(latencies, 100) },
      failures,
      cpuSeconds: run.cpuSeconds,
        cpuSplit: run.cpuSplit,
      emulatorPeakMb: kibToMb(run.emulator.peakKiB),
    },
  };
};
