import { Command, CommanderError, Help } from 'commander';
import { COMMAND_GROUPS, DEV_KIT_SUMMARIES, type CommandSummary, type RegisterCommands } from './commands';
import type { CliContext, TransferRunner } from './context';
import { FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, USAGE_EXIT_CODE } from './exit-codes';

import { packageVersion } from '../version';

// The CLI's entry point. It loads commander and the command table only: a command's module (and with it the
// Temporal client, gRPC, zod, the extractor) is loaded when that command runs, so `--help` and `--version` start in
// about the time of a bare Node start (bench: `npm run bench -- cli-start`).

export { FAILURE_EXIT_CODE, LOST_CONTACT_EXIT_CODE, USAGE_EXIT_CODE };
export { packageVersion };

// loaded on first use, so `--help` and `dev` do not load the Temporal client
// with tracing configured, the run is one trace under a root span of the command (see tracing.ts)
const lazyRunTransfer: TransferRunner = async (run) => (await import('./tracing')).tracedTransfer(run, (await import('./run-transfer')).runTransfer);

/** The context of a run: the caller's, with the environment and the transfer runner defaulted. */
export function cliContext(context: Partial<CliContext> = {}): CliContext {
  return { env: context.env ?? process.env, runTransfer: context.runTransfer ?? lazyRunTransfer };
}

/** The `sapi-temporal` command without its commands: description, `--version`, errors thrown (not exits). */
export function rootProgram(): Command {
  return new Command('sapi-temporal')
    .description('Durable Temporal workflows for the Storage API: import, export, extract')
    .version(packageVersion(), '-V, --version', 'print the version of sapi-temporal')
    .exitOverride();
}

/**
 * Finishes a program whose commands are registered: the dev kit's note in the description (or, in the installed
 * package, the hints of {@link registerDevKitHints}) and the short usage errors.
 */
export function finishProgram(program: Command, devKit: boolean): Command {
  // the published package has no dev kit: its help names only what it has
  if (devKit) program.description(`${program.description()}; plus a local dev stack (dev, demo, emulator)`);
  else registerDevKitHints(program);
  shortUsageErrors(program);
  return program;
}

/** The name of the command `argv` runs (`help <command>` counts as the command), or undefined (`--help`, `--version`, none). */
export function commandNameOf(argv: readonly string[]): string | undefined {
  const args = argv.slice(2);
  const first = args.findIndex((arg) => !arg.startsWith('-'));
  if (first === -1) return undefined;
  return args[first] === 'help' ? args.slice(first + 1).find((arg) => !arg.startsWith('-')) : args[first];
}

/**
 * Whether this installation has the dev kit's module (./dev-kit: the workspace, not the published package, whose
 * build leaves it out since it would pull in the emulator's DuckDB and fastify). Resolved, not loaded.
 */
export function hasDevKit(): boolean {
  try {
    require.resolve('./dev-kit');
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return false;
    throw err;
  }
}

/** The dev kit's registration. A `require`, not an `import`, so that the package's build does not follow it. */
export function loadDevKit(): RegisterCommands {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./dev-kit') as { registerDevKitCommands: RegisterCommands }).registerDevKitCommands;
}

/**
 * The program `argv` needs: the module of the command it names, registered for real; every other command as a line
 * of the help (its name, arguments and description from {@link COMMAND_GROUPS}), not loaded. The same help and the
 * same behaviour as the whole program (`buildProgram` in ./program), for a fraction of the start time.
 */
export async function programFor(argv: readonly string[], context: Partial<CliContext> = {}): Promise<Command> {
  const name = commandNameOf(argv);
  const resolved = cliContext(context);
  const devKit = hasDevKit();
  const program = rootProgram();
  const terms = new Map<string, string>();
  const summarize = (summary: CommandSummary) => {
    program.command(summary.name).description(summary.description);
    terms.set(summary.name, summary.term);
  };
  let loaded = false;
  for (const group of COMMAND_GROUPS) {
    if (name !== undefined && group.commands.some((command) => command.name === name)) {
      (await group.load())(program, resolved);
      loaded = true;
    } else group.commands.forEach(summarize);
  }
  if (devKit) {
    if (name !== undefined && DEV_KIT_SUMMARIES.some((command) => command.name === name)) {
      loadDevKit()(program, resolved);
      loaded = true;
    } else DEV_KIT_SUMMARIES.forEach(summarize);
  }
  if (loaded) {
    // -o json is --json for the commands' code
    const { normalizeOutputFlags } = await import('./common');
    program.hook('preAction', (_program, command) => normalizeOutputFlags(command));
  }
  const help = new Help();
  program.configureHelp({ subcommandTerm: (command) => terms.get(command.name()) ?? help.subcommandTerm(command) });
  return finishProgram(program, devKit);
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
      .action(async () => {
        // loaded here: the error registry brings @temporalio/common, which `--help` must not load
        const { SapiInvalidInputError } = await import('../errors');
        throw new SapiInvalidInputError(
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
  return options.some(
    (arg, i) => arg === '--json' || arg === '-ojson' || arg === '--output=json' || ((arg === '-o' || arg === '--output') && options[i + 1] === 'json'),
  );
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
    await (await programFor(argv, context)).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0;
      // commander has printed its message on stderr
      if (json) {
        const { oneLine, printable } = await import('./failure');
        process.stdout.write(`${JSON.stringify({ error: { code: err.code, message: printable(oneLine(err.message)), exitCode: USAGE_EXIT_CODE } })}\n`);
      }
      return USAGE_EXIT_CODE;
    }
    const { errorJson, exitCodeOf, oneLine } = await import('./failure');
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
function dropIpServerNameWarning(): void {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const [typeOrOptions, code] = rest;
    const warningCode = typeof typeOrOptions === 'object' && typeOrOptions !== null ? (typeOrOptions as { code?: unknown }).code : code;
    if (warningCode === 'DEP0123') return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}
