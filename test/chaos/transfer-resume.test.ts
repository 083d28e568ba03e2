import { createHash } from 'node:crypto';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ChildProcess } from 'node:child_process';
import type { MultipartUploadState } from '../../src/object-storage/multipart-upload';
import type { DownloadState } from '../../src/object-storage/download';
import type { UploadFileResult } from '../../src/activities/upload-file';
import type { ExportTableResult, ImportTableResult } from '../../src/contracts/transfer';
import { startSapiTestEnv, startWorkerProcess, type SapiTestEnv } from '../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../harness/stack-state';
import { eventually } from '../harness/processes';
import { startThrottleProxy } from '../harness/throttle-proxy';
import { activityResults, pendingHeartbeat } from '../harness/history';

const MiB = 1024 * 1024;

/** Writes a CSV of about `sizeBytes` with an id column; returns its path and row count. */
async function writeCsv(path: string, sizeBytes: number): Promise<number> {
  const out = createWriteStream(path);
  out.write('id,payload\n');
  let written = 0;
  let rows = 0;
  const pad = 'p'.repeat(200);
  while (written < sizeBytes) {
    const line = `${rows},${pad}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    written += line.length;
    rows++;
  }
  await new Promise<void>((r) => out.end(() => r()));
  return rows;
}

describe('transfers resume after the worker is killed mid-way', () => {
  let env: SapiTestEnv;
  /** Every worker process started (each case kills its own; afterAll whatever a failed case left). */
  const children: ChildProcess[] = [];
  beforeAll(async () => (env = await startSapiTestEnv('chaos-transfer', { emulator: { sliceSizeBytes: 1 * MiB } })));
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await env?.stop();
  });

  /**
   * One case's own task queue and worker processes, their S3 traffic through the case's slow link: the two cases run
   * side by side (`it.concurrent`), and only a case's workers (the killed one and its takeover) take its run; the
   * file's in-process worker (on the env's task queue, direct to MinIO) never does.
   */
  function caseRun(name: string) {
    const taskQueue = uniqueTaskQueue(`chaos-transfer-${name}`);
    const mine: ChildProcess[] = [];
    return {
      taskQueue,
      async startWorker(s3Endpoint: string, identity: string): Promise<ChildProcess> {
        const child = await startWorkerProcess(env, identity, {
          TEMPORAL_TASK_QUEUE: taskQueue,
          AWS_ENDPOINT_URL_S3: s3Endpoint,
          SAPI_PART_SIZE_MIB: '5',
          SAPI_TRANSFER_CONCURRENCY: '1',
        });
        children.push(child);
        mine.push(child);
        return child;
      },
      stop() {
        for (const child of mine) child.kill('SIGKILL');
      },
    };
  }

  it.concurrent('finishes a multipart upload on a new worker without re-sending the finished parts', async () => {
    const run = caseRun('upload');
    const source = join(env.dataDir, 'upload.csv');
    const rows = await writeCsv(source, 40 * MiB);
    const size = statSync(source).size;
    const proxy = await startThrottleProxy(testStack().minio.endpoint, 3 * MiB);
    try {
      const first = await run.startWorker(proxy.url, 'first');
      const handle = await env.client.workflow.start('importTableWorkflow', {
        taskQueue: run.taskQueue,
        workflowId: `chaos-upload-${Date.now()}`,
        args: [{ source, bucketId: 'in.c-chaos', createBucket: true, table: 'upload', polling: { initialMs: 200, maxMs: 1000 } }],
      });
      let partsAtKill = 0;
      await eventually(
        async () => {
          partsAtKill = (await pendingHeartbeat<MultipartUploadState>(handle, 'uploadFile'))?.parts.length ?? 0;
          return partsAtKill >= 3;
        },
        60_000,
        'the upload never recorded 3 parts',
      );
      first.kill('SIGKILL');
      await run.startWorker(proxy.url, 'second');
      const result = (await handle.result()) as ImportTableResult;
      expect(result.importedRowsCount).toBe(rows);
      expect(result.sha256).toBe(createHash('sha256').update(readFileSync(source)).digest('hex'));
      expect((await env.emulator.readTable('in.c-chaos.upload')).rows).toHaveLength(rows);
      const [upload] = await activityResults<UploadFileResult>(handle, 'uploadFile');
      expect(upload).toMatchObject({ resumed: true, parts: Math.ceil(size / (5 * MiB)) });
      // the finishing attempt sent only what the first had not recorded (+ at most the part in flight)
      expect(upload!.partsUploaded).toBeLessThanOrEqual(upload!.parts - partsAtKill + 1);
      expect(proxy.bytes.up).toBeLessThan(size + 2 * 5 * MiB + MiB);
    } finally {
      run.stop();
      await proxy.close();
    }
  });

  it.concurrent('finishes a sliced download on a new worker without fetching the finished slices again', async () => {
    const run = caseRun('download');
    const source = join(env.dataDir, 'export-source.csv');
    const rows = await writeCsv(source, 24 * MiB);
    // load the table fast (direct to MinIO, the file's worker in this process)
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `chaos-export-load-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-chaos-export', createBucket: true, table: 'download', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    const proxy = await startThrottleProxy(testStack().minio.endpoint, 3 * MiB);
    try {
      const first = await run.startWorker(proxy.url, 'download-first');
      const destination = join(env.dataDir, 'out', 'download.csv');
      const handle = await env.client.workflow.start('exportTableWorkflow', {
        taskQueue: run.taskQueue,
        workflowId: `chaos-download-${Date.now()}`,
        args: [{ tableId: 'in.c-chaos-export.download', destination, polling: { initialMs: 200, maxMs: 1000 } }],
      });
      let slicesAtKill = 0;
      let slices = 0;
      await eventually(
        async () => {
          const state = await pendingHeartbeat<DownloadState>(handle, 'downloadFile');
          slicesAtKill = state?.finishedSlices.length ?? 0;
          slices = state?.slices ?? 0;
          return slicesAtKill >= 5;
        },
        60_000,
        'the download never recorded 5 slices',
      );
      expect(slices).toBeGreaterThanOrEqual(10);
      first.kill('SIGKILL');
      const downBeforeTakeover = proxy.bytes.down;
      await run.startWorker(proxy.url, 'download-second');
      const result = (await handle.result()) as ExportTableResult;
      const text = readFileSync(destination, 'utf8');
      expect(result.sha256).toBe(createHash('sha256').update(text).digest('hex'));
      const lines = text.trimEnd().split('\n');
      expect(lines[0]).toBe('"id","payload"');
      expect(lines.slice(1).map((line) => line.split(',')[0]!.replace(/"/g, ''))).toEqual(Array.from({ length: rows }, (_, i) => String(i)));
      // the second worker fetched about the slices the first had not finished, not the whole file again
      const exportBytes = result.bytes;
      expect(proxy.bytes.down - downBeforeTakeover).toBeLessThan(exportBytes * (1 - slicesAtKill / slices) + 3 * MiB);
    } finally {
      run.stop();
      await proxy.close();
    }
  });
});
