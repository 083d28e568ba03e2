import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startAzurite, type AzuriteHandle } from './azurite';
import { startFakeGcs, type FakeGcsHandle } from './gcs';
import { EncryptionCodec } from '../codec/encryption-codec';
import { CODEC_KEYS_ENV, codecKeysEnv, loadCodecKeys, type CodecKey } from '../codec/keys';
import { CODEC_SERVER_TOKEN_ENV, createCodecServer } from '../codec/server';
import { freePort, retryOnPortClash } from './ports';
import { startMinio, type MinioHandle } from './minio';
import { startTemporal, type TemporalHandle } from './temporal';
import { startWatchdog, stopWatchdog } from './process';

/** Task queue the dev stack's worker polls and the CLI submits to, unless `TEMPORAL_TASK_QUEUE` says otherwise. */
export const DEFAULT_TASK_QUEUE = 'sapi-temporal';
/** Object-storage bucket the emulator keeps its files in. */
export const DEFAULT_FILES_BUCKET = 'sapi-files';

/**
 * MinIO in a stack: {@link MinioHandle} when it always runs (the default), `MinioHandle | undefined` where it may have
 * been left out (`minio: false`).
 */
export type DevStackMinio = MinioHandle | undefined;

interface DevStackOptions<Minio extends DevStackMinio = MinioHandle> {
  /** Everything the stack writes (SQLite, MinIO objects, DuckDB, logs) lives under this folder. */
  dataDir: string;
  /** Temporal without its web UI (tests). Default false. */
  headless?: boolean;
  taskQueue?: string;
  /**
   * File storage of the emulator: `aws` (MinIO), `azure` (Azurite) or `gcp` (fake-gcs-server); Azurite and
   * fake-gcs-server start besides MinIO, which stays for the user's own `s3://` sources and destinations unless
   * `minio` is false. Default `aws`.
   */
  backend?: DevBackend;
  /**
   * Start MinIO. Default true. False (only with `azure` or `gcp`, whose files are not in MinIO) runs the stack
   * without it, so it need not be installed: no `AWS_ENDPOINT_URL_S3` is published, and the stack's worker has no
   * object store for `s3://` sources and destinations (the demo, which uses local files only, runs so).
   */
  minio?: boolean;
  /** Extra services started after Temporal and MinIO (emulator, worker); each adds its env and a stop. */
  services?: Array<DevStackService<Minio>>;
  /**
   * Folders the stack's worker (and any worker of its env) may read sources from and write exports to
   * (`SAPI_LOCAL_ROOTS`). Default: `SAPI_LOCAL_ROOTS` of the environment, else the folder the stack was started in.
   */
  localRoots?: readonly string[];
  /**
   * Payload encryption (off when absent): a codec server with these keys starts before Temporal, and the Temporal
   * UI decodes payloads through it (`--ui-codec-endpoint`, its origin allowed by CORS).
   */
  codec?: DevStackCodecOptions;
}

/**
 * The dev stack's opt-ins of the input policy (docs/security.md): local paths under its working folder, loopback
 * addresses (its sample API and the user's local test servers), and its own services refused by name (Temporal's
 * HTTP API and UI, the codec server; the Storage, MinIO and Temporal gRPC addresses the worker knows already). Values
 * the user set in the environment win.
 */
function devPolicyEnv(options: Pick<DevStackOptions, 'localRoots'>, temporal: TemporalHandle, codecUrl: string | undefined): Record<string, string> {
  const roots = options.localRoots ?? (process.env.SAPI_LOCAL_ROOTS ? process.env.SAPI_LOCAL_ROOTS.split(',') : [process.cwd()]);
  const internal = [
    temporal.httpApiUrl,
    temporal.uiUrl,
    ...(codecUrl ? [codecUrl] : []),
    ...(process.env.SAPI_INTERNAL_URLS ? [process.env.SAPI_INTERNAL_URLS] : []),
  ];
  return {
    SAPI_LOCAL_ROOTS: roots.join(','),
    SAPI_ALLOWED_NETWORKS: process.env.SAPI_ALLOWED_NETWORKS ?? DEV_ALLOWED_NETWORKS,
    SAPI_INTERNAL_URLS: internal.join(','),
  };
}

/** Networks the dev stack's worker may reach although the input policy refuses them by default: loopback only. */
const DEV_ALLOWED_NETWORKS = '127.0.0.0/8,::1/128';

/** Environment variable the dev stack publishes with the codec server's base URL (no token in it). */
const CODEC_SERVER_URL_ENV = 'SAPI_CODEC_SERVER_URL';

