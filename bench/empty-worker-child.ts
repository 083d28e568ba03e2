// An empty SDK worker, the idle scenario's baseline: a NativeConnection and one Worker with the same options the
// `sapi-temporal worker` command gives (cache size, concurrency, heartbeat throttle: BENCH_EMPTY_WORKER_OPTIONS, from
// bench/lib/empty-worker.ts; no module of ours is loaded here, only the SDK) but no plugin, no activities
// and a one-workflow bundle (BENCH_EMPTY_BUNDLE; with BENCH_EMPTY_OURS_BUNDLE=1 the plugin's own workflow bundle,
// SAPI_TEST_WORKFLOW_BUNDLE), with BENCH_EMPTY_FLOOR=1 also the no-op activities of the concurrency scenario's SDK
// floor (bench/floor-activities.ts). Polls BENCH_EMPTY_TASK_QUEUE; prints READY. The memory report is
// bench/lib/memory-report.ts (BENCH_MEMORY_REPORT, `.request` file), as in bench/worker-child.ts.
import { readFileSync } from 'node:fs';
import { serveMemoryReports } from './lib/memory-report';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { floorActivities } from './floor-activities';

void (async () => {
  Runtime.install({ shutdownSignals: [] });
  const bundlePath = process.env.BENCH_EMPTY_OURS_BUNDLE === '1' ? process.env.SAPI_TEST_WORKFLOW_BUNDLE! : process.env.BENCH_EMPTY_BUNDLE!;
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  // the worker command's options, worked out by the bench (bench/lib/empty-worker.ts): nothing of ours loaded here
  const options = JSON.parse(process.env.BENCH_EMPTY_WORKER_OPTIONS!) as Partial<WorkerOptions>;
  const worker = await Worker.create({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: process.env.BENCH_EMPTY_TASK_QUEUE!,
    workflowBundle: { code: readFileSync(bundlePath, 'utf8') },
    ...(process.env.BENCH_EMPTY_FLOOR === '1' ? { activities: floorActivities } : {}),
    ...options,
  });
  serveMemoryReports();
  process.stdout.write('READY\n');
  process.once('SIGTERM', () => worker.shutdown());
  await worker.run();
  await connection.close();
})().catch((err: unknown) => {
  process.stderr.write(`empty-worker-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
