import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { findTemporal } from './tools';
import { freePorts, retryOnPortClash } from './ports';
import { ManagedProcess } from './process';
import { searchAttributeDefinitions } from '../contracts/search-attributes';

export interface StartTemporalOptions {
  /** Data folder: the SQLite file `<dataDir>/temporal.db` (survives restarts) and `<dataDir>/temporal.log`. */
  dataDir: string;
  /** gRPC port; 0 or absent: a free port. Pass the previous port to restart on the same address. */
  port?: number;
  uiPort?: number;
  host?: string;
  /** Namespace created at start (the `default` namespace always exists). */
  namespace?: string;
  /** Disable the web UI (tests). */
  headless?: boolean;
  /**
   * Codec server the web UI sends payloads to for decoding (`--ui-codec-endpoint`): the UI's browser calls
   * `<endpoint>/decode`, so the endpoint may carry a path (the dev stack puts the codec server's token there).
   */
  uiCodecEndpoint?: string;
  watchdogPidFile?: string;
  /**
   * Register the plugin's search attributes (`SapiTableId`, `SapiOperation`, …: `src/contracts/search-attributes.ts`)
   * at start, as `temporal operator search-attribute create` does on a real cluster. Default true.
   */
  searchAttributes?: boolean;
}

export interface TemporalHandle {
  /** `127.0.0.1:<port>`: `TEMPORAL_ADDRESS`. */
  address: string;
  port: number;
  /** Base URL of the server's HTTP API (`/api/v1/...`). */
  httpApiUrl: string;
  uiPort: number;
  namespace: string;
  uiUrl: string;
  logFile: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` with a SQLite file on free ports (picked again when one is taken before the
 * server binds it) and waits until the frontend serves the namespace and, unless headless, the web UI reaches it.
 */
export function startTemporal(options: StartTemporalOptions): Promise<TemporalHandle> {
  return retryOnPortClash(() => startTemporalOnce(options));
}

async function startTemporalOnce(options: StartTemporalOptions): Promise<TemporalHandle> {
  const host = options.host ?? '127.0.0.1';
  // the ports it is given, and distinct free ones for the rest (frontend, UI, HTTP API, metrics)
  const given = [options.port, options.uiPort].filter((p): p is number => !!p);
  const free = await freePorts(4 - given.length, host, given);
  const port = options.port || free.shift()!;
  const uiPort = options.uiPort || free.shift()!;
  const [httpPort, metricsPort] = free;
  const namespace = options.namespace ?? 'default';
  mkdirSync(options.dataDir, { recursive: true });
  const address = `${host}:${port}`;
  const logFile = join(options.dataDir, 'temporal.log');
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--http-port',
    String(httpPort),
    '--metrics-port',
    String(metricsPort),
    '--db-filename',
    join(options.dataDir, 'temporal.db'),
    '--log-level',
    'warn',
    // task queue priority and fairness (priority keys, fairness keys and weights of the plugin's runs), one
    // partition per queue so a dev server dispatches in their order
    '--dynamic-config-value',
    'matching.useNewMatcher=true',
    '--dynamic-config-value',
    'matching.enableFairness=true',
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
  ];
  if (namespace !== 'default') args.push('--namespace', namespace);
  if (options.searchAttributes ?? true) for (const definition of searchAttributeDefinitions()) args.push('--search-attribute', definition);
  if (options.headless) args.push('--headless');
  else if (options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  const temporal = await ManagedProcess.start({
    name: 'temporal',
    command: findTemporal().path,
    args,
    logFile,
    watchdogPidFile: options.watchdogPidFile,
    healthTimeoutMs: 90_000,
    // the gRPC port too: the HTTP answer may come from a sibling's server that got our HTTP port first (this one
    // then exits with "address already in use", and is started again on other ports)
    healthy: async () =>
      (await temporalHealthy(`http://${host}:${httpPort}`, namespace)) &&
      (await tcpOpen(host, port)) &&
      (options.headless || (await uiHealthy(`http://${host}:${uiPort}`, namespace))),
  });
  return {
    address,
    port,
    httpApiUrl: `http://${host}:${httpPort}`,
    uiPort,
    namespace,
    uiUrl: `http://${host}:${uiPort}`,
    logFile,
    process: temporal,
    stop: () => temporal.stop(),
  };
}

/**
 * True once the frontend answers and the namespace is registered. Asked over the server's HTTP API rather than
 * gRPC: a gRPC client left behind in the caller keeps its event loop alive for seconds after the stack stops.
 */
export async function temporalHealthy(httpApiUrl: string, namespace: string): Promise<boolean> {
  return httpOk(`${httpApiUrl}/api/v1/namespaces/${encodeURIComponent(namespace)}`);
}

/** True when something accepts TCP connections on `host:port` (the connection is closed at once). */
function tcpOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await request(url, {
      headersTimeout: 1000,
      bodyTimeout: 1000,
      reset: true,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

/**
 * True once the web UI's own server answers for the namespace: it reaches the frontend over a connection of its own,
 * which may come up after the frontend does; a page opened before that shows the UI's "Internal Error" and stays so.
 */
async function uiHealthy(uiUrl: string, namespace: string): Promise<boolean> {
  return httpOk(`${uiUrl}/api/v1/namespaces/${encodeURIComponent(namespace)}`);
}
