import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startEmulatorProcess, type EmulatorProcess } from '../../../src/dev/emulator-process';
import { createEmulator, type EmulatorHandle, type EmulatorOptions } from '../../../src/emulator';
import { TOKEN, OTHER_TOKEN, client, type Client } from '../../harness/emulator-api';
import { startTestMinio } from './minio-helper';

export * from '../../harness/emulator-api';

export type Minio = Awaited<ReturnType<typeof startTestMinio>>;

/** Options for an emulator on `minio`, in a fresh data folder unless one is given. */
export function emulatorOptions(minio: Minio, extra: Partial<EmulatorOptions> = {}): EmulatorOptions {
  return {
    port: 0,
    dataDir: extra.dataDir ?? mkdtempSync(join(tmpdir(), 'sapi-emulator-data-')),
    s3: { endpoint: minio.endpoint, region: minio.region, accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey, bucket: 'sapi-files' },
    tokens: [
      { token: TOKEN, id: 101, description: 'test token' },
      { token: OTHER_TOKEN, id: 102 },
    ],
    ...extra,
  };
}

export function rootS3(minio: Minio): S3Client {
  return new S3Client({
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
  });
}

export function s3With(minio: Minio, c: { AccessKeyId: string; SecretAccessKey: string; SessionToken: string }): S3Client {
  return new S3Client({
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken },
  });
}

export async function readObject(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await res.Body!.transformToByteArray());
}

/** One MinIO and one emulator for a test file; `restart` re-creates the emulator on the same data folder. */
export function useEmulator(extra: Partial<EmulatorOptions> = {}) {
  const env = {} as { minio: Minio; emulator: EmulatorHandle; api: Client; dataDir: string; s3: S3Client };
  beforeAll(async () => {
    env.minio = await startTestMinio();
    const options = emulatorOptions(env.minio, extra);
    env.dataDir = options.dataDir;
    env.emulator = await createEmulator(options);
    env.api = client(env.emulator);
    env.s3 = rootS3(env.minio);
  });
  afterAll(async () => {
    await env.emulator?.close();
    env.s3?.destroy();
    await env.minio?.cleanup();
    if (env.dataDir) rmSync(env.dataDir, { recursive: true, force: true });
  });
  return env;
}

/** Memory of a process from `/proc/<pid>/status`, in MiB: now (`VmRSS`) and its peak (`VmHWM`). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

/** Starts measuring a new peak: the kernel resets `VmHWM` to the current RSS (`clear_refs` 5). */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/**
 * One MinIO and one emulator in a process of its own (the dev stack's {@link startEmulatorProcess}) for a test file:
 * its memory can be measured, and a load that crashes it shows as a restart instead of ending the test run.
 */
export function useEmulatorProcess(extra: Partial<EmulatorOptions> = {}) {
  const env = {} as { minio: Minio; emulator: EmulatorProcess; api: Client; dataDir: string; restarts: string[] };
  beforeAll(async () => {
    env.minio = await startTestMinio();
    const options = emulatorOptions(env.minio, extra);
    env.dataDir = options.dataDir;
    env.restarts = [];
    env.emulator = await startEmulatorProcess({ emulator: options, logFile: join(options.dataDir, 'emulator.log'), onRestart: (m) => env.restarts.push(m) });
    env.api = client(env.emulator);
  });
  afterAll(async () => {
    await env.emulator?.stop();
    await env.minio?.cleanup();
    if (env.dataDir) rmSync(env.dataDir, { recursive: true, force: true });
  });
  return env;
}
