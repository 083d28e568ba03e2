import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startAzurite, type AzuriteHandle } from './azurite';
import { startMinio, type MinioHandle } from './minio';
import { startTemporal, type TemporalHandle } from './temporal';
import { startWatchdog, stopWatchdog } from './process';

/** Task queue the dev stack's worker polls and the CLI submits to, unless `TEMPORAL_TASK_QUEUE` says otherwise. */
export const DEFAULT_TASK_QUEUE = 'sapi-temporal';
/** Object-storage bucket the emulator keeps its files in. */
export const DEFAULT_FILES_BUCKET = 'sapi-files';

export interface DevStackOptions {
  /** Everything the stack writes (SQLite, MinIO objects, DuckDB, logs) lives under this folder. */
  dataDir: string;
  /** Temporal without its web UI (tests). Default false. */
  headless?: boolean;
  taskQueue?: string;
  /**
   * File storage of the emulator: `aws` (MinIO) or `azure` (Azurite, started besides MinIO, which stays for the
   * user's own `s3://` sources and destinations). Default `aws`.
   */
  backend?: DevBackend;
  /** Extra services started after Temporal and MinIO (emulator, worker); each adds its env and a stop. */
  services?: DevStackService[];
}

/** Object-storage backends the dev stack can give the emulator. */
export type DevBackend = 'aws' | 'azure';

/** A service started on top of Temporal and MinIO: returns the variables it publishes and how to stop it. */
export type DevStackService = (stack: DevStackCore) => Promise<{ env: Record<string, string>; stop(): Promise<void> }>;

export interface DevStackCore {
  dataDir: string;
  temporal: TemporalHandle;
  minio: MinioHandle;
  /** Running with `backend: 'azure'`. */
  azurite?: AzuriteHandle;
  backend: DevBackend;
  taskQueue: string;
  /** The variables published so far (`TEMPORAL_ADDRESS`, `AWS_ENDPOINT_URL_S3`, …). */
  env: Record<string, string>;
}

export interface DevStack extends DevStackCore {
  /** Writes `env` as `KEY=VALUE` lines that a shell can source. */
  writeEnvFile(path: string): void;
  /** Stops the services, then MinIO and Temporal; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the dev stack on free ports: the Temporal dev server (SQLite under `dataDir`, namespace `default`),
 * MinIO (generated root credentials), then the given services in order. A watchdog process kills everything if
 * the caller dies without calling `stop()`; a failure during start-up stops what was already started.
 */
export async function startDevStack(options: DevStackOptions): Promise<DevStack> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'stack.pids');
  startWatchdog(process.pid, pidFile);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    stopWatchdog(pidFile);
  };
  try {
    const backend = options.backend ?? 'aws';
    const [temporal, minio, azurite] = await Promise.all([
      startTemporal({ dataDir: join(dataDir, 'temporal'), headless: options.headless, watchdogPidFile: pidFile }),
      startMinio({ dataDir: join(dataDir, 'minio'), watchdogPidFile: pidFile }),
      backend === 'azure' ? startAzurite({ dataDir: join(dataDir, 'azurite'), watchdogPidFile: pidFile }) : undefined,
    ]);
    stops.push(() => temporal.stop(), () => minio.stop());
    if (azurite) stops.push(() => azurite.stop());
    const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    const core: DevStackCore = {
      dataDir,
      temporal,
      minio,
      azurite,
      backend,
      taskQueue,
      env: {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        // the dev server speaks plain text: TLS settings of the user's shell or Temporal profile must not apply to it
        TEMPORAL_TLS: 'false',
        TEMPORAL_TASK_QUEUE: taskQueue,
        TEMPORAL_UI_URL: options.headless ? '' : temporal.uiUrl,
        AWS_ENDPOINT_URL_S3: minio.endpoint,
        AWS_REGION: minio.region,
        SAPI_EMULATOR_BACKEND: backend,
        ...(azurite ? { AZURITE_BLOB_ENDPOINT: azurite.blobEndpoint } : {}),
      },
    };
    for (const service of options.services ?? []) {
      const started = await service(core);
      stops.push(() => started.stop());
      Object.assign(core.env, started.env);
    }
    let stopped: Promise<void> | undefined;
    return {
      ...core,
      writeEnvFile: (path) => writeFileSync(path, formatEnv(core.env)),
      stop: () => (stopped ??= stopAll()),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** `KEY=VALUE` lines, values single-quoted when they hold anything a shell would interpret. */
export function formatEnv(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([key, value]) => `${key}=${/^[A-Za-z0-9_./:@-]*$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`}`)
    .join('\n')
    .concat('\n');
}
