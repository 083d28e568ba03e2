// The memory report of the bench's worker processes: when the file `<BENCH_MEMORY_REPORT>.request` appears, the
// process writes `process.memoryUsage()` and V8's heap spaces as JSON to BENCH_MEMORY_REPORT, after one full GC when
// node runs with --expose-gc, so the bench can split its RSS into V8 heap, external buffers and the rest. (Not a
// signal: the Temporal runtime shuts the worker down on SIGUSR2 as on SIGINT/SIGTERM.)
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from 'node:v8';

/** Answers memory-report requests while the process runs (no-op without BENCH_MEMORY_REPORT). */
export function serveMemoryReports(reportPath: string | undefined = process.env.BENCH_MEMORY_REPORT): void {
  if (!reportPath) return;
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
    // BENCH_HEAP_SNAPSHOT_DIR: also the main thread's heap snapshot and the modules it loaded, for finding what it keeps (after
    // the report: this run's RSS figures then include the snapshot's own memory)
    const snapshots = process.env.BENCH_HEAP_SNAPSHOT_DIR;
    if (snapshots) {
      const name = join(snapshots, basename(reportPath, '.json'));
      writeHeapSnapshot(`${name}.heapsnapshot`);
      writeFileSync(`${name}.modules.txt`, Object.keys(require.cache).sort().join('\n') + '\n');
    }
  }, 200);
  poll.unref();
}
