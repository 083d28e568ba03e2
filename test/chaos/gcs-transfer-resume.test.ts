import { createHash } from 'node:crypto';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ChildProcess } from 'node:child_process';
import type { GcsUploadState } from '../../src/object-storage/gcs-upload';
import type { DownloadState } from '../../src/object-storage/download';
import type { UploadFileResult } from '../../src/activities/upload-file';
import type { ExportTableResult, ImportTableResult } from '../../src/contracts/transfer';
import { startFakeGcs, type FakeGcsHandle } from '../../src/dev/gcs';
import { startSapiTestEnv, startWorkerProcess, type SapiTestEnv } from '../harness/sapi-env';
import { testStack } from '../harness/stack-state';
import { eventually } from '../harness/processes';
import { startThrottleProxy } from '../harness/throttle-proxy';
import { activityResults, pendingHeartbeat } from '../harness/history';
import { describeInSweep } from '../harness/backend-sweep';

const MiB = 1024 * 1024;

/** Writes a CSV of about `sizeBytes` with an id column; returns its row count. */
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

/** In `make test-backends` only: `make test` covers the resume of a killed upload and download on S3 (transfer-resume.test.ts) and the
 * GCS resumable-session resume logic in test/unit/object-storage. */
describeInSweep('GCS transfers resume after the worker is killed mid-way', () => {
  let gcs: FakeGcsHandle;
  let proxy: Awaited<ReturnType<typeof startThrottleProxy>>;
  let env: SapiTestEnv;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    gcs = await startFakeGcs({ dataDir: join(testStack().dataDir, `fake-gcs-chaos-${process.pid}-${Date.now().toString(36)}`) });
    // workers reach fake-gcs-server through a slow link (their STORAGE_EMULATOR_HOST, so session URIs name it too);
    // the emulator directly
    proxy = await startThrottleProxy(gcs.endpoint, 3 * MiB);
    env = await startSapiTestEnv('chaos-gcs', {
      worker: false,
      emulator: {
        backend: 'gcp',
        sliceSizeBytes: 1 * MiB,
        gcs: { endpoint: gcs.endpoint, publicEndpoint: proxy.url, projectId: gcs.projectId, bucket: 'sapi-files' },
      },
      env: { STORAGE_EMULATOR_HOST: proxy.url },
    });
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  afterAll(async () => {
    await env?.stop();
    await proxy?.close();
    await gcs?.stop();
  });

  async function startWorker(identity: string): Promise<ChildProcess> {
    const child = await startWorkerProcess(env, identity, { SAPI_PART_SIZE_MIB: '5', SAPI_TRANSFER_CONCURRENCY: '1', STORAGE_EMULATOR_HOST: proxy.url });
    children.push(child);
    return child;
  }

  it('finishes on a new worker in the same session, sending nothing below the offset the store persisted', async () => {
    const source = join(env.dataDir, 'upload.csv');
    const rows = await writeCsv(source, 40 * MiB);
    const size = statSync(source).size;
    const first = await startWorker('first');
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `chaos-gcs-upload-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-chaos', createBucket: true, table: 'upload', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    let atKill: GcsUploadState | undefined;
    await eventually(
      async () => {
        atKill = await pendingHeartbeat<GcsUploadState>(handle, 'uploadFile');
        return (atKill?.bytesSent ?? 0) >= 15 * MiB;
      },
      60_000,
      'the upload never recorded 15 MiB persisted',
    );
    first.kill('SIGKILL');
    const persistedAtKill = atKill!.bytesSent;
    // the session URI is a grant to write the object: the heartbeat holds it sealed
    expect(atKill!.sessionUri).not.toMatch(/^https?:|upload_id/);
    const connectionsBeforeTakeover = proxy.connections.length;
    await startWorker('second');
    const result = (await handle.result()) as ImportTableResult;
    expect(result.importedRowsCount).toBe(rows);
    expect(result.sha256).toBe(createHash('sha256').update(readFileSync(source)).digest('hex'));
    expect((await env.emulator.readTable('in.c-chaos.upload')).rows).toHaveLength(rows);
    const [upload] = await activityResults<UploadFileResult>(handle, 'uploadFile');
    const chunks = Math.ceil(size / (5 * MiB));
    expect(upload).toMatchObject({ resumed: true, parts: chunks });
    expect(upload!.partsUploaded).toBeLessThanOrEqual(chunks - persistedAtKill / (5 * MiB));
    // the second worker sent at most the bytes from the persisted offset on (plus request headers), none below it;
    // counted on its own connections: the killed worker's last bytes still drain from the kernel's buffers meanwhile
    const sentBySecond = proxy.connections.slice(connectionsBeforeTakeover).reduce((sum, connection) => sum + connection.up, 0);
    expect(sentBySecond).toBeGreaterThan(0);
    expect(sentBySecond).toBeLessThan(size - persistedAtKill + 256 * 1024);
  });

  it('finishes a sliced download from GCS on a new worker without fetching the finished slices again', async () => {
    const source = join(env.dataDir, 'export-source.csv');
    const rows = await writeCsv(source, 24 * MiB);
    const loader = await env.startWorker();
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `chaos-gcs-export-load-${Date.now()}`,
      args: [{ source, bucketId: 'in.c-chaos', createBucket: true, table: 'download', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    await loader.stop();
    const first = await startWorker('download-first');
    const destination = join(env.dataDir, 'out', 'download.csv');
    const handle = await env.client.workflow.start('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `chaos-gcs-download-${Date.now()}`,
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
    await startWorker('download-second');
    const result = (await handle.result()) as ExportTableResult;
    const text = readFileSync(destination, 'utf8');
    expect(result.sha256).toBe(createHash('sha256').update(text).digest('hex'));
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('"id","payload"');
    expect(lines.slice(1).map((line) => line.split(',')[0]!.replace(/"/g, ''))).toEqual(Array.from({ length: rows }, (_, i) => String(i)));
    // the second worker fetched about the slices the first had not finished, not the whole file again
    expect(proxy.bytes.down - downBeforeTakeover).toBeLessThan(result.bytes * (1 - slicesAtKill / slices) + 3 * MiB);
  });
});
