import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { findMinio } from './tools';
import { freePorts, retryOnPortClash } from './ports';
import { ManagedProcess } from './process';

/** MinIO's default region; the emulator and the S3 clients use the same. */
const MINIO_REGION = 'us-east-1';

interface StartMinioOptions {
  /** Data folder: objects live in `<dataDir>/data`, the log in `<dataDir>/minio.log`. */
  dataDir: string;
  /** 0 or absent: a free port. */
  port?: number;
  host?: string;
  /** Root credentials; generated when absent (kept for restarts by passing them again). */
  accessKeyId?: string;
  secretAccessKey?: string;
  watchdogPidFile?: string;
  /** `<name>:<base64 of 32 bytes>`; generated when absent. Pass the same one on restart to read encrypted objects. */
  kmsSecretKey?: string;
}

export interface MinioHandle {
  /** `http://127.0.0.1:<port>`: use as `AWS_ENDPOINT_URL_S3`, path-style. */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  consoleUrl: string;
  logFile: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** Starts a MinIO server on a free port and waits until `/minio/health/ready` answers 200. */
export function startMinio(options: StartMinioOptions): Promise<MinioHandle> {
  return retryOnPortClash(() => startMinioOnce(options));
}

async function startMinioOnce(options: StartMinioOptions): Promise<MinioHandle> {
  const host = options.host ?? '127.0.0.1';
  const [port, consolePort] = options.port ? [options.port, ...(await freePorts(1, host, [options.port]))] : await freePorts(2, host);
  const accessKeyId = options.accessKeyId ?? `sapi${randomBytes(6).toString('hex')}`;
  const secretAccessKey = options.secretAccessKey ?? randomBytes(24).toString('base64url');
  mkdirSync(join(options.dataDir, 'data'), { recursive: true });
  const endpoint = `http://${host}:${port}`;
  const logFile = join(options.dataDir, 'minio.log');
  const minio = await ManagedProcess.start({
    name: 'minio',
    command: findMinio().path,
    args: ['server', join(options.dataDir, 'data'), '--address', `${host}:${port}`, '--console-address', `${host}:${consolePort}`, '--quiet'],
    env: {
      ...process.env,
      MINIO_ROOT_USER: accessKeyId,
      MINIO_ROOT_PASSWORD: secretAccessKey,
      MINIO_REGION,
      MINIO_UPDATE: 'off',
      MINIO_CALLHOME_ENABLE: 'off',
      // a local KMS key: clients that ask for SSE-S3 (AES256), like the official Python client, need one
      MINIO_KMS_SECRET_KEY: options.kmsSecretKey ?? `sapi-dev-key:${randomBytes(32).toString('base64')}`,
    },
    logFile,
    watchdogPidFile: options.watchdogPidFile,
    healthy: async () => {
      const res = await request(`${endpoint}/minio/health/ready`, { headersTimeout: 1000, bodyTimeout: 1000, reset: true });
      await res.body.dump();
      return res.statusCode === 200;
    },
  });
  return {
    endpoint,
    region: MINIO_REGION,
    accessKeyId,
    secretAccessKey,
    consoleUrl: `http://${host}:${consolePort}`,
    logFile,
    process: minio,
    stop: () => minio.stop(),
  };
}