interface DevStackCodecOptions {
  /** The payload keys (first encrypts, all decrypt): the same the stack's worker and its clients use. */
  keys: readonly CodecKey[];
  /** Bearer token of the codec server; generated (48 hex digits) when absent. */
  token?: string;
  /**
   * Variables that give clients these keys, published in the stack's env (and its env file): what the user set,
   * e.g. `{SAPI_CODEC_KEY_FILE: '/abs/keys'}`. Default `SAPI_CODEC_KEYS` listing `keys`.
   */
  clientEnv?: Record<string, string>;
}

/**
 * The stack's codec as `sapi-temporal dev` and the demo configure it from `env`: keys from `SAPI_CODEC_KEYS` or
 * `SAPI_CODEC_KEY_FILE` (`undefined`, no codec, when neither is set), the token from `SAPI_CODEC_SERVER_TOKEN` or
 * generated, and the same key variable handed on to the stack's env.
 */
export function devCodecFromEnv(env: NodeJS.ProcessEnv = process.env): DevStackCodecOptions | undefined {
  const keys = loadCodecKeys(env);
  if (!keys) return undefined;
  const token = env[CODEC_SERVER_TOKEN_ENV]?.trim();
  return { keys, token: token === '' ? undefined : token, clientEnv: codecKeysEnv(env) };
}

