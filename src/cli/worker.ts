import { type Command } from 'commander';
import { loadSettings } from '../config';
import type { CliContext, TemporalFlags } from './context';
import { addTemporalOptions, withTemporalFlags } from './common';
import { SapiInvalidInputError } from '../errors';
import { describeFailure } from './failure';

/** `sapi-temporal worker`: a worker for the plugin, configured from the environment, until SIGINT/SIGTERM. */
export function registerWorkerCommand(program: Command, context: CliContext): void {
  const command = program
    .command('worker')
    .description(
      'run a worker for the plugin until Ctrl-C/SIGTERM (graceful stop). Settings from the environment: SAPI_URL + SAPI_TOKEN ' +
        '(SAPI_<NAME>_URL/_TOKEN for more connections), TEMPORAL_*, SAPI_HOST_TASK_QUEUE, AWS_*, SAPI_WORK_DIR, …',
    );
  addTemporalOptions(command).action(async (flags: TemporalFlags) => {
    try {
      const settings = loadSettings(withTemporalFlags(context.env, flags));
      if (settings.temporal.disableHostVerification) {
        throw new SapiInvalidInputError(
          "the worker cannot skip host verification (Temporal's core SDK has no such option): set --tls-server-name (TEMPORAL_TLS_SERVER_NAME) to the name in the server's certificate",
        );
      }
      const [{ startWorker }, { createWorkerLogger }] = await Promise.all([import('../worker'), import('../observability/logging')]);
      const running = await startWorker({
        settings,
        // in the worker's log format (one JSON object a line with SAPI_LOG_FORMAT=json, like every other line), written
        // at once (the runtime's logger buffers, and a stop while starting exits right after)
        onStopping: (signal, phase) =>
          createWorkerLogger('INFO', settings.observability.logFormat).info(
            phase === 'starting' ? `${signal}: stopped while starting` : `${signal}: stopping the worker, finishing tasks in flight (signal again to exit now)`,
            { sdkComponent: 'worker' },
          ),
      });
      const connections = Object.keys(settings.connections);
      process.stdout.write(
        `worker polling ${running.taskQueues.join(', ')} (namespace ${settings.temporal.namespace} at ${settings.temporal.address}); ` +
          `Storage connections: ${connections.join(', ')}\n`,
      );
      await running.done;
    } catch (err) {
      throw new Error(describeFailure(err, 'worker'), { cause: err });
    }
  });
}
