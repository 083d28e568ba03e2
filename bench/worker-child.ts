// The bench's worker: test/harness/worker-child.ts (settings from the environment, the run's workflow bundle from
// SAPI_TEST_WORKFLOW_BUNDLE, READY once polling) plus a memory report: when the file `<BENCH_MEMORY_REPORT>.request`
// appears it writes `process.memoryUsage()` and V8's heap spaces as JSON to BENCH_MEMORY_REPORT, after one full GC
// when node runs with --expose-gc, so the bench can split the process's RSS into V8 heap, external buffers and the
// rest. (Not a signal: the Temporal runtime shuts the worker down on SIGUSR2 as on SIGINT/SIGTERM.)
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { startWorker } from '../src/worker';

void (async () => {
  const bundle = { code: readFileSync(process.env.SAPI_TEST_WORKFLOW_BUNDLE!, 'utf8') };
  const running = await startWorker({ worker: { workflowBundle: bundle, identity: process.env.SAPI_TEST_WORKER_IDENTITY } });
  const reportPath = process.env.BENCH_MEMORY_REPORT;
  if (reportPath) {
    const poll = setInterval(() => {
      if (!existsSync(`${reportPath}.request`)) return;
      rmSync(`${reportPath}.request`, { force: true });
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      const heap = getHeapStatistics();
      const report = {
        gcBeforeReport: gc !== undefined,
        memoryUsage: process.memoryUsage(),
        heapLimit: heap.heap_size_limit,
        heapSpaces: getHeapSpaceStatistics().map((s) => ({ name: s.space_name, size: s.space_size, used: s.space_used_size })),
        mallocedMemory: heap.malloced_memory,
        externalMemory: heap.external_memory,
      };
      writeFileSync(`${reportPath}.tmp`, JSON.stringify(report));
      // rename: the reader never sees half a report
      renameSync(`${reportPath}.tmp`, reportPath);
    }, 200);
    poll.unref();
  }
  process.stdout.write('READY\n');
  process.once('SIGTERM', () => void running.stop());
  await running.done;
})().catch((err: unknown) => {
  process.stderr.write(`worker-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
