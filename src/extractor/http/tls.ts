/**
 * Connection pools for requests that need their own TLS or connect settings (`api.caCertificate`,
 * `api.#clientCertificate`, `api.http.connectTimeout`): one undici `Agent` per distinct setting, kept for the
 * process (a small cache, not state: any worker builds the same pool from the same configuration).
 * NOT workflow-safe (undici, node:crypto).
 */
import { createHash } from 'node:crypto';
import { Agent, type Dispatcher } from 'undici';
import { guardedAgent } from '../../security/network';
import type { InputPolicy } from '../../security/policy';

/** The settings that need a pool of their own; the client certificate is the resolved PEM (certificate + key). */
export interface ConnectionSettings {
  caCertificate: string | null;
  clientCertificate: string | null;
  connectTimeoutMs: number | null;
}

/** Distinct settings kept at most; the oldest pool is closed beyond it. */
const MAX_CUSTOM_POOLS = 16;

const pools = new Map<string, Agent>();

/**
 * The pool for these settings, or `fallback` when none is set. With `policy` (the plugin's extraction), its every
 * connection is checked against the worker's input policy, as the fallback pool's are.
 */
export function dispatcherFor(settings: ConnectionSettings, fallback: Dispatcher, policy?: InputPolicy): Dispatcher {
  const { caCertificate, clientCertificate, connectTimeoutMs } = settings;
  if (caCertificate === null && clientCertificate === null && connectTimeoutMs === null) return fallback;
  const key = createHash('sha256')
    .update(JSON.stringify([caCertificate, clientCertificate, connectTimeoutMs, policy ?? null]))
    .digest('hex');
  const known = pools.get(key);
  if (known) return known;
  const connect = {
    ...(caCertificate !== null ? { ca: caCertificate } : {}),
    // one PEM holds both: the TLS layer takes the certificate blocks for `cert` and the key block for `key`
    ...(clientCertificate !== null ? { cert: clientCertificate, key: clientCertificate } : {}),
    ...(connectTimeoutMs !== null ? { timeout: connectTimeoutMs } : {}),
  };
  const agent = (policy ? guardedAgent(policy, 'extraction request', { connectOptions: connect }) : new Agent({ connect })) as Agent;
  pools.set(key, agent);
  if (pools.size > MAX_CUSTOM_POOLS) {
    const [oldestKey, oldest] = pools.entries().next().value as [string, Agent];
    pools.delete(oldestKey);
    void oldest.close().catch(() => undefined);
  }
  return agent;
}

/** Closes every custom pool (tests, shutdown). */
export async function closeCustomPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((agent) => agent.close().catch(() => undefined)));
}
