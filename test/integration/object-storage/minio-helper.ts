/**
 * MinIO for the object-storage integration tests: the run's shared MinIO when the jest global setup started one
 * (`SAPI_TEST_STACK_FILE`), otherwise our own `.tools/bin/minio` (or `minio` on PATH) on free ports, stopped
 * after the file. Also: temporary credentials from MinIO's STS AssumeRole with a session policy, like the real
 * service issues them (upload: PutObject only; download: GetObject only).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { request } from 'undici';
import { freePorts } from '../../../src/dev/ports';
import { type TemporaryCredentials } from '../../../src/object-storage/s3-client';

export interface TestMinio {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A root S3 client (path-style). */
  admin: S3Client;
  stop(): Promise<void>;
}

export async function startTestMinio(): Promise<TestMinio> {
  const stateFile = process.env['SAPI_TEST_STACK_FILE'];
  if (stateFile && existsSync(stateFile)) {
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { minio: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string } };
    return withAdmin({ ...state.minio, stop: async () => undefined });
  }
  return withAdmin(await spawnMinio());
}

function withAdmin(m: Omit<TestMinio, 'admin'>): TestMinio {
  const admin = new S3Client({
    endpoint: m.endpoint,
    region: m.region,
    forcePathStyle: true,
    credentials: { accessKeyId: m.accessKeyId, secretAccessKey: m.secretAccessKey },
  });
  return {
    ...m,
    admin,
    async stop() {
      admin.destroy();
      await m.stop();
    },
  };
}

function minioBinary(): string {
  const local = resolve(__dirname, '../../../.tools/bin/minio');
  if (existsSync(local)) return local;
  return 'minio';
}

async function spawnMinio(): Promise<Omit<TestMinio, 'admin'>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sapi-os-minio-'));
  const [port, consolePort] = await freePorts(2);
  const accessKeyId = 'testroot';
  const secretAccessKey = 'testroot-secret-key';
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    minioBinary(),
    ['server', join(dataDir, 'data'), '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      env: { ...process.env, MINIO_ROOT_USER: accessKeyId, MINIO_ROOT_PASSWORD: secretAccessKey, MINIO_UPDATE: 'off', MINIO_CALLHOME_ENABLE: 'off' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (spawnError) throw new Error(`cannot start minio (${minioBinary()}): ${spawnError.message}; build it into .tools/bin or put it on PATH`);
    if (child.exitCode !== null) throw new Error(`minio exited with ${child.exitCode}: ${stderr}`);
    try {
      const res = await request(`${endpoint}/minio/health/ready`, { headersTimeout: 1000, bodyTimeout: 1000, reset: true });
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`minio did not become ready on ${endpoint}: ${stderr}`);
    }
    await sleep(100);
  }
  return {
    endpoint,
    region: 'us-east-1',
    accessKeyId,
    secretAccessKey,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = new AbortController();
        await Promise.race([exited, sleep(5000, undefined, { signal: timer.signal }).catch(() => undefined)]);
        timer.abort();
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function createBucket(minio: TestMinio, prefix: string): Promise<string> {
  const bucket = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`.toLowerCase();
  await minio.admin.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

/**
 * Temporary credentials from MinIO STS limited by a session policy to `actions` on `bucket/keyPrefix*`, like the
 * service's upload (PutObject) and download (GetObject) credentials.
 */
export async function temporaryCredentials(
  minio: TestMinio,
  bucket: string,
  keyPrefix: string,
  actions: string[],
  durationSeconds = 3600,
): Promise<TemporaryCredentials> {
  const sts = new STSClient({
    endpoint: minio.endpoint,
    region: minio.region,
    credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
  });
  try {
    const policy = {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: actions, Resource: [`arn:aws:s3:::${bucket}/${keyPrefix}*`] }],
    };
    const out = await sts.send(
      new AssumeRoleCommand({
        RoleArn: 'arn:xxx:xxx:xxx:xxxx',
        RoleSessionName: 'sapi-test',
        DurationSeconds: durationSeconds,
        Policy: JSON.stringify(policy),
      }),
    );
    const c = out.Credentials!;
    return { AccessKeyId: c.AccessKeyId!, SecretAccessKey: c.SecretAccessKey!, SessionToken: c.SessionToken!, Expiration: c.Expiration!.toISOString() };
  } finally {
    sts.destroy();
  }
}
