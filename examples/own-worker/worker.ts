// Your own worker: the plugin's activities and workflows plus your workflows (./workflows.ts), with the settings
// from the environment (docs/configuration.md). The plugin checks the namespace and the Storage connection at start.
import { Worker } from '@temporalio/worker';
import { SapiPlugin, connectWorker, loadSettings } from 'sapi-temporal';

const settings = loadSettings();
const plugin = new SapiPlugin({ settings });
// a failure names the setting (TLS, address); the worker takes the connection's plugins
const connection = await connectWorker(settings.temporal, { plugins: [plugin] });
try {
  const worker = await Worker.create({
    connection,
    namespace: settings.temporal.namespace,
    taskQueue: settings.temporal.taskQueue,
    // the compiled workflows module next to this file (tsc writes dist/own-worker/workflows.js)
    workflowsPath: new URL('./workflows.js', import.meta.url).pathname,
  });
  await worker.run(); // until SIGINT or SIGTERM
} finally {
  await connection.close();
  await plugin.close();
}
