import type { Command } from 'commander';
import type { CliContext } from './context';

/**
 * `sapi-temporal extract-state show|reset|import <stateKey> [file]`: the run state the workers keep for a
 * configuration (`extract --state-key`), read and written in the same stage store (`SAPI_STAGING_URL`; a local folder
 * only on the worker's host).
 */
export function registerExtractStateCommand(program: Command, context: CliContext): void {
  const state = program
    .command('extract-state')
    .description('show, reset or import the run state of a configuration ({"time": {"previousStart": …}}, as the reference extractor\'s state.json)');
  // loaded on first use (the S3 client), as the run commands load the Temporal client
  const run = async (op: 'show' | 'reset' | 'import', stateKey: string, file?: string) => {
    const { runStateCommand, stageStoreFromEnv } = await import('./extract-state-run');
    process.stdout.write(`${await runStateCommand(stageStoreFromEnv(context.env), op, stateKey, file)}\n`);
  };
  state
    .command('show')
    .description('print the stored state')
    .argument('<stateKey>')
    .action((key: string) => run('show', key));
  state
    .command('reset')
    .description('delete the stored state (the next run starts with previousStart 0)')
    .argument('<stateKey>')
    .action((key: string) => run('reset', key));
  state
    .command('import')
    .description("store a state file (e.g. the reference extractor's state.json) for the next run")
    .argument('<stateKey>')
    .argument('<file>')
    .action((key: string, file: string) => run('import', key, file));
}
