#!/usr/bin/env node
// Health of a sapi-temporal worker container (the image's HEALTHCHECK): healthy when Temporal lists a poller of this
// host on the worker's workflow task queue that polled within the last two minutes. The SDK names pollers
// `<pid>@<hostname>` and a container's hostname is its own, so each replica checks itself, not the cluster.
// Connects as the worker does: the worker's own TEMPORAL_* settings read by @temporalio/envconfig (address,
// namespace, TEMPORAL_API_KEY, TEMPORAL_TLS and TEMPORAL_TLS_*, TEMPORAL_GRPC_META_*, TEMPORAL_PROFILE and
// TEMPORAL_CONFIG_FILE), so a worker against Temporal Cloud (API key or mTLS) is checked through the same door.
// Also TEMPORAL_TASK_QUEUE; SAPI_HEALTHCHECK_HOST and SAPI_HEALTHCHECK_TIMEOUT_MS (default 8000) for tests.
// Exit 0 healthy, 1 not.
'use strict';
// grpc-js sends an IP address as TLS server name: Node's DEP0123 warning would end up in every check's output
process.noDeprecation = true;
const { hostname } = require('node:os');

/** A long poll lasts up to about 70 s before the worker polls again: older than this means it stopped polling. */
const MAX_POLL_AGE_MS = 120_000;

const toMs = (ts) => (ts ? Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6) : 0);

/**
 * What the check connects with, from `env`: the worker's connection settings as envconfig resolves them (profile,
 * then variables), the worker's defaults, and the queue and host to look for.
 */
function healthcheckSettings(env = process.env) {
  const { loadClientConnectConfig } = require('@temporalio/envconfig');
  const vars = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => value !== undefined && (key.startsWith('TEMPORAL_') || ['HOME', 'XDG_CONFIG_HOME', 'APPDATA'].includes(key))),
  );
  const { connectionOptions, namespace } = loadClientConnectConfig({ overrideEnvVars: vars });
  const connection = Object.fromEntries(
    Object.entries({ ...connectionOptions, address: connectionOptions.address || 'localhost:7233' }).filter(([, value]) => value !== undefined),
  );
  return {
    connection,
    namespace: namespace || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'sapi-temporal',
    host: env.SAPI_HEALTHCHECK_HOST || hostname(),
  };
}

/** `TLS, API key` / `plain text`: how the check connected, for its messages. */
function security(connection) {
  const tls = connection.tls === undefined ? connection.apiKey !== undefined : Boolean(connection.tls);
  return [
    tls ? (connection.tls && connection.tls.clientCertPair ? 'mTLS' : 'TLS') : 'plain text',
    ...(connection.apiKey !== undefined ? ['API key'] : []),
  ].join(', ');
}

async function main(timeoutMs) {
  const { Connection } = require('@temporalio/client');
  const { connection: options, namespace, taskQueue, host } = healthcheckSettings();
  let connection;
  try {
    connection = await Connection.connect({ ...options, connectTimeout: timeoutMs });
  } catch (err) {
    throw new Error(`unhealthy: cannot reach Temporal at ${options.address} (${security(options)}): ${causeOf(err)}`);
  }
  try {
    const { pollers } = await connection.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue, kind: 1 }, // TASK_QUEUE_KIND_NORMAL
      taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
    });
    const now = Date.now();
    const mine = (pollers ?? []).filter((poller) => (poller.identity ?? '').endsWith(`@${host}`));
    const fresh = mine.filter((poller) => now - toMs(poller.lastAccessTime) <= MAX_POLL_AGE_MS);
    if (fresh.length === 0) {
      const seen = mine.length ? `last poll ${Math.round((now - Math.max(...mine.map((p) => toMs(p.lastAccessTime)))) / 1000)} s ago` : 'no poller';
      throw new Error(`unhealthy: ${seen} from host ${host} on task queue ${taskQueue} (namespace ${namespace} at ${options.address})`);
    }
    process.stdout.write(`healthy: ${fresh.map((p) => p.identity).join(', ')} polling ${taskQueue}\n`);
  } finally {
    await connection.close();
  }
}

/** The error's message with those of its causes (a gRPC error says why only in its cause). */
function causeOf(err) {
  const parts = [];
  for (let current = err, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current.message && !parts.some((part) => part.includes(current.message))) parts.push(current.message);
  }
  return parts.join(': ') || String(err);
}

if (require.main === module) {
  const timeoutMs = Number(process.env.SAPI_HEALTHCHECK_TIMEOUT_MS || 8_000);
  setTimeout(() => {
    process.stderr.write(`unhealthy: no answer from Temporal within ${timeoutMs / 1000} s\n`);
    process.exit(1);
  }, timeoutMs).unref();
  main(timeoutMs).then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

module.exports = { healthcheckSettings };