/** The dev stack's codec server. */
interface DevCodecServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`, for `temporal workflow show --codec-endpoint` (with `--codec-auth`). */
  url: string;
  token: string;
  /**
   * What the Temporal UI was given: `<url>/<token>`. The UI sends no header of its own, so the token travels as the
   * path segment before `/decode`, which the codec server accepts as the bearer token. Absent when headless.
   */
  uiEndpoint?: string;
}

/** Object-storage backends the dev stack can give the emulator. */
export type DevBackend = 'aws' | 'azure' | 'gcp';

/** A service started on top of Temporal and MinIO (when it runs): returns the variables it publishes and how to stop it. */
export type DevStackService<Minio extends DevStackMinio = MinioHandle> = (
  stack: DevStackCore<Minio>,
) => Promise<{ env: Record<string, string>; stop(): Promise<void> }>;

interface DevStackCore<Minio extends DevStackMinio = MinioHandle> {
  dataDir: string;
  temporal: TemporalHandle;
  /** Absent when the stack was started with `minio: false`. */
  minio: Minio;
  /** Running with `backend: 'azure'`. */
  azurite?: AzuriteHandle;
  /** Running with `backend: 'gcp'`. */
  fakeGcs?: FakeGcsHandle;
  backend: DevBackend;
  taskQueue: string;
  /** Present when the stack was started with `codec`. */
  codecServer?: DevCodecServer;
  /** The variables published so far (`TEMPORAL_ADDRESS`, `AWS_ENDPOINT_URL_S3`, …). */
  env: Record<string, string>;
}

export interface DevStack<Minio extends DevStackMinio = MinioHandle> extends DevStackCore<Minio> {
  /** Writes `env` as `KEY=VALUE` lines that a shell can source. */
  writeEnvFile(path: string): void;
  /** Stops the services, then MinIO (when it runs) and Temporal; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the dev stack on free ports: the Temporal dev server (SQLite under `dataDir`, namespace `default`),
 * MinIO (generated root credentials; not with `minio: false`) and the backend's storage emulator side by side, then
 * the given services in order. A watchdog process kills everything if
 * the caller dies without calling `stop()`; a failure during start-up stops what was already started.
 */
export function startDevStack(options: DevStackOptions & { minio?: true }): Promise<DevStack>;
export function startDevStack(options: DevStackOptions<DevStackMinio> & { minio: boolean }): Promise<DevStack<DevStackMinio>>;
export async function startDevStack(options: DevStackOptions | DevStackOptions<DevStackMinio>): Promise<DevStack<DevStackMinio>> {
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
    const withMinio = options.minio ?? true;
    if (!withMinio && backend === 'aws') {
      throw new Error('the dev stack\'s backend "aws" keeps the emulator\'s files in MinIO: it cannot run with minio: false (use backend "azure" or "gcp")');
    }
    // started side by side; each registers its stop as soon as it is up, and a failure is thrown only once the others
    // have settled, so that stopAll() stops them too instead of leaving them running
    const stopsWhenUp = <T extends { stop(): Promise<void> }>(handle: T): T => (stops.push(() => handle.stop()), handle);
    const [{ temporal, codecServer }, minio, azurite, fakeGcs] = await allOrThrow([
      startTemporalWithCodec(join(dataDir, 'temporal'), options, pidFile, stops).then((started) => (stopsWhenUp(started.temporal), started)),
      withMinio ? startMinio({ dataDir: join(dataDir, 'minio'), watchdogPidFile: pidFile }).then(stopsWhenUp) : undefined,
      backend === 'azure' ? startAzurite({ dataDir: join(dataDir, 'azurite'), watchdogPidFile: pidFile }).then(stopsWhenUp) : undefined,
      backend === 'gcp' ? startFakeGcs({ dataDir: join(dataDir, 'fake-gcs'), watchdogPidFile: pidFile }).then(stopsWhenUp) : undefined,
    ] as const);
    const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    const core: DevStackCore<DevStackMinio> = {
      dataDir,
      temporal,
      minio,
      azurite,
      fakeGcs,
      backend,
      taskQueue,
      env: {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        // the dev server speaks plain text: TLS settings of the user's shell or Temporal profile must not apply to it
        TEMPORAL_TLS: 'false',
        TEMPORAL_TASK_QUEUE: taskQueue,
        TEMPORAL_UI_URL: options.headless ? '' : temporal.uiUrl,
        ...(minio ? { AWS_ENDPOINT_URL_S3: minio.endpoint, AWS_REGION: minio.region } : {}),
        SAPI_EMULATOR_BACKEND: backend,
        ...(azurite ? { AZURITE_BLOB_ENDPOINT: azurite.blobEndpoint } : {}),
        // the variable Google's clients (and the worker) read to reach an emulator instead of storage.googleapis.com
        ...(fakeGcs ? { STORAGE_EMULATOR_HOST: fakeGcs.endpoint } : {}),
        ...(options.codec && codecServer ? codecEnv(options.codec, codecServer) : {}),
        ...devPolicyEnv(options, temporal, codecServer?.url),
      },
      codecServer,
    };
    // the first overload's services may need MinIO: they come only without `minio: false`, so core.minio is there
    for (const service of (options.services ?? []) as Array<DevStackService<DevStackMinio>>) {
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

/** Like `Promise.all`, but waits for every promise to settle before throwing the first failure. */
async function allOrThrow<T extends readonly unknown[]>(promises: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/**
 * Temporal, and before it the codec server when asked for: the UI is started with the codec server's address, and the
 * codec server must know the UI's origin, so both are started again on a fresh UI port when that port was taken.
 */
function startTemporalWithCodec(
  dataDir: string,
  options: Pick<DevStackOptions, 'headless' | 'codec'>,
  watchdogPidFile: string,
  stops: Array<() => Promise<void>>,
): Promise<{ temporal: TemporalHandle; codecServer?: DevCodecServer }> {
  return retryOnPortClash(async () => {
    const uiPort = options.headless ? undefined : await freePort();
    const codecStops: Array<() => Promise<void>> = [];
    const codecServer = options.codec ? await startCodecServer(options.codec, uiPort, codecStops) : undefined;
    try {
      const temporal = await startTemporal({ dataDir, headless: options.headless, uiPort, uiCodecEndpoint: codecServer?.uiEndpoint, watchdogPidFile });
      stops.push(...codecStops);
      return { temporal, codecServer };
    } catch (err) {
      for (const stop of codecStops) await stop();
      throw err;
    }
  });
}

async function startCodecServer(options: DevStackCodecOptions, uiPort: number | undefined, stops: Array<() => Promise<void>>): Promise<DevCodecServer> {
  if (options.keys.length === 0) throw new Error("the dev stack's codec needs at least one key (SAPI_CODEC_KEYS=id:base64key)");
  const token = options.token ?? randomBytes(24).toString('hex');
  // the UI is served on 127.0.0.1 (the address the stack prints) but people also type localhost
  const corsOrigins = uiPort === undefined ? [] : [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`];
  const server = await createCodecServer({ codec: new EncryptionCodec(options.keys), token, corsOrigins });
  stops.push(() => server.close());
  return { url: server.url, token, uiEndpoint: uiPort === undefined ? undefined : `${server.url}/${encodeURIComponent(token)}` };
}

function codecEnv(options: DevStackCodecOptions, server: DevCodecServer): Record<string, string> {
  const keys = options.clientEnv ?? { [CODEC_KEYS_ENV]: options.keys.map((key) => `${key.id}:${key.key}`).join(',') };
  return { ...keys, [CODEC_SERVER_URL_ENV]: server.url, [CODEC_SERVER_TOKEN_ENV]: server.token };
}

/** `KEY=VALUE` lines, values single-quoted when they hold anything a shell would interpret. */
function formatEnv(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([key, value]) => `${key}=${/^[A-Za-z0-9_./:@-]*$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`}`)
    .join('\n')
    .concat('\n');
}
