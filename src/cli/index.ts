import { Command, CommanderError } from 'commander';
import type { CliContext } from './common';
import { registerDemoCommand } from './demo';
import { registerDevCommand } from './dev';
import { registerEmulatorCommand } from './emulator';
import { registerExportCommand } from './export';
import { registerExtractCommand } from './extract';
import { exitCodeOf, FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, oneLine, USAGE_EXIT_CODE } from './failure';
import { registerImportCommand } from './import';
import { registerScheduleCommand } from './schedule';
import { registerStatusCommands } from './status';
import type { TransferRunner } from './run-transfer';
import { registerWorkerCommand } from './worker';

export { FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, USAGE_EXIT_CODE };

// loaded on first use, so `--help` and `dev` do not load the Temporal client
const lazyRunTransfer: TransferRunner = async (run) => (await import('./run-transfer')).runTransfer(run);

/** Builds the `sapi-temporal` command tree; each command lives in its own file and registers itself. */
export function buildProgram(context: Partial<CliContext> = {}): Command {
  const resolved: CliContext = { env: context.env ?? process.env, runTransfer: context.runTransfer ?? lazyRunTransfer };
  const program = new Command('sapi-temporal')
    .description('Durable Temporal workflows for the Storage API: import, export, extract; plus a local dev stack')
    .showHelpAfterError()
    .exitOverride();
  registerImportCommand(program, resolved);
  registerExportCommand(program, resolved);
  registerExtractCommand(program, resolved);
  registerStatusCommands(program, resolved);
  registerScheduleCommand(program, resolved);
  registerWorkerCommand(program, resolved);
  registerEmulatorCommand(program, resolved);
  registerDevCommand(program);
  registerDemoCommand(program);
  return program;
}

/**
 * Runs the CLI on `argv` (`process.argv` shape: node, script, arguments…) and resolves with the exit code: 0; 1
 * after a failure, the workflow's or the command's (one `sapi-temporal: …` line on stderr); 2 after a usage error
 * (commander's message); 3 after losing Temporal for the whole `--reconnect-timeout` (the workflow may still run);
 * 130 after Ctrl-C stopped `wait`.
 */
export async function run(argv: string[], context: Partial<CliContext> = {}): Promise<number> {
  try {
    await buildProgram(context).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`sapi-temporal: ${oneLine(message)}\n`);
    return exitCodeOf(err);
  }
}

/** CLI entry point: errors end as one line on stderr and a non-zero exit code. */
export async function main(argv: string[]): Promise<void> {
  process.exitCode = await run(argv);
}
