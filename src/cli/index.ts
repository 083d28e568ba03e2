import { Command, CommanderError } from 'commander';
import { registerBackfillCommand } from './backfill';
import { registerCodecServerCommand } from './codec-server';
import { normalizeOutputFlags, type CliContext } from './common';
import { registerExportCommand } from './export';
import { registerExtractCommand } from './extract';
import { registerExtractStateCommand } from './extract-state';
import { CliError, errorJson, exitCodeOf, FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, oneLine, printable, USAGE_EXIT_CODE } from './failure';
import { registerImportCommand } from './import';
import { registerListCommand } from './list';
import { registerControlCommands } from './control';
import { registerReplayCheckCommand } from './replay-check';
import { registerReceiptsCommands } from './receipts';
import { registerScheduleCommand } from './schedule';
import { registerStatusCommands } from './status';
import type { TransferRunner } from './run-transfer';
import { registerWorkerCommand } from './worker';

export { FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, USAGE_EXIT_CODE };

// loaded on first use, so `--help` and `dev` do not load the Temporal client
// with tracing configured, the run is one trace under a root span of the command (see tracing.ts)
const lazyRunTransfer: TransferRunner = async (run) => (await import('./tracing')).tracedTransfer(run, (await import('./run-transfer')).runTransfer);

import { packageVersion } from '../version';
import { SapiErrorCode } from '../errors';

export { packageVersion };

/** Builds the `sapi-temporal` command tree; each command lives in its own file and registers itself. */
export function buildProgram(context: Partial<CliContext> = {}): Command {
  const resolved: CliContext = { env: context.env ?? process.env, runTransfer: context.runTransfer ?? lazyRunTransfer };
  const program = new Command('sapi-temporal')
    .description('Durable Temporal workflows for the Storage API: import, export, extract')
    .version(packageVersion(), '-V, --version', 'print the version of sapi-temporal')
    .exitOverride()
    // -o json is --json for the commands' code
    .hook('preAction', (_program, command) => normalizeOutputFlags(command));
  registerImportCommand(program, resolved);
  registerExportCommand(program, resolved);
  registerExtractCommand(program, resolved);
  registerExtractStateCommand(program, resolved);
  registerBackfillCommand(program, resolved);
  registerStatusCommands(program, resolved);
  registerListCommand(program, resolved);
  registerControlCommands(program, resolved);
  registerScheduleCommand(program, resolved);
  registerReceiptsCommands(program, resolved);
  registerWorkerCommand(program, resolved);
  registerReplayCheckCommand(program, resolved);
  registerCodecServerCommand(program, resolved);
  // the published package has no dev kit: its help names only what it has
  if (registerDevKitCommands(program, resolved)) program.description(`${program.description()}; plus a local dev stack (dev, demo, emulator)`);
  else registerDevKitHints(program);
  shortUsageErrors(program);
  return program;
}

/**
 * Registers the dev kit's commands (emulator, dev, demo: ./dev-kit) where that module exists: in this workspace,
 * not in the published plugin package, whose build leaves it out (it would pull in the emulator's DuckDB and
 * fastify). A `require`, not an `import`, so that the package's build does not follow it.
 */
function registerDevKitCommands(program: Command, context: CliContext): boolean {
  let devKit: { registerDevKitCommands(program: Command, context: CliContext): void };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    devKit = require('./dev-kit');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes("'./dev-kit'")) return false;
    throw err;
  }
  devKit.registerDevKitCommands(program, context);
  return true;
}

/** The dev kit's commands, which the installed package does not have. */
export const DEV_KIT_COMMANDS = ['dev', 'demo', 'emulator'] as const;

/**
 * In the installed package: `dev`, `demo` and `emulator` (hidden from the help) say where they live instead of
 * commander's "unknown command".
 */
export function registerDevKitHints(program: Command): void {
  for (const name of DEV_KIT_COMMANDS) {
    program
      .command(name, { hidden: true })
      .allowUnknownOption()
      .allowExcessArguments()
      .action(() => {
        throw new CliError(
          SapiErrorCode.INVALID_INPUT,
          `\`${name}\` is part of the repository's dev kit, not of the installed package: clone the sapi-temporal repository and run \`make ${name}\` there (or \`docker compose --profile dev up\` for the dev stack)`,
        );
      });
  }
}

/**
 * A usage error prints commander's one line (the wrong thing) and where the help is, not the whole help: on every
 * command, `(see \`sapi-temporal <command> --help\`)`.
 */
function shortUsageErrors(command: Command, path: string = command.name()): void {
  command.showHelpAfterError(`(see \`${path} --help\`)`);
  for (const sub of command.commands) shortUsageErrors(sub, `${path} ${sub.name()}`);
}

/** True when the command line asks for JSON: `--json`, `-o json`, `-ojson`, `--output json`, `--output=json` (before a `--` that ends the options). */
export function wantsJson(argv: readonly string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  return options.some((arg, i) => arg === '--json' || arg === '-ojson' || arg === '--output=json' || ((arg === '-o' || arg === '--output') && options[i + 1] === 'json'));
}

/**
 * Runs the CLI on `argv` (`process.argv` shape: node, script, arguments…) and resolves with the exit code: 0; 1
 * after a failure, the workflow's or the command's (one `sapi-temporal: …` line on stderr); 2 after a usage error
 * (commander's message); 3 after losing Temporal for the whole `--reconnect-timeout` (the workflow may still run);
 * 130 after Ctrl-C stopped waiting (the workflow runs on). With `--json`, a failure is also one JSON object
 * `{error: {code, message, workflowId?, exitCode}}` on stdout, and nothing else is printed there.
 */
export async function run(argv: string[], context: Partial<CliContext> = {}): Promise<number> {
  const json = wantsJson(argv);
  try {
    await buildProgram(context).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0;
      // commander has printed its message on stderr
      if (json) process.stdout.write(`${JSON.stringify({ error: { code: err.code, message: printable(oneLine(err.message)), exitCode: USAGE_EXIT_CODE } })}\n`);
      return USAGE_EXIT_CODE;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`sapi-temporal: ${oneLine(message)}\n`);
    const exitCode = exitCodeOf(err);
    if (json) process.stdout.write(`${JSON.stringify(errorJson(err, exitCode))}\n`);
    return exitCode;
  }
}

/** CLI entry point: errors end as one line on stderr and a non-zero exit code. */
export async function main(argv: string[]): Promise<void> {
  dropIpServerNameWarning();
  const exitCode = await run(argv);
  // Ctrl-C stopped waiting, or the command failed: a long poll or a connection attempt to Temporal may still be open
  // and would hold the terminal for seconds; everything the command had to say is written (stdout/stderr to a pipe,
  // file or TTY write synchronously)
  if (exitCode !== 0) process.exit(exitCode);
  process.exitCode = exitCode;
}

/**
 * Drops Node's DEP0123 warning ("Setting the TLS ServerName to an IP address…") from the CLI's stderr: grpc-js, the
 * client's transport, sends the target host as TLS server name even when it is an IP address
 * (`channel-credentials.js`), so every TLS connection to `127.0.0.1:7233` printed it. Nothing the user can act on;
 * other warnings pass.
 */
export function dropIpServerNameWarning(): void {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const [typeOrOptions, code] = rest;
    const warningCode = typeof typeOrOptions === 'object' && typeOrOptions !== null ? (typeOrOptions as { code?: unknown }).code : code;
    if (warningCode === 'DEP0123') return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}
