/**
 * The undici connection pools of a process part (the plugin's activities, a CLI run, a benchmark): one owner,
 * created lazily, closed together. The plugin's activity dependencies own one and close it with the worker.
 */
import type { Dispatcher } from 'undici';
import type { InputPolicy } from '../security/policy';
import { guardedAgent } from '../security/network';
import { undici } from '../undici-parts';

/** Sockets per origin for Storage API calls. Default 32 (200 concurrent imports share them). */
const STORAGE_CONNECTIONS_PER_ORIGIN = 32;
/** Sockets per origin for extracted APIs. Default 64. */
const EXTRACTOR_CONNECTIONS_PER_ORIGIN = 64;
/** Sockets per origin for HTTP(S) sources and presigned downloads. Default 16. */
const TRANSFER_CONNECTIONS_PER_ORIGIN = 16;
/** Idle keep-alive of pooled sockets. Default 30 s. */
const KEEP_ALIVE_MS = 30_000;
/** Connect timeout. Default 10 s. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Redirects followed for extracted APIs, sources and presigned URLs (never for Storage API calls). */
export const MAX_REDIRECTIONS = 5;

export interface HttpPools {
  /** Storage API and importer calls: keep-alive, bounded per origin, no redirects. */
  readonly storage: Dispatcher;
  /** Extracted APIs: keep-alive, follows redirects. */
  readonly extractor: Dispatcher;
  /** Presigned file URLs and object stores the Storage service named: follows redirects. */
  readonly transfers: Dispatcher;
  /** HTTP(S) sources a workflow input names: follows redirects; with a policy, every connection is checked against it. */
  readonly sources: Dispatcher;
  /** Closes every pool created so far (idempotent). */
  close(): Promise<void>;
}

/**
 * Pools created on first use. With `policy` (the plugin's activities always pass one), the pools of what workflow
 * inputs name (`extractor`, `sources`) open only the connections the worker's input policy allows.
 */
export function createHttpPools(policy?: InputPolicy): HttpPools {
  const agents: Dispatcher[] = [];
  const agent = (connections: number, keepAliveTimeout = KEEP_ALIVE_MS, guardField?: string): Dispatcher => {
    const options = { connections, keepAliveTimeout };
    const created =
      policy && guardField
        ? guardedAgent(policy, guardField, { ...options, connectOptions: { timeout: CONNECT_TIMEOUT_MS } })
        : new undici.Agent({ ...options, connect: { timeout: CONNECT_TIMEOUT_MS } });
    agents.push(created);
    return created;
  };
  let storage: Dispatcher | undefined;
  let extractor: Dispatcher | undefined;
  let transfers: Dispatcher | undefined;
  let sources: Dispatcher | undefined;
  let closed: Promise<void> | undefined;
  return {
    get storage() {
      return (storage ??= agent(STORAGE_CONNECTIONS_PER_ORIGIN));
    },
    get extractor() {
      return (extractor ??= agent(EXTRACTOR_CONNECTIONS_PER_ORIGIN, 10_000, 'extraction request').compose(
        undici.redirect({ maxRedirections: MAX_REDIRECTIONS }),
      ));
    },
    get transfers() {
      return (transfers ??= agent(TRANSFER_CONNECTIONS_PER_ORIGIN).compose(undici.redirect({ maxRedirections: MAX_REDIRECTIONS })));
    },
    get sources() {
      return (sources ??= agent(TRANSFER_CONNECTIONS_PER_ORIGIN, KEEP_ALIVE_MS, 'source').compose(undici.redirect({ maxRedirections: MAX_REDIRECTIONS })));
    },
    close() {
      closed ??= Promise.all(agents.map((a) => a.close())).then(() => undefined);
      return closed;
    },
  };
}

let processPools: HttpPools | undefined;

/**
 * The pools of callers that pass no dispatcher (library use outside the plugin, the plain extraction loop). The
 * plugin never uses them: its activities pass the pools their dependencies own. Close with
 * {@link closeDefaultHttpPools}.
 */
export function defaultHttpPools(): HttpPools {
  return (processPools ??= createHttpPools());
}

/** Closes the default pools (a later call to {@link defaultHttpPools} makes new ones). */
export async function closeDefaultHttpPools(): Promise<void> {
  const pools = processPools;
  processPools = undefined;
  await pools?.close();
}
