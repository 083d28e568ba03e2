import { Command, CommanderError } from 'commander';
import { registerDevCommand } from './dev';

/** Builds the `sapi-temporal` command tree; each command lives in its own file and registers itself. */
export function buildProgram(): Command {
  const program = new Command('sapi-temporal')
    .description('Durable Temporal workflows for the Storage API: import, export, extract; plus a local dev stack')
    .showHelpAfterError()
    .exitOverride();
  registerDevCommand(program);
  return program;
}

/** CLI entry point: errors end as one line on stderr and a non-zero exit code. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`sapi-temporal: ${message.replace(/\s*\n\s*/g, ' | ')}\n`);
    process.exitCode = 1;
  }
}
