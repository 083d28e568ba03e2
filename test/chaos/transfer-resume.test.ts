import { createHash } from 'node:crypto';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ChildProcess } from 'node:child_process';
import type { MultipartUploadState } from '../../src/object-storage/multipart-upload';
import type { DownloadState } from '../../src/object-storage/download';
import type { UploadFileResult } from '../../src/activities/upload-file';
import type { ExportTableResult, ImportTableResult } from '../../src/contracts/transfer';
import { startSapiTestEnv, startWorkerProcess, type SapiTestEnv } from '../harness/sapi-env';
import { testStack } from '../harness/stack-state';
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
  const children: ChildProcess[] = [];
  beforeAll(async () => (env = await startSapiTestEnv('chaos-transfer', { emulator: { sliceSizeBytes: 1 * MiB } })));
  // a worker left from one test would poll the next test's tasks through a proxy that is gone: stop them per test
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  afterAll(() => env?.stop());

  /** A worker in its own process whose S3 traffic goes through `s3Endpoint`. */
  async function startWorker(s3Endpoint: string, identity: string): Promise<ChildProcess> {
    const child = await startWorkerProcess(env, identity, { AWS_ENDPOINT_URL_S3: s3Endpoint, SAPI_PART_SIZE_MIB: '5', SAPI_TRANSFER_CONCURRENCY: '1' });
    children.push(child);
    return child;
  }

  it('finishes a multipart upload on a new worker without re-sending the finished parts', async () => {
    await env.worker.stop(); // this test's transfers run on worker processes behind a slow link
    const source = join(env.dataDir, 'upload.csv');
    const rows = await writeCsv(source, 40 * MiB);
    const size = statSync(source).size;
    const proxy = await startThrottleProxy(testStack().minio.endpoint, 3 * MiB);
    try {
      const first = await startWorker(proxy.url, 'first');
      const handle = await env.client.workflow.start('importTableWorkflow', {
        taskQueue: env.taskQueue,
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
      await startWorker(proxy.url, 'second');
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
      await proxy.close();
    }
  });

  it('finishes a sliced download on a new worker without fetching the finished slices again', async () => {
    const source = join(env.dataDir, 'export-source.csv');
    const rows = await writeCsv(source, 24 * MiB);
    // load the table fast (direct to MinIO, worker in this process)
    const loader = await env.startWorker();
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `chaos-export-load-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-chaos', createBucket: true, table: 'download', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    await loader.stop();
    const proxy = await startThrottleProxy(testStack().minio.endpoint, 3 * MiB);
    try {
      const first = await startWorker(proxy.url, 'download-first');
      const destination = join(env.dataDir, 'out', 'download.csv');
      const handle = await env.client.workflow.start('exportTableWorkflow', {
        taskQueue: env.taskQueue,
        workflowId: `chaos-download-${Date.now()}`,
        args: [{ tableId: 'in.c-chaos.download', destination, polling: { initialMs: 200, maxMs: 1000 } }],
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
      await startWorker(proxy.url, 'download-second');
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
      await proxy.close();
    }
  });
});
