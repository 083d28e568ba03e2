import { Option, type Command } from 'commander';
import type { DevBackend } from '../dev/stack';
import { DEFAULT_DEMO_BACKEND } from '../demo/defaults';

/** `sapi-temporal demo`: the main job end to end on a fresh dev stack (see src/demo). */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run the main job end to end on a fresh dev stack: import, incremental load, sliced export, extraction')
    .option('--data-dir <dir>', 'where the demo keeps its stack and files (wiped first)', '.data/demo')
    .option('--keep', 'keep the dev stack running after the demo, until Ctrl-C')
    .addOption(
      new Option('--backend <backend>', "the emulator's file storage, the only object store started: azure (Azurite), aws (MinIO) or gcp (fake-gcs-server)")
        .choices(['aws', 'azure', 'gcp'])
        .default(DEFAULT_DEMO_BACKEND),
    )
    .action(async (options: { dataDir: string; keep?: boolean; backend: DevBackend }) => {
      const { runDemo } = await import('../demo');
      const result = await runDemo({ dataDir: options.dataDir, keep: options.keep, backend: options.backend });
      if (!result.export.rowsMatch) throw new Error('demo: the exported rows differ from the imported ones');
      if (options.keep) {
        process.stdout.write('the dev stack keeps running; press Ctrl-C to stop\n');
        const stop = async () => {
          await result.stack.stop();
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        await new Promise(() => undefined);
      }
    });
}
