// The bench's worker: test/harness/worker-child.ts (settings from the environment, the run's workflow bundle from
// SAPI_TEST_WORKFLOW_BUNDLE, READY once polling) plus the memory report of bench/lib/memory-report.ts.
import { readFileSync } from 'node:fs';
import { serveMemoryReports } from './lib/memory-report';
import { startWorker } from '../src/worker';

void (async () => {
  const bundle = { code: readFileSync(process.env.SAPI_TEST_WORKFLOW_BUNDLE!, 'utf8') };
  const running = await startWorker({ worker: { workflowBundle: bundle, identity: process.env.SAPI_TEST_WORKER_IDENTITY } });
  serveMemoryReports();
  process.stdout.write('READY\n');
  process.once('SIGTERM', () => void running.stop());
  await running.done;
})().catch((err: unknown) => {
  process.stderr.write(`worker-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
