/**
 * Download: `exportTableWorkflow` of a table holding the generated CSV, exported as a sliced file (the emulator runs
 * with a slice size that gives ~20 slices), vs what the official clients do: file detail with read credentials,
 * GET the manifest, then every slice in order with GetObject, appended to one file. Order: baseline, then
 * (ours, baseline) × repeat; medians. Ours is reported for the download phase (`downloadFile` activity) and end to
 * end (incl. the emulator's export job and polling). The baseline runs in its own process (`bench/baseline-child.ts`);
 * both sides warm up first, untimed (ours: a 1 MiB table's export, then a 16 MiB one's, which starts the download
 * threads). A second baseline is MinIO's own client: `mc cp`
 * of every slice the manifest lists into a folder (its own parallelism, no concatenation, no hash), run right after
 * the first in each baseline slot; the targets of issue 27 are on ours/mc. CPU seconds per GB: the worker's (its
 * download threads included) during the export workflow, mc's.
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportTableResult } from '../../src/contracts/transfer';
import { alternation } from '../lib/args';
import type { Scenario } from '../lib/context';
import { activityDurationMs } from '../lib/history';
import { measure } from '../lib/measure';
import { cpuSecondsPerGb, locateMc, mcCpuSeconds } from '../lib/mc';
import { cpuSecondsWithin, kibToMb, memorySnapshot, readMemory, rssTimeline } from '../lib/proc';
import { figure } from '../lib/report';
import { waitForJob } from '../lib/storage-ops';
import { mbPerSecond, median } from '../lib/stats';

/** The warm-up table that starts the download threads (larger than `IN_THREAD_DOWNLOAD_BYTES`). */
const THREADS_WARM_UP_MIB = 16;
/** Sliced exports must have at least this many slices for the figure to count. */
export const MIN_SLICES = 16;

