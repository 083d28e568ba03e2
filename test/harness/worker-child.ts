// A worker in its own process (so chaos tests can SIGKILL it): settings from the environment, the test run's
// workflow bundle from SAPI_TEST_WORKFLOW_BUNDLE. Prints READY once polling.
import { readFileSync } from 'node:fs';
import { startWorker } from '../../src/worker';

void (async () => {
  const bundle = { code: readFileSync(process.env.SAPI_TEST_WORKFLOW_BUNDLE!, 'utf8') };
  const running = await startWorker({ worker: { workflowBundle: bundle, identity: process.env.SAPI_TEST_WORKER_IDENTITY } });
  process.stdout.write('READY\n');
  process.once('SIGTERM', () => void running.stop());
  await running.done;
})().catch((err: unknown) => {
  process.stderr.write(`worker-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
