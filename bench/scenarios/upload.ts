/**
 * Upload: `importTableWorkflow` (direct S3 multipart through the worker) of a generated CSV vs a bare
 * `@aws-sdk/lib-storage` `Upload` of the same file to the same MinIO, same part size and queue as the worker's.
 * The baseline runs in its own process (`bench/baseline-child.ts`), like the worker. A second baseline is MinIO's own
 * client (`mc cp` of the same file, Go, its default part size and threads), run right after the first in each
 * baseline slot; the targets are on ours/mc. CPU seconds per GB: the worker's during the upload, mc's.
 * Order: baseline, then (ours, baseline) × repeat; medians. Ours is reported for the upload phase (the
 * `uploadFile` activity, start → completion in the history) and end to end (incl. prepare and the emulator's import).
 */
import { CreateBucketCommand, DeleteObjectCommand } from '@aws-sdk/client-s3';
import type { ImportTableResult } from '../../src/contracts/transfer';
import { alternation } from '../lib/args';
import type { Scenario } from '../lib/context';
import { activityDurationMs } from '../lib/history';
import { measure } from '../lib/measure';
import { cpuSecondsPerGb, locateMc, mcCpuSeconds } from '../lib/mc';
import { cpuSecondsWithin, kibToMb, memorySnapshot, readMemory, rssTimeline } from '../lib/proc';
import { figure } from '../lib/report';
import { BASELINE_PART_SIZE, BASELINE_QUEUE_SIZE } from '../lib/storage-ops';
import { mbPerSecond, median } from '../lib/stats';

const BASELINE_BUCKET = 'bench-baseline';
/** Size of the warm-up import: a few multipart parts. */
const WARM_UP_MIB = 64;

