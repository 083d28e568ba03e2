// A user's own worker, as the README's "use the plugin in your own worker" snippet writes it (sources instead of the
// package): the plugin on a worker the user creates, settings from the environment, the run's workflow bundle.
import { readFileSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { loadSettings } from '../../src/config';
import { SapiPlugin, workflowsPath } from '../../src/plugin';
import { connectWorker } from '../../src/worker';

async function main(): Promise<void> {
  const settings = loadSettings();
  const plugin = new SapiPlugin({ settings });
  // on the connection: the plugin installs the runtime of the settings (SAPI_METRICS_ADDRESS, SAPI_LOG_FORMAT) before
  // the connection makes it, and the worker takes the connection's plugins
  const connection = await connectWorker(settings.temporal, { plugins: [plugin] });
  try {
    const worker = await Worker.create({
      connection,
      namespace: settings.temporal.namespace,
      taskQueue: settings.temporal.taskQueue,
      // the run's bundle; without one, the plugin's workflows bundled at start as the README's worker does
      ...(process.env.SAPI_TEST_WORKFLOW_BUNDLE
        ? { workflowBundle: { code: readFileSync(process.env.SAPI_TEST_WORKFLOW_BUNDLE, 'utf8') } }
        : { workflowsPath }),
    });
    process.stdout.write('READY\n');
    await worker.run();
  } finally {
    await connection.close();
    await plugin.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
