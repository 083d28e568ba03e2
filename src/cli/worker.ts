import { type Command } from 'commander';
import { loadSettings } from '../config';
import { addTemporalOptions, withTemporalFlags, type CliContext, type TemporalFlags } from './common';
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
      const { startWorker } = await import('../worker');
      const running = await startWorker({
        settings,
        onStopping: (signal, phase) =>
          process.stderr.write(
            phase === 'starting' ? `${signal}: stopped while starting\n` : `${signal}: stopping the worker, finishing tasks in flight (signal again to exit now)\n`,
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
