/**
 * Emulator throughput benchmark (not a test): generates a CSV of `--mib` MiB on the fly, uploads it to MinIO with
 * the prepare credentials, then measures `tables-async` (import) and `export-async` (sliced export) throughput and the
 * emulator process's peak RSS (it runs in a child process; VmHWM from /proc).
 *
 *   node <compiled>/src/emulator/bench.js --mib 512
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { request } from 'undici';
import { startMinio } from '../dev/minio';
import { createEmulator, type EmulatorOptions } from './index';

const TOKEN = 'bench-token';

/** Response bodies, read field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = any;

function* csvRows(targetBytes: number): Generator<string> {
  yield 'id,name,amount,comment\n';
  let bytes = 0;
  let batch = '';
  for (let i = 0; bytes < targetBytes; i++) {
    const line = `${i},"name ${i % 1000}",${(i * 7) % 100000}.${i % 100},"some text, with a comma and ""quotes"" ${i}"\n`;
    batch += line;
    bytes += line.length;
    if (batch.length > 256 * 1024) {
      yield batch;
      batch = '';
    }
  }
  if (batch) yield batch;
}

async function api(url: string, method: string, path: string, json?: unknown): Promise<Body> {
  const res = await request(`${url}/v2/storage${path}`, {
    method: method as 'GET',
    headers: { 'x-storageapi-token': TOKEN, ...(json ? { 'content-type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  const body = await res.body.json();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(body)}`);
  return body;
}

async function waitJob(url: string, id: number): Promise<Body> {
  for (;;) {
    const job = await api(url, 'GET', `/jobs/${id}`);
    if (job.status === 'success') return job;
    if (job.status === 'error') throw new Error(`job ${id} failed: ${job.error.message}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

async function child(options: EmulatorOptions): Promise<void> {
  const emulator = await createEmulator(options);
  process.send!({ url: emulator.url });
  process.on('message', async (m) => {
    if (m === 'stop') {
      await emulator.close();
      process.exit(0);
    }
  });
}

async function main(): Promise<void> {
  const mib = Number(process.argv[process.argv.indexOf('--mib') + 1] ?? 256) || 256;
  const dir = mkdtempSync(join(tmpdir(), 'sapi-emulator-bench-'));
  const minio = await startMinio({ dataDir: join(dir, 'minio') });
  const options: EmulatorOptions = {
    dataDir: join(dir, 'emulator'),
    s3: { endpoint: minio.endpoint, region: minio.region, accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey, bucket: 'bench' },
    tokens: [{ token: TOKEN }],
  };
  const proc = fork(__filename, ['--child', JSON.stringify(options)], { stdio: 'inherit' });
  try {
    const { url } = await new Promise<{ url: string }>((resolve) => proc.once('message', (m) => resolve(m as { url: string })));
    const bytes = mib * 1024 * 1024;
    const prep = await api(url, 'POST', '/files/prepare', { name: 'bench.csv', federationToken: 1 });
    const c = prep.uploadParams.credentials;
    const s3 = new S3Client({ endpoint: minio.endpoint, region: minio.region, forcePathStyle: true, credentials: { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken } });
    let t = Date.now();
    await new Upload({ client: s3, params: { Bucket: prep.uploadParams.bucket, Key: prep.uploadParams.key, Body: Readable.from(csvRows(bytes)) }, partSize: 16 * 1024 * 1024, queueSize: 4 }).done();
    const uploadS = (Date.now() - t) / 1000;
    s3.destroy();
    const fileBytes = (await api(url, 'GET', `/files/${prep.id}`)).sizeBytes as number;
    await api(url, 'POST', '/buckets', { name: 'bench' });
    const rssBefore = peakRssMiB(proc.pid!);
    t = Date.now();
    const create = await waitJob(url, (await api(url, 'POST', '/buckets/in.c-bench/tables-async', { name: 'rows', dataFileId: prep.id })).id);
    const importS = (Date.now() - t) / 1000;
    const rssAfterImport = peakRssMiB(proc.pid!);
    t = Date.now();
    const exp = await waitJob(url, (await api(url, 'POST', '/tables/in.c-bench.rows/export-async', {})).id);
    const exportS = (Date.now() - t) / 1000;
    const exported = await api(url, 'GET', `/files/${exp.results.file.id}`);
    const mb = (n: number): number => Math.round((n / 1e6) * 10) / 10;
    console.log(
      JSON.stringify(
        {
          csvBytes: fileBytes,
          rows: create.results.rowsCount,
          uploadMBps: mb(fileBytes / uploadS),
          importSeconds: importS,
          importMBps: mb(fileBytes / importS),
          exportSeconds: exportS,
          exportMBps: mb(exported.sizeBytes / exportS),
          exportSliced: exported.isSliced,
          exportBytes: exported.sizeBytes,
          emulatorPeakRssMiB: { beforeImport: rssBefore, afterImport: rssAfterImport, afterExport: peakRssMiB(proc.pid!) },
        },
        null,
        2,
      ),
    );
  } finally {
    proc.send('stop');
    await new Promise((r) => proc.once('exit', r));
    await minio.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') void child(JSON.parse(process.argv[3]!) as EmulatorOptions);
else
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
