import { SimplePlugin } from '@temporalio/plugin';
import { createActivities } from './activities';
import { createActivityDeps, type ActivityDeps } from './activities/deps';
import { codecDataConverter } from './codec';
import { loadSettings, type Settings } from './config';

/** Name the plugin registers under. */
export const PLUGIN_NAME = 'sapi-temporal';

export interface SapiPluginOptions {
  /** Worker settings (connections, S3, transfer sizes); default: {@link loadSettings} from the environment. */
  settings?: Settings;
  /** Pre-built dependencies (tests, custom clients); default: built from `settings`. */
  deps?: ActivityDeps;
}

/**
 * The plugin: registers the activities on a worker and, when the settings have codec keys (`SAPI_CODEC_KEYS`), the
 * encrypting data converter (payload codec + encoded failure attributes). It only wires.
 * Register it on the worker only (not also on the client connection, or it runs twice). The workflows come from
 * the `sapi-temporal/workflows` module, which you re-export from your workflow module (or point `workflowsPath` at).
 */
export class SapiPlugin extends SimplePlugin {
  readonly deps: ActivityDeps;

  constructor(options: SapiPluginOptions = {}) {
    const deps = options.deps ?? createActivityDeps(options.settings ?? loadSettings());
    const codecKeys = deps.settings.codecKeys;
    super({
      name: PLUGIN_NAME,
      activities: createActivities(deps),
      // the codec runs in the worker process (activations decoded, completions encoded); the sandbox gets the path
      dataConverter: codecKeys ? (existing) => codecDataConverter(codecKeys, existing)! : undefined,
    });
    this.deps = deps;
  }

  /** Closes the Storage and S3 clients; call after the worker stops. */
  close(): Promise<void> {
    return this.deps.close();
  }
}

/** Path of the plugin's workflow module, for `Worker.create({ workflowsPath })` or `bundleWorkflowCode`. */
export const workflowsPath: string = require.resolve('./workflows');
