/**
 * `sapi-temporal worker` bundles its workflows in a child process (src/worker-bundle.ts), so webpack never stays in the
 * worker: the child must build the very bundle `Worker.create` would have built in process from the same options.
 */
import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogEntry } from '@temporalio/worker';
import { WorkflowCodeBundler } from '@temporalio/worker/lib/workflow/bundler';
import { failureConverterPath } from '../../../src/codec';
import { loadSettings } from '../../../src/config';
import { SapiPlugin, transferLogModule, workflowsPath } from '../../../src/plugin';
import { childBundling } from '../../../src/worker-bundle';

jest.setTimeout(120_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const logged: LogEntry[] = [];

beforeAll(() => {
  Runtime.install({
    logger: new DefaultLogger('DEBUG', (entry) => logged.push(entry)),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
});

describe("the worker's bundle built in a child process", () => {
  it('is byte for byte the bundle Worker.create builds in process from the options the plugin made (codec on), handed over as code without workflowsPath or interceptor modules', async () => {
    const settings = loadSettings({ SAPI_CODEC_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}` });
    const plugin = new SapiPlugin({ settings, startChecks: false });
    try {
      const configured = await plugin.configureWorker({ taskQueue: 'bundle-test', workflowsPath, plugins: [plugin] });
      // the codec's failure converter and the transfer log: what the in-process bundle gets from these options
      expect({ failureConverter: configured.dataConverter?.failureConverterPath, modules: configured.interceptors?.workflowModules }).toEqual({
        failureConverter: failureConverterPath,
        modules: [transferLogModule],
      });
      // what the SDK's Worker.create bundles when given workflowsPath (its getOrCreateBundle)
      const inProcess = await new WorkflowCodeBundler({
        logger: quiet,
        workflowsPath,
        workflowInterceptorModules: configured.interceptors?.workflowModules,
        failureConverterPath: configured.dataConverter?.failureConverterPath,
        payloadConverterPath: configured.dataConverter?.payloadConverterPath,
        plugins: [plugin],
      }).createBundle();
      // onBundle: where startWorker names the deployment's version after the code (SAPI_DEPLOYMENT_NAME)
      const seen: string[] = [];
      const bundling = childBundling(plugin, false, (code, options) => (seen.push(code), { ...options, identity: 'versioned' }));
      const handed = await bundling.configureWorker!(configured);
      expect(handed.workflowBundle).toEqual({ code: inProcess.code });
      expect({ seen: seen.map((code) => code === inProcess.code), identity: handed.identity }).toEqual({ seen: [true], identity: 'versioned' });
      expect({ workflowsPath: handed.workflowsPath, modules: handed.interceptors?.workflowModules }).toEqual({ workflowsPath: undefined, modules: undefined });
      // the bundler's own line, from the child, in the worker's log (its stats at DEBUG, as the plugin sets them)
      expect(logged).toContainEqual(
        expect.objectContaining({
          level: 'INFO',
          message: 'Workflow bundle created',
          meta: expect.objectContaining({ sdkComponent: 'worker', taskQueue: 'bundle-test' }),
        }),
      );
      expect(logged.filter((entry) => entry.level === 'INFO' && /asset workflow-bundle/.test(entry.message))).toEqual([]);
    } finally {
      await plugin.close();
    }
  });
});