export const downloadScenario: Scenario = async (ctx) => {
  const { stack, options } = ctx;
  const tableId = await ctx.fixtures.table(options.sizeMiB);
  const outDir = join(stack.dataDir, 'downloads');
  mkdirSync(outDir, { recursive: true });

  ctx.log(`exporting ${tableId} once for the baseline …`);
  const exportStarted = Date.now();
  const job = await waitForJob(stack.storage, Number((await stack.storage.exportTableAsync({ tableId })).id));
  const fileId = Number((job.results as { file: { id: number } }).file.id);
  const exportSeconds = (Date.now() - exportStarted) / 1000;
  ctx.log(`export job ${job.id} done in ${exportSeconds.toFixed(1)} s → file ${fileId}`);

  // warm-up of ours, untimed (the baseline warms itself up in its process): a 1 MiB table through the same path
  const warmUp = join(outDir, 'warm-up.csv');
  const warmed = await ctx.runWorkflow<ExportTableResult>(
    'exportTableWorkflow',
    { tableId: await ctx.fixtures.table(1), destination: warmUp },
    'download-warmup',
  );
  rmSync(warmUp, { force: true });
  // what a download phase costs whatever its size (file detail with credentials, table columns, manifest, presigning,
  // threads, rename), which the baselines do not pay (their file detail is fetched untimed)
  const fixedMs = activityDurationMs(warmed.timings, 'downloadFile');
  ctx.log(`warm-up: downloadFile of a 1 MiB table took ${(fixedMs / 1000).toFixed(2)} s`);
  // a file of at most 8 MiB downloads without the download threads (IN_THREAD_DOWNLOAD_BYTES): one larger warm-up
  // starts them, so the timed runs find them idle, as the download after another does in a worker in service
  const threadsWarmUp = await ctx.fixtures.table(THREADS_WARM_UP_MIB);
  await ctx.runWorkflow<ExportTableResult>('exportTableWorkflow', { tableId: threadsWarmUp, destination: warmUp }, 'download-warmup');
  rmSync(warmUp, { force: true });
  const compare = stack.compare;
  if (compare) {
    for (const sizeMiB of [1, THREADS_WARM_UP_MIB]) {
      await ctx.runWorkflow<ExportTableResult>(
        'exportTableWorkflow',
        { tableId: await ctx.fixtures.table(sizeMiB), destination: warmUp },
        'download-warmup',
        compare.taskQueue,
      );
      rmSync(warmUp, { force: true });
    }
  }

  const workerIdleKiB = readMemory(stack.pids.worker)?.rssKiB ?? 0;
  const workerIdle = memorySnapshot(stack.pids.worker);
  const runs: Array<Record<string, unknown>> = [];
  const baseline: Array<{ ms: number; bytes: number }> = [];
  // per tree: this one (`ours`) and the --compare-tree's (`compare`)
  const oursDownload = { ours: [] as Array<{ ms: number; bytes: number }>, compare: [] as Array<{ ms: number; bytes: number }> };
  const oursEndToEnd = { ours: [] as Array<{ ms: number; bytes: number }>, compare: [] as Array<{ ms: number; bytes: number }> };
  const mc = locateMc();
  if ('missing' in mc) ctx.log(`no mc baseline: ${mc.missing}`);
  const mcRuns: Array<{ ms: number; bytes: number }> = [];
  const mcCpuPerGb: number[] = [];
  const cpuPerGb = { ours: [] as number[], compare: [] as number[] };
  /** User and system CPU seconds per GB of each download (ours) and each mc run: where the CPU goes. */
  const cpuSplitPerGb = { ours: [] as Array<{ user: number; system: number }>, mc: [] as Array<{ user: number; system: number }> };
  let slices = 0;
  const workerPeakKiB = { ours: 0, compare: 0 };
  let baselinePeakKiB = 0;
  let n = 0;
  for (const side of alternation(options.repeat, compare !== undefined)) {
    n++;
    const destination = join(outDir, `${side}-${n}.csv`);
    if (side === 'baseline') {
      ctx.log(`baseline #${n}: sequential slice-by-slice download of file ${fileId} (own process) …`);
      const file = await stack.storage.getFile({ fileId, federationToken: true });
      if (!file.isSliced || !file.s3Path || !file.credentials) throw new Error(`file ${fileId} is not a sliced file with read credentials`);
      const c = file.credentials;
      const run = await measure(stack, () =>
        stack.runBaseline({
          kind: 'download',
          endpoint: stack.s3Endpoint,
          region: file.region ?? stack.minio.region,
          credentials: { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken },
          bucket: file.s3Path!.bucket,
          prefix: file.s3Path!.key,
          destination,
        }),
      );
      const b = run.value;
      slices = b.slices!;
      baseline.push({ ms: b.ms, bytes: b.bytes! });
      baselinePeakKiB = Math.max(baselinePeakKiB, b.maxRssKiB);
      runs.push({
        side,
        n,
        ms: Math.round(b.ms),
        bytes: b.bytes,
        slices: b.slices,
        mbps: mbPerSecond(b.bytes!, b.ms),
        baselineCpu: b.cpu,
        baselinePeakMb: kibToMb(b.maxRssKiB),
        cpuSplit: run.cpuSplit,
      });
      ctx.log(
        `baseline #${n}: ${b.slices} slices, ${b.bytes} bytes in ${(b.ms / 1000).toFixed(1)} s (${mbPerSecond(b.bytes!, b.ms)!.toFixed(1)} MB/s), ` +
          `its cpu [user, sys] s [${b.cpu.user.toFixed(1)}, ${b.cpu.system.toFixed(1)}], its peak RSS ${kibToMb(b.maxRssKiB)} MB; others ${JSON.stringify(run.cpuSplit)}`,
      );
      if ('path' in mc) {
        const folder = `${destination}.mc`;
        const mcRun = await measure(stack, () =>
          stack.runBaseline({
            kind: 'mc-download',
            mc: mc.path,
            endpoint: stack.s3Endpoint,
            region: stack.minio.region,
            credentials: { accessKeyId: stack.minio.accessKeyId, secretAccessKey: stack.minio.secretAccessKey },
            bucket: file.s3Path!.bucket,
            prefix: file.s3Path!.key,
            destination: folder,
          }),
        );
        const m = mcRun.value;
        mcRuns.push({ ms: m.ms, bytes: m.bytes! });
        mcCpuPerGb.push(cpuSecondsPerGb(mcCpuSeconds(m), m.bytes!)!);
        if (m.mcCpu) cpuSplitPerGb.mc.push({ user: cpuSecondsPerGb(m.mcCpu.user, m.bytes!)!, system: cpuSecondsPerGb(m.mcCpu.system, m.bytes!)! });
        runs.push({
          side: 'mc',
          n,
          ms: Math.round(m.ms),
          bytes: m.bytes,
          slices: m.slices,
          mbps: mbPerSecond(m.bytes!, m.ms),
          mcCpu: m.mcCpu,
          cpuSplit: mcRun.cpuSplit,
        });
        ctx.log(
          `mc #${n}: ${m.slices} slices, ${m.bytes} bytes in ${(m.ms / 1000).toFixed(1)} s (${mbPerSecond(m.bytes!, m.ms)!.toFixed(1)} MB/s), its cpu [user, sys] s [${m.mcCpu!.user.toFixed(1)}, ${m.mcCpu!.system.toFixed(1)}]; others ${JSON.stringify(mcRun.cpuSplit)}`,
        );
      }
    } else {
      ctx.log(`${side} #${n}: exportTableWorkflow of ${tableId} …`);
      const watcher = watchConcatenation(destination);
      const workerPid = side === 'compare' ? compare!.pid : stack.pids.worker;
      const run = await measure(
        stack,
        () =>
          ctx.runWorkflow<ExportTableResult>('exportTableWorkflow', { tableId, destination }, 'download', side === 'compare' ? compare!.taskQueue : undefined),
        workerPid,
      ).finally(() => watcher.stop());
      const wf = run.value;
      const downloadMs = activityDurationMs(wf.timings, 'downloadFile');
      const span = wf.timings.activities.find((a) => a.type === 'downloadFile' && a.outcome === 'completed')!;
      const endToEndMs = wf.timings.closedMs! - wf.timings.startedMs!;
      // a download through a work folder fetches the slices into <dest>.parts/, then concatenates them into
      // <dest>.partial; one written in place has a single phase
      const concatStartMs = watcher.partialSeenMs;
      const phases =
        concatStartMs === undefined || span.startedMs === undefined
          ? undefined
          : { slicesMs: Math.round(concatStartMs - span.startedMs), concatenateMs: Math.round(span.endedMs! - concatStartMs) };
      if (statSync(destination).size !== wf.result.bytes)
        throw new Error(`${destination} holds ${statSync(destination).size} bytes, the workflow reported ${wf.result.bytes}`);
      oursDownload[side].push({ ms: downloadMs, bytes: wf.result.bytes });
      // the worker's CPU (its download threads included) while the downloadFile activity ran
      const downloadCpuS = cpuSecondsWithin(run.worker, span.startedMs!, span.endedMs!);
      if (downloadCpuS !== undefined) cpuPerGb[side].push(cpuSecondsPerGb(downloadCpuS, wf.result.bytes)!);
      // …and its user / system split (read from the same samples, so user + sys ≈ the total within rounding)
      const downloadUserS = cpuSecondsWithin(run.worker, span.startedMs!, span.endedMs!, 'user');
      const downloadSysS = cpuSecondsWithin(run.worker, span.startedMs!, span.endedMs!, 'system');
      if (side === 'ours' && downloadUserS !== undefined && downloadSysS !== undefined) {
        cpuSplitPerGb.ours.push({ user: cpuSecondsPerGb(downloadUserS, wf.result.bytes)!, system: cpuSecondsPerGb(downloadSysS, wf.result.bytes)! });
      }
      oursEndToEnd[side].push({ ms: endToEndMs, bytes: wf.result.bytes });
      workerPeakKiB[side] = Math.max(workerPeakKiB[side], run.worker.peakKiB);
      runs.push({
        side,
        n,
        workflowId: wf.workflowId,
        slices: wf.result.slices,
        sliced: wf.result.sliced,
        bytes: wf.result.bytes,
        downloadMs: Math.round(downloadMs),
        downloadAttempt: span.attempt,
        downloadWorkerCpuS: downloadCpuS,
        downloadWorkerCpuUserS: downloadUserS,
        downloadWorkerCpuSysS: downloadSysS,
        phases,
        slicesMbps: phases ? mbPerSecond(wf.result.bytes, phases.slicesMs) : undefined,
        endToEndMs: Math.round(endToEndMs),
        downloadMbps: mbPerSecond(wf.result.bytes, downloadMs),
        endToEndMbps: mbPerSecond(wf.result.bytes, endToEndMs),
        historyEvents: wf.timings.events,
        workerPeakMb: kibToMb(run.worker.peakKiB),
        workerRssTimelineMb: rssTimeline(run.worker.samples, 20),
        workerAfter: memorySnapshot(workerPid),
        cpuSeconds: run.cpuSeconds,
        cpuSplit: run.cpuSplit,
      });
      ctx.log(
        `${side} #${n}: ${wf.result.slices} slices, ${wf.result.bytes} bytes; download ${(downloadMs / 1000).toFixed(1)} s (${mbPerSecond(wf.result.bytes, downloadMs)!.toFixed(1)} MB/s, attempt ${span.attempt}, worker cpu ${downloadCpuS} s [user ${downloadUserS}, sys ${downloadSysS}]` +
          `${phases ? `; slices in parallel ${(phases.slicesMs / 1000).toFixed(1)} s, concatenation ${(phases.concatenateMs / 1000).toFixed(1)} s` : '; slices written in place, no concatenation'}), ` +
          `end to end ${(endToEndMs / 1000).toFixed(1)} s, worker peak ${kibToMb(run.worker.peakKiB)} MB, cpu [user, sys] s ${JSON.stringify(run.cpuSplit)}`,
      );
    }
    rmSync(destination, { force: true });
  }
  const mbps = (xs: Array<{ ms: number; bytes: number }>) => median(xs.map((x) => mbPerSecond(x.bytes, x.ms)!));
  const link = options.linkMBps ? `; S3 link capped at ${options.linkMBps} MB/s per connection` : '';
  const note = `${options.sizeMiB} MiB table, ${slices} slices, medians of ${oursDownload.ours.length} ours / ${baseline.length} baseline${link}`;
  const mcFigures =
    'path' in mc
      ? [
          // issue 27: ≥ 0.9× MinIO's own client on localhost (ours also hashes every slice), ≥ 0.95× behind a capped link
          figure({
            scenario: 'download',
            metric: 'download phase vs mc',
            unit: 'MB/s',
            ours: mbps(oursDownload.ours),
            baseline: mbps(mcRuns),
            target: { on: 'ratio', op: '>=', value: options.linkMBps ? 0.95 : 0.9 },
            goal: 'issue 41 target 2',
            note: `baseline: mc cp of the ${slices} slices into a folder; medians of ${oursDownload.ours.length} / ${mcRuns.length}${link}`,
          }),
          figure({
            scenario: 'download',
            metric: 'CPU per GB, worker vs mc',
            unit: 's/GB',
            ours: median(cpuPerGb.ours),
            baseline: median(mcCpuPerGb),
            target: { on: 'ratio', op: '<=', value: 1.2 },
            goal: 'issue 41 target 2',
            note: `ours: the worker process (its threads included) while downloadFile ran, sha256 included; baseline: the mc process; user + sys s/GB (medians): ours ${splitNote(cpuSplitPerGb.ours)}, mc ${splitNote(cpuSplitPerGb.mc)}`,
          }),
        ]
      : [{ scenario: 'download', metric: 'download phase vs mc', unit: 'MB/s', note: `not measured: ${mc.missing}` }];
  return {
    figures: [
      ...mcFigures,
      // issue 14: never slower than the sequential download on localhost, ≥ 2.5× behind a 20 MB/s link
      figure({
        scenario: 'download',
        metric: 'download phase',
        unit: 'MB/s',
        ours: mbps(oursDownload.ours),
        baseline: mbps(baseline),
        target: { on: 'ratio', op: '>=', value: options.linkMBps ? 2.5 : 1.0 },
        note,
      }),
      figure({
        scenario: 'download',
        metric: 'end to end incl. export job',
        unit: 'MB/s',
        ours: mbps(oursEndToEnd.ours),
        baseline: mbps(baseline),
        note: 'baseline: download only',
      }),
      figure({ scenario: 'download', metric: 'slices in the export', unit: '', ours: slices, target: { on: 'ours', op: '>=', value: MIN_SLICES } }),
      figure({
        scenario: 'download',
        metric: 'worker peak RSS',
        unit: 'MB',
        ours: kibToMb(workerPeakKiB.ours),
        baseline: kibToMb(workerIdleKiB),
        target: { on: 'ours', op: '<=', value: 300 },
        note: `baseline: worker RSS at idle; the baseline process peaked at ${kibToMb(baselinePeakKiB)} MB`,
      }),
      ...(compare
        ? [
            figure({
              scenario: 'download',
              metric: 'download phase, compare tree',
              unit: 'MB/s',
              ours: mbps(oursDownload.compare),
              baseline: mbps(baseline),
              note: `${compare.tree}; medians of ${oursDownload.compare.length}`,
            }),
            figure({
              scenario: 'download',
              metric: 'download phase, this tree vs compare tree',
              unit: 'MB/s',
              ours: mbps(oursDownload.ours),
              baseline: mbps(oursDownload.compare),
              note: 'baseline: the compare tree',
            }),
            figure({
              scenario: 'download',
              metric: 'end to end, this tree vs compare tree',
              unit: 'MB/s',
              ours: mbps(oursEndToEnd.ours),
              baseline: mbps(oursEndToEnd.compare),
              note: 'baseline: the compare tree',
            }),
            figure({
              scenario: 'download',
              metric: 'CPU per GB, this tree vs compare tree',
              unit: 's/GB',
              ours: median(cpuPerGb.ours),
              baseline: median(cpuPerGb.compare),
              note: 'the worker process while downloadFile ran (medians); baseline: the compare tree',
            }),
            figure({
              scenario: 'download',
              metric: 'worker peak RSS, this tree vs compare tree',
              unit: 'MB',
              ours: kibToMb(workerPeakKiB.ours),
              baseline: kibToMb(workerPeakKiB.compare),
              note: 'baseline: the compare tree',
            }),
          ]
        : []),
    ],
    details: {
      workerIdle,
      tableId,
      fileId,
      baselineExportJobSeconds: exportSeconds,
      warmUpDownloadPhaseMs: Math.round(fixedMs),
      runs,
    },
  };
};

/**
 * Watches (every 50 ms) for `<destination>.parts`, the work folder of a download that fetches slices to files and
 * then concatenates them, and for `<destination>.partial` appearing after it (the concatenation). A sliced download
 * written in place (each slice at its offset in `<destination>.partial`, no work folder) has no concatenation: then
 * `partialSeenMs` stays undefined.
 */
function watchConcatenation(destination: string): { readonly partialSeenMs?: number; stop(): void } {
  let sawParts = false;
  const state: { partialSeenMs?: number; stop(): void } = {
    stop: () => clearInterval(timer),
  };
  const timer = setInterval(() => {
    if (!sawParts) sawParts = existsSync(`${destination}.parts`);
    if (sawParts && state.partialSeenMs === undefined && existsSync(`${destination}.partial`)) state.partialSeenMs = Date.now();
  }, 50);
  return state;
}

/** `user + sys` of the medians of each, in s/GB (`?` when nothing was measured). */
function splitNote(split: ReadonlyArray<{ user: number; system: number }>): string {
  const user = median(split.map((s) => s.user));
  const system = median(split.map((s) => s.system));
  return user === undefined || system === undefined ? '?' : `${user.toFixed(2)} + ${system.toFixed(2)}`;
}
