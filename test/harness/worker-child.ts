// A worker in its own process (so chaos tests can SIGKILL it): settings from the environment, the test run's
// workflow bundle from SAPI_TEST_WORKFLOW_BUNDLE (unset: the worker bundles the plugin's workflows itself, with the
// plugin's workflow interceptor modules, as a deployed worker does; SAPI_TEST_WORKFLOWS_PATH: another workflow module
// it bundles itself). Prints READY once polling.
import { readFileSync } from 'node:fs';
import type { WorkerOptions } from '@temporalio/worker';
import { startWorker } from '../../src/worker';

void (async () => {
  const bundlePath = process.env.SAPI_TEST_WORKFLOW_BUNDLE;
  const workflowsPath = process.env.SAPI_TEST_WORKFLOWS_PATH;
  const bundle = bundlePath ? { workflowBundle: { code: readFileSync(bundlePath, 'utf8') } } : workflowsPath ? { workflowsPath } : {};
  // a short sticky timeout: the tests SIGKILL this process, and a workflow task queued on a dead worker's sticky
  // queue waits that long before it goes to the task queue (SDK default 10 s, each takeover waited it once); a live
  // worker keeps a poll open on its sticky queue, so there the timeout never runs out
  const worker: Partial<WorkerOptions> = { ...bundle, identity: process.env.SAPI_TEST_WORKER_IDENTITY, stickyQueueScheduleToStartTimeout: '1s' };
  const running = await startWorker({ worker });
  process.stdout.write('READY\n');
  process.once('SIGTERM', () => void running.stop());
  await running.done;
})().catch((err: unknown) => {
  process.stderr.write(`worker-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
