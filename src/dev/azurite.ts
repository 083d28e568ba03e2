import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { findAzurite } from './tools';
import { freePort, retryOnPortClash } from './ports';
import { ManagedProcess } from './process';

/** Account the dev stack creates in Azurite (manifests then read `azure://sapidev.blob.core.windows.net/…`). */
const AZURITE_ACCOUNT = 'sapidev';

interface StartAzuriteOptions {
  /** Data folder: blobs live in `<dataDir>/data`, the log in `<dataDir>/azurite.log`. */
  dataDir: string;
  /** 0 or absent: a free port. */
  port?: number;
  host?: string;
  /** Base64 shared key of the account; generated when absent (pass it again on restart). */
  accountKey?: string;
  watchdogPidFile?: string;
}

export interface AzuriteHandle {
  /** `http://127.0.0.1:<port>/<account>`: the account's blob endpoint (path-style). */
  blobEndpoint: string;
  accountName: string;
  accountKey: string;
  logFile: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * Starts Azurite's blob service on a free port with one account of its own (`AZURITE_ACCOUNTS`, not the well-known
 * development key) and waits until it answers.
 */
export function startAzurite(options: StartAzuriteOptions): Promise<AzuriteHandle> {
  // a port the caller chose is not picked again
  return options.port ? startAzuriteOnce(options) : retryOnPortClash(() => startAzuriteOnce(options));
}

async function startAzuriteOnce(options: StartAzuriteOptions): Promise<AzuriteHandle> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port || (await freePort(host));
  const accountKey = options.accountKey ?? randomBytes(64).toString('base64');
  const data = join(options.dataDir, 'data');
  mkdirSync(data, { recursive: true });
  const logFile = join(options.dataDir, 'azurite.log');
  const base = `http://${host}:${port}`;
  const azurite = await ManagedProcess.start({
    name: 'azurite',
    command: findAzurite().path,
    // --skipApiVersionCheck: the SDK may speak a newer service version than this Azurite knows; --loose ignores
    // headers Azurite does not implement instead of refusing the request
    args: ['--blobHost', host, '--blobPort', String(port), '--location', data, '--silent', '--skipApiVersionCheck', '--loose', '--disableTelemetry'],
    env: { ...process.env, AZURITE_ACCOUNTS: `${AZURITE_ACCOUNT}:${accountKey}` },
    logFile,
    watchdogPidFile: options.watchdogPidFile,
    healthy: async () => {
      // any HTTP answer (an anonymous request is refused) means the blob service listens
      const res = await request(`${base}/${AZURITE_ACCOUNT}?comp=list`, { headersTimeout: 1000, bodyTimeout: 1000, reset: true });
      await res.body.dump();
      return res.statusCode > 0;
    },
  });
  return { blobEndpoint: `${base}/${AZURITE_ACCOUNT}`, accountName: AZURITE_ACCOUNT, accountKey, logFile, process: azurite, stop: () => azurite.stop() };
}
