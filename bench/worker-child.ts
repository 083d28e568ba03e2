// The bench's worker: test/harness/worker-child.ts (settings from the environment, the run's workflow bundle from
// SAPI_TEST_WORKFLOW_BUNDLE, READY once polling) plus the memory report of bench/lib/memory-report.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { serveMemoryReports } from './lib/memory-report';
import { startWorker } from '../src/worker';

/**
 * BENCH_HEAP_SAMPLING=<file>: V8's sampling heap profiler over the worker's life, counting objects already collected
 * too (what the process allocates, not what it keeps), written to <file> (`.heapprofile`, opens in Chrome's DevTools)
 * when the worker stops: for finding what keeps the garbage collector busy.
 */
async function heapSampling(): Promise<(() => Promise<void>) | undefined> {
  const out = process.env.BENCH_HEAP_SAMPLING;
  if (!out) return undefined;
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 32_768,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(out, JSON.stringify(profile));
    session.disconnect();
  };
}

void (async () => {
  const stopSampling = await heapSampling();
  const bundle = { code: readFileSync(process.env.SAPI_TEST_WORKFLOW_BUNDLE!, 'utf8') };
  const running = await startWorker({ worker: { workflowBundle: bundle, identity: process.env.SAPI_TEST_WORKER_IDENTITY } });
  serveMemoryReports();
  process.stdout.write('READY\n');
  process.once('SIGTERM', () => void running.stop());
  await running.done;
  await stopSampling?.();
})().catch((err: unknown) => {
  process.stderr.write(`worker-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