export const uploadScenario: Scenario = async (ctx) => {
  const { stack, options } = ctx;
  const csv = await ctx.fixtures.csv(options.sizeMiB);
  const s3 = stack.rootS3();
  await s3.send(new CreateBucketCommand({ Bucket: BASELINE_BUCKET })).catch((err: { name?: string }) => {
    if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
  });
  // Untimed warm-up, as the baseline gets one: the worker's first workflow loads its workflow context and its first
  // multipart upload compiles the transfer path. A worker in service is in that state; the measured runs start there.
  const warmUp = await ctx.fixtures.csv(WARM_UP_MIB);
  ctx.log(`warm-up: importTableWorkflow of ${warmUp.bytes} bytes (not timed) …`);
  const warmed = await ctx.runWorkflow<ImportTableResult>(
    'importTableWorkflow',
    { source: warmUp.path, bucketId: 'in.c-bench', createBucket: true, table: 'upload_warm_up' },
    'upload',
  );
  await stack.storage.deleteTable({ tableId: warmed.result.tableId }).catch(() => undefined);
  const workerIdleKiB = readMemory(stack.pids.worker)?.rssKiB ?? 0;
  const workerIdle = memorySnapshot(stack.pids.worker);
  const compare = stack.compare;
  if (compare) {
    ctx.log(`warm-up of the compare tree's worker (not timed) …`);
    const warmedCompare = await ctx.runWorkflow<ImportTableResult>(
      'importTableWorkflow',
      { source: warmUp.path, bucketId: 'in.c-bench', createBucket: true, table: 'upload_warm_up_compare' },
      'upload',
      compare.taskQueue,
    );
    await stack.storage.deleteTable({ tableId: warmedCompare.result.tableId }).catch(() => undefined);
  }
  const runs: Array<Record<string, unknown>> = [];
  const pass = Date.now().toString(36);
  const mc = locateMc();
  if ('missing' in mc) ctx.log(`no mc baseline: ${mc.missing}`);
  const mcMs: number[] = [];
  const mcCpuPerGb: number[] = [];
  const cpuPerGb = { ours: [] as number[], compare: [] as number[] };
  const baselineMs: number[] = [];
  // per tree: this one (`ours`) and the --compare-tree's (`compare`)
  const uploadMs = { ours: [] as number[], compare: [] as number[] };
  const endToEndMs = { ours: [] as number[], compare: [] as number[] };
  const workerPeakKiB = { ours: 0, compare: 0 };
  let baselinePeakKiB = 0;
  let n = 0;
  for (const side of alternation(options.repeat, compare !== undefined)) {
    n++;
    if (side === 'baseline') {
      const key = `upload-${n}.csv`;
      ctx.log(`baseline #${n}: lib-storage Upload of ${csv.bytes} bytes (own process) …`);
      const run = await measure(stack, () =>
        stack.runBaseline({
          kind: 'upload',
          endpoint: stack.s3Endpoint,
          region: stack.minio.region,
          credentials: { accessKeyId: stack.minio.accessKeyId, secretAccessKey: stack.minio.secretAccessKey },
          bucket: BASELINE_BUCKET,
          key,
          path: csv.path,
          partSize: BASELINE_PART_SIZE,
          queueSize: BASELINE_QUEUE_SIZE,
        }),
      );
      await s3.send(new DeleteObjectCommand({ Bucket: BASELINE_BUCKET, Key: key }));
      const b = run.value;
      baselineMs.push(b.ms);
      baselinePeakKiB = Math.max(baselinePeakKiB, b.maxRssKiB);
      runs.push({
        side,
        n,
        ms: Math.round(b.ms),
        mbps: mbPerSecond(csv.bytes, b.ms),
        baselineCpu: b.cpu,
        baselinePeakMb: kibToMb(b.maxRssKiB),
        cpuSplit: run.cpuSplit,
      });
      ctx.log(
        `baseline #${n}: ${(b.ms / 1000).toFixed(1)} s, ${mbPerSecond(csv.bytes, b.ms)!.toFixed(1)} MB/s, its cpu [user, sys] s [${b.cpu.user.toFixed(1)}, ${b.cpu.system.toFixed(1)}], ` +
          `its peak RSS ${kibToMb(b.maxRssKiB)} MB; others ${JSON.stringify(run.cpuSplit)}`,
      );
      if ('path' in mc) {
        const mcKey = `upload-mc-${n}.csv`;
        const mcRun = await measure(stack, () =>
          stack.runBaseline({
            kind: 'mc-upload',
            mc: mc.path,
            endpoint: stack.s3Endpoint,
            region: stack.minio.region,
            credentials: { accessKeyId: stack.minio.accessKeyId, secretAccessKey: stack.minio.secretAccessKey },
            bucket: BASELINE_BUCKET,
            key: mcKey,
            path: csv.path,
          }),
        );
        await s3.send(new DeleteObjectCommand({ Bucket: BASELINE_BUCKET, Key: mcKey }));
        const m = mcRun.value;
        mcMs.push(m.ms);
        mcCpuPerGb.push(cpuSecondsPerGb(mcCpuSeconds(m), csv.bytes)!);
        runs.push({ side: 'mc', n, ms: Math.round(m.ms), mbps: mbPerSecond(csv.bytes, m.ms), mcCpu: m.mcCpu, cpuSplit: mcRun.cpuSplit });
        ctx.log(
          `mc #${n}: ${(m.ms / 1000).toFixed(1)} s, ${mbPerSecond(csv.bytes, m.ms)!.toFixed(1)} MB/s, its cpu [user, sys] s [${m.mcCpu!.user.toFixed(1)}, ${m.mcCpu!.system.toFixed(1)}]; others ${JSON.stringify(mcRun.cpuSplit)}`,
        );
      }
    } else {
      // unique per pass: a pass leaves its first table to download (one per --load-cores value)
      const table = `upload_${pass}_${n}`;
      const workerPid = side === 'compare' ? compare!.pid : stack.pids.worker;
      ctx.log(`${side} #${n}: importTableWorkflow of ${csv.bytes} bytes into in.c-bench.${table} …`);
      const run = await measure(
        stack,
        () =>
          ctx.runWorkflow<ImportTableResult>(
            'importTableWorkflow',
            { source: csv.path, bucketId: 'in.c-bench', createBucket: true, table },
            'upload',
            side === 'compare' ? compare!.taskQueue : undefined,
          ),
        workerPid,
      );
      const wf = run.value;
      if (wf.result.importedRowsCount !== csv.rows) throw new Error(`import of ${table} reported ${wf.result.importedRowsCount} rows, expected ${csv.rows}`);
      const phaseMs = activityDurationMs(wf.timings, 'uploadFile');
      const upload = wf.timings.activities.find((a) => a.type === 'uploadFile' && a.outcome === 'completed')!;
      const wholeMs = wf.timings.closedMs! - wf.timings.startedMs!;
      uploadMs[side].push(phaseMs);
      endToEndMs[side].push(wholeMs);
      // the worker's CPU while the uploadFile activity ran (its samples every 100 ms)
      const uploadCpuS = cpuSecondsWithin(run.worker, upload.startedMs!, upload.endedMs!);
      if (uploadCpuS !== undefined) cpuPerGb[side].push(cpuSecondsPerGb(uploadCpuS, csv.bytes)!);
      workerPeakKiB[side] = Math.max(workerPeakKiB[side], run.worker.peakKiB);
      runs.push({
        side,
        n,
        workflowId: wf.workflowId,
        uploadMs: Math.round(phaseMs),
        uploadAttempt: upload.attempt,
        uploadWorkerCpuS: uploadCpuS,
        endToEndMs: Math.round(wholeMs),
        wallMs: Math.round(run.ms),
        uploadMbps: mbPerSecond(csv.bytes, phaseMs),
        endToEndMbps: mbPerSecond(csv.bytes, wholeMs),
        historyEvents: wf.timings.events,
        workerPeakMb: kibToMb(run.worker.peakKiB),
        workerRssTimelineMb: rssTimeline(run.worker.samples, 20),
        workerAfter: memorySnapshot(workerPid),
        workerHwmReset: run.worker.hwmReset,
        emulatorPeakMb: kibToMb(run.emulator.peakKiB),
        cpuSeconds: run.cpuSeconds,
        cpuSplit: run.cpuSplit,
      });
      ctx.log(
        `${side} #${n}: upload ${(phaseMs / 1000).toFixed(1)} s (${mbPerSecond(csv.bytes, phaseMs)!.toFixed(1)} MB/s, attempt ${upload.attempt}, worker cpu ${uploadCpuS} s), ` +
          `end to end ${(wholeMs / 1000).toFixed(1)} s, worker peak ${kibToMb(run.worker.peakKiB)} MB, cpu [user, sys] s ${JSON.stringify(run.cpuSplit)}`,
      );
      if (!ctx.fixtures.hasTable(options.sizeMiB)) ctx.fixtures.rememberTable(options.sizeMiB, wf.result.tableId);
      else await stack.storage.deleteTable({ tableId: wf.result.tableId }).catch(() => undefined);
    }
  }
  const baselineMbps = mbPerSecond(csv.bytes, median(baselineMs)!);
  const ours = (ms: number[]) => (ms.length ? mbPerSecond(csv.bytes, median(ms)!) : undefined);
  const link = options.linkMBps ? `; S3 link capped at ${options.linkMBps} MB/s per connection` : '';
  const note = `${options.sizeMiB} MiB, medians of ${uploadMs.ours.length} ours / ${baselineMs.length} baseline${link}`;
  const mcFigures =
    'path' in mc
      ? [
          // issue 27: ≥ 0.9× MinIO's own client on localhost, ≥ 0.95× behind a capped link
          figure({
            scenario: 'upload',
            metric: 'upload phase vs mc',
            unit: 'MB/s',
            ours: ours(uploadMs.ours),
            baseline: mbPerSecond(csv.bytes, median(mcMs)!),
            target: { on: 'ratio', op: '>=', value: options.linkMBps ? 0.95 : 0.9 },
            goal: 'issue 41 target 2',
            note: `baseline: mc cp; medians of ${uploadMs.ours.length} / ${mcMs.length}${link}`,
          }),
          figure({
            scenario: 'upload',
            metric: 'CPU per GB, worker vs mc',
            unit: 's/GB',
            ours: median(cpuPerGb.ours),
            baseline: median(mcCpuPerGb),
            target: { on: 'ratio', op: '<=', value: 1.2 },
            goal: 'issue 41 target 2',
            note: 'ours: the worker process while uploadFile ran; baseline: the mc process',
          }),
        ]
      : [{ scenario: 'upload', metric: 'upload phase vs mc', unit: 'MB/s', note: `not measured: ${mc.missing}` }];
  return {
    figures: [
      ...mcFigures,
      figure({
        scenario: 'upload',
        metric: 'upload phase',
        unit: 'MB/s',
        ours: ours(uploadMs.ours),
        baseline: baselineMbps,
        target: { on: 'ratio', op: '>=', value: 0.9 },
        note,
      }),
      figure({
        scenario: 'upload',
        metric: 'end to end incl. import',
        unit: 'MB/s',
        ours: ours(endToEndMs.ours),
        baseline: baselineMbps,
        note: 'baseline: upload only',
      }),
      figure({
        scenario: 'upload',
        metric: 'worker peak RSS',
        unit: 'MB',
        ours: kibToMb(workerPeakKiB.ours),
        baseline: kibToMb(workerIdleKiB),
        target: { on: 'ours', op: '<=', value: 300 },
        note: `baseline: worker RSS at idle after a warm-up import; the baseline process peaked at ${kibToMb(baselinePeakKiB)} MB`,
      }),
      ...(compare
        ? [
            figure({
              scenario: 'upload',
              metric: 'upload phase, compare tree',
              unit: 'MB/s',
              ours: ours(uploadMs.compare),
              baseline: baselineMbps,
              note: `${compare.tree}; medians of ${uploadMs.compare.length}`,
            }),
            figure({
              scenario: 'upload',
              metric: 'upload phase, this tree vs compare tree',
              unit: 'MB/s',
              ours: ours(uploadMs.ours),
              baseline: ours(uploadMs.compare),
              note: 'baseline: the compare tree',
            }),
            figure({
              scenario: 'upload',
              metric: 'end to end, this tree vs compare tree',
              unit: 'MB/s',
              ours: ours(endToEndMs.ours),
              baseline: ours(endToEndMs.compare),
              note: 'baseline: the compare tree',
            }),
            figure({
              scenario: 'upload',
              metric: 'CPU per GB, this tree vs compare tree',
              unit: 's/GB',
              ours: median(cpuPerGb.ours),
              baseline: median(cpuPerGb.compare),
              note: 'the worker process while uploadFile ran (medians); baseline: the compare tree',
            }),
            figure({
              scenario: 'upload',
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
      csvBytes: csv.bytes,
      rows: csv.rows,
      partSizeBytes: BASELINE_PART_SIZE,
      queueSize: BASELINE_QUEUE_SIZE,
      runs,
    },
  };
};
