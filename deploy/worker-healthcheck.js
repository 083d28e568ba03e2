#!/usr/bin/env node
// Health of a sapi-temporal worker container (the image's HEALTHCHECK): healthy when Temporal lists a poller of this
// host on the worker's workflow task queue that polled within the last two minutes. The SDK names pollers
// `<pid>@<hostname>` and a container's hostname is its own, so each replica checks itself, not the cluster.
// Reads the worker's own TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE (SAPI_HEALTHCHECK_HOST and
// SAPI_HEALTHCHECK_TIMEOUT_MS, default 8000, for tests). Exit 0 healthy, 1 not.
'use strict';
const { hostname } = require('node:os');
const { Connection } = require('@temporalio/client');

/** A long poll lasts up to about 70 s before the worker polls again: older than this means it stopped polling. */
const MAX_POLL_AGE_MS = 120_000;
const TIMEOUT_MS = Number(process.env.SAPI_HEALTHCHECK_TIMEOUT_MS || 8_000);

const toMs = (ts) => (ts ? Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6) : 0);

async function main() {
  const address = process.env.TEMPORAL_ADDRESS || 'localhost:7233';
  const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
  const taskQueue = process.env.TEMPORAL_TASK_QUEUE || 'sapi-temporal';
  const host = process.env.SAPI_HEALTHCHECK_HOST || hostname();
  const connection = await Connection.connect({ address, connectTimeout: TIMEOUT_MS });
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
      throw new Error(`unhealthy: ${seen} from host ${host} on task queue ${taskQueue} (namespace ${namespace} at ${address})`);
    }
    process.stdout.write(`healthy: ${fresh.map((p) => p.identity).join(', ')} polling ${taskQueue}\n`);
  } finally {
    await connection.close();
  }
}

setTimeout(() => {
  process.stderr.write(`unhealthy: no answer from Temporal within ${TIMEOUT_MS / 1000} s\n`);
  process.exit(1);
}, TIMEOUT_MS).unref();
main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
