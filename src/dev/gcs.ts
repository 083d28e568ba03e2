import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { findFakeGcs } from './tools';
import { freePort } from './ports';
import { ManagedProcess } from './process';

/** Project id the dev stack's fake-gcs-server reports (and the emulator hands out in `gcsCredentials.projectId`). */
const FAKE_GCS_PROJECT = 'sapi-dev';
/** Attempts at a port we picked ourselves before giving up (another service may bind it between pick and bind). */
const PORT_ATTEMPTS = 5;

interface StartFakeGcsOptions {
  /** Data folder: objects live in `<dataDir>/data` (filesystem backend: they survive restarts), the log in `<dataDir>/fake-gcs.log`. */
  dataDir: string;
  /** 0 or absent: a free port, picked again when another process takes it first. */
  port?: number;
  host?: string;
  watchdogPidFile?: string;
}

export interface FakeGcsHandle {
  /** `http://127.0.0.1:<port>`: the JSON API root (`/storage/v1/…`, `/upload/storage/v1/…`), as `STORAGE_EMULATOR_HOST`. */
  endpoint: string;
  projectId: string;
  logFile: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * Starts fake-gcs-server (plain HTTP, filesystem backend) and waits until its JSON API lists buckets. fake-gcs-server
 * accepts any bearer token, or none: it authorises nothing.
 */
export async function startFakeGcs(options: StartFakeGcsOptions): Promise<FakeGcsHandle> {
  const host = options.host ?? '127.0.0.1';
  const data = join(options.dataDir, 'data');
  mkdirSync(data, { recursive: true });
  const logFile = join(options.dataDir, 'fake-gcs.log');
  // A bucket only this data folder has (the filesystem backend lists the root's folders as buckets): the health check
  // looks for it, so another fake-gcs-server that holds the port we picked is never taken for ours.
  const marker = `sapi-instance-${createHash('sha1').update(data).digest('hex').slice(0, 12)}`;
  mkdirSync(join(data, marker), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const port = options.port || (await freePort(host));
    const endpoint = `http://${host}:${port}`;
    try {
      const server = await ManagedProcess.start({
        name: 'fake-gcs-server',
        command: findFakeGcs().path,
        args: ['-scheme', 'http', '-host', host, '-port', String(port), '-backend', 'filesystem', '-filesystem-root', data, '-log-level', 'warn'],
        logFile,
        watchdogPidFile: options.watchdogPidFile,
        healthy: async () => {
          const res = await request(`${endpoint}/storage/v1/b?project=${FAKE_GCS_PROJECT}`, { headersTimeout: 1000, bodyTimeout: 1000, reset: true });
          const body = await res.body.text();
          return res.statusCode === 200 && body.includes(`"${marker}"`);
        },
      });
      return { endpoint, projectId: FAKE_GCS_PROJECT, logFile, process: server, stop: () => server.stop() };
    } catch (err) {
      const lost = !options.port && attempt < PORT_ATTEMPTS && /address already in use/i.test(err instanceof Error ? err.message : String(err));
      if (!lost) throw err;
    }
  }
}
