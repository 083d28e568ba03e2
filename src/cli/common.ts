// Pieces every CLI command shares: where Temporal is, the flags that say so, and option value parsers.
import { resolve } from 'node:path';
import { envPreset } from './env-preset';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { SapiInvalidInputError } from '../errors';
import { BUCKET_ID_PATTERN, TABLE_NAME_PATTERN } from '../contracts/transfer';
import { loadCodecKeys } from '../codec/keys';
import { DEFAULT_TASK_QUEUE, loadSettings, type TemporalConnectionSettings } from '../config';
import { tracingFromEnv } from '../observability/tracing';
import type { Priority } from '@temporalio/common';
import type { CliSettings, TemporalFlags } from './context';
import { addPriorityOptions, priorityOf, type PriorityFlags } from './priority';

/**
 * The connection flags and the variable each writes over (the variables `@temporalio/envconfig` reads, so a flag
 * has the meaning its variable has). Names as the Temporal CLI spells them.
 */
const TEMPORAL_FLAG_VARIABLES: ReadonlyArray<[flag: keyof TemporalFlags, variable: string]> = [
  ['address', 'TEMPORAL_ADDRESS'],
  ['namespace', 'TEMPORAL_NAMESPACE'],
  ['taskQueue', 'TEMPORAL_TASK_QUEUE'],
  ['profile', 'TEMPORAL_PROFILE'],
  ['configFile', 'TEMPORAL_CONFIG_FILE'],
  ['apiKey', 'TEMPORAL_API_KEY'],
  ['tls', 'TEMPORAL_TLS'],
  ['tlsCertPath', 'TEMPORAL_TLS_CLIENT_CERT_PATH'],
  ['tlsKeyPath', 'TEMPORAL_TLS_CLIENT_KEY_PATH'],
  ['tlsCaPath', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'],
  ['tlsServerName', 'TEMPORAL_TLS_SERVER_NAME'],
  ['tlsDisableHostVerification', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION'],
];

/** Adds the Temporal connection flags (the Temporal CLI's names); each overrides its environment variable. */
export function addTemporalOptions(command: Command): Command {
  return command
    .option('--address <host:port>', "Temporal frontend address (default: TEMPORAL_ADDRESS, else the profile's, else localhost:7233)")
    .option('-n, --namespace <name>', "Temporal namespace (default: TEMPORAL_NAMESPACE, else the profile's, else default)")
    .option('--task-queue <queue>', `task queue the worker polls (default: TEMPORAL_TASK_QUEUE, else ${DEFAULT_TASK_QUEUE})`)
    .option('--api-key <key>', 'API key, sent as a bearer token; turns TLS on (default: TEMPORAL_API_KEY)')
    .option('--tls', 'connect with TLS even without other TLS settings (default: TEMPORAL_TLS)')
    .option('--no-tls', 'connect in plain text, even with an API key')
    .option('--tls-cert-path <path>', 'client certificate for mTLS (default: TEMPORAL_TLS_CLIENT_CERT_PATH)')
    .option('--tls-key-path <path>', 'client private key for mTLS (default: TEMPORAL_TLS_CLIENT_KEY_PATH)')
    .option('--tls-ca-path <path>', "CA that signed the server's certificate (default: TEMPORAL_TLS_SERVER_CA_CERT_PATH, else the system's)")
    .option('--tls-server-name <name>', "name the server's certificate must carry, when not the address's host (default: TEMPORAL_TLS_SERVER_NAME)")
    .option('--tls-disable-host-verification', 'accept a server certificate issued for another name (testing only; not for `worker`)')
    .option('--profile <name>', 'profile of the config file (default: TEMPORAL_PROFILE, else default)')
    .option('--config-file <path>', 'TOML config file of the profiles (default: TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml)')
    .option('--env <name>', 'preset of `temporal env set` to use (default: TEMPORAL_ENV, else default when it exists)')
    .option('--env-file <path>', 'file of the --env presets (default: ~/.config/temporalio/temporal.yaml)');
}

/**
 * The environment with the Temporal flags written over their variables, for code that reads settings from env: the
 * command-line flags first, then the `--env` preset's values, then the variables themselves.
 */
export function withTemporalFlags(env: NodeJS.ProcessEnv, flags: TemporalFlags): NodeJS.ProcessEnv {
  const merged: TemporalFlags = { ...envPreset(env, flags), ...definedOnly(flags) };
  const overrides: NodeJS.ProcessEnv = {};
  for (const [flag, variable] of TEMPORAL_FLAG_VARIABLES) {
    const value = merged[flag];
    if (value !== undefined) overrides[variable] = String(value);
  }
  return { ...env, ...overrides };
}

/**
 * The Temporal settings of the CLI, as the worker reads them: `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS*`, `TEMPORAL_PROFILE` / `TEMPORAL_CONFIG_FILE`, `TEMPORAL_TASK_QUEUE` (flags win
 * over variables and profile), with the worker's defaults. `SAPI_URL`/`SAPI_TOKEN` are neither needed nor validated.
 */
export function cliSettings(env: NodeJS.ProcessEnv, flags: TemporalFlags = {}): CliSettings {
  const merged = withTemporalFlags(env, flags);
  // the worker's own parser, fed only the Temporal variables (and those locating the config file): same defaults
  // and messages, no Storage connection
  let temporal: TemporalConnectionSettings & { taskQueue: string };
  try {
    ({ temporal } = loadSettings(
      Object.fromEntries(Object.entries(merged).filter(([key]) => key.startsWith('TEMPORAL_') || ['HOME', 'XDG_CONFIG_HOME', 'APPDATA'].includes(key))),
    ));
  } catch (err) {
    // a setting of the user's (a config file, a profile, a TLS pair): one code whichever command reads it
    throw new SapiInvalidInputError(err instanceof Error ? err.message : String(err), undefined, { cause: err });
  }
  return { ...temporal, codecKeys: loadCodecKeys(env), tracing: tracingFromEnv(env) };
}

/** Output formats of `-o, --output` (the Temporal CLI's flag). */
const OUTPUT_FORMATS = ['text', 'json'] as const;

/**
 * Adds `-o, --output text|json` and `--json` (the same as `-o json`); `json` says what JSON output is. A preAction
 * hook ({@link normalizeOutputFlags}) sets `json` when `-o json` is given, so commands read `flags.json` only.
 */
export function addOutputOptions(command: Command, json: string): Command {
  return command
    .addOption(new Option('-o, --output <format>', `output format: text, or json (${json})`).choices(OUTPUT_FORMATS))
    .option('--json', 'the same as -o json');
}

/** `flags.json` set from `-o json`; `--json` with `-o text` is a usage error. */
export function normalizeOutputFlags(command: Command): void {
  const { output, json } = command.opts<{ output?: string; json?: boolean }>();
  if (output === 'text' && json) command.error('error: --json and -o text contradict each other: give one', { exitCode: 2, code: 'sapi.usage' });
  if (output === 'json') command.setOptionValue('json', true);
}

/**
 * A source or destination as the worker must see it: URLs (`s3://…`, `https://…`) unchanged, local paths made
 * absolute against the CLI's working directory (the worker may run elsewhere).
 */
export function workerLocation(location: string, cwd: string = process.cwd()): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location) ? location : resolve(cwd, location);
}

/** Parses `a,b , c` into `['a', 'b', 'c']`. */
export function parseList(value: string): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) throw new InvalidArgumentError(`expected a comma-separated list, got ${JSON.stringify(value)}`);
  return items;
}

/** Parses a whole number ≥ `min`. */
export function integerParser(min: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(number) || number < min) {
      throw new InvalidArgumentError(`expected a whole number ≥ ${min}, got ${JSON.stringify(value)}`);
    }
    return number;
  };
}

/** Parses a positive number (fractions allowed). */
export function parsePositiveNumber(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0)
    throw new InvalidArgumentError(`expected a positive number, got ${JSON.stringify(value)}`);
  return number;
}

/** Parses a one-character CSV delimiter or enclosure; `\t` and `tab` mean a tab. */
export function parseCsvCharacter(value: string): string {
  const character = value === '\\t' || value.toLowerCase() === 'tab' ? '\t' : value;
  if ([...character].length !== 1) throw new InvalidArgumentError(`expected one character (or \\t), got ${JSON.stringify(value)}`);
  return character;
}

/** A workflow id no other run uses: `<verb>-<target>-<time><random>`. */
export function defaultWorkflowId(verb: string, target: string): string {
  return `${verb}-${target}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** Default of `--reconnect-timeout`: how long a command keeps following a workflow while Temporal is unreachable (10 min, in ms). */
export const DEFAULT_RECONNECT_TIMEOUT_MS = 600_000;
/** Environment variable with the default of `--reconnect-timeout` (same syntax: `90s`, `10m`, `1h`, bare seconds). */
const RECONNECT_TIMEOUT_ENV = 'SAPI_CLI_RECONNECT_TIMEOUT';

const DURATION_UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000 };

/** Parses a duration: `500ms`, `90s`, `10m`, `1h`, or bare seconds (`30`); `0` is allowed. Resolves to ms. */
export function parseDuration(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$/.exec(value);
  if (!match) throw new InvalidArgumentError(`expected a duration like 90s, 10m or 1h (bare numbers are seconds), got ${JSON.stringify(value)}`);
  return Math.round(Number(match[1]) * (DURATION_UNIT_MS[match[2] ?? 's'] ?? 1_000));
}

/** The reconnect timeout (ms): the flag, else {@link RECONNECT_TIMEOUT_ENV}, else {@link DEFAULT_RECONNECT_TIMEOUT_MS}. */
export function reconnectTimeoutMs(env: NodeJS.ProcessEnv, flag?: number): number {
  if (flag !== undefined) return flag;
  const fromEnv = env[RECONNECT_TIMEOUT_ENV];
  if (fromEnv === undefined || fromEnv.trim() === '') return DEFAULT_RECONNECT_TIMEOUT_MS;
  try {
    return parseDuration(fromEnv);
  } catch (err) {
    throw new InvalidArgumentError(`${RECONNECT_TIMEOUT_ENV}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Adds `--reconnect-timeout` (commands that follow a workflow to its end). */
export function addReconnectOption(command: Command): Command {
  return command.option(
    '--reconnect-timeout <duration>',
    `keep following the workflow while Temporal is unreachable this long, then exit 3 (it may still run; re-attach with \`sapi-temporal wait <id>\`): 90s, 10m, 1h (default: ${RECONNECT_TIMEOUT_ENV}, else 10m)`,
    parseDuration,
  );
}

/** Exit code after a second stop signal (128 + SIGINT). */
export const INTERRUPTED_EXIT_CODE = 130;

/**
 * Calls `first` on the first of `signals` (a graceful stop) and exits at once on the next one. Returns the function
 * that removes the handlers.
 */
export function onStopSignals(signals: NodeJS.Signals[], first: (signal: NodeJS.Signals) => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    if (++count === 1) first(signal);
    else process.exit(INTERRUPTED_EXIT_CODE);
  };
  for (const signal of signals) process.on(signal, handler);
  return () => {
    for (const signal of signals) process.off(signal, handler);
  };
}

/** `value` without its undefined properties (workflow inputs stay minimal and readable in the Temporal UI). */
export function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as T;
}

/**
 * Adds the flags every workflow command takes: Temporal connection, `--reconnect-timeout`, `--connection`,
 * `--workflow-id`, `--transfer-task-queue`, `-o`/`--json`, `--detach`, `--cancel-on-interrupt`, `--no-worker-check`;
 * `defaultPriority` says what applies without `--priority-key`.
 */
export function addWorkflowOptions(command: Command, defaultPriority = "the server's, 3"): Command {
  return addPriorityOptions(
    addOutputOptions(
      addReconnectOption(addTemporalOptions(command)),
      'one object with the result on stdout, no progress, no summary; a failure: {error: {code, message, workflowId?, exitCode}}',
    ),
    defaultPriority,
  )
    .option('--connection <name>', 'Storage connection configured on the worker (SAPI_<NAME>_URL/_TOKEN; default: SAPI_URL/SAPI_TOKEN)')
    .option(
      '-w, --workflow-id <id>',
      'workflow id; a run with this id still running is attached to (followed, nothing started twice) instead of failing; when the last run with this id completed, nothing runs again: the command says "already done" and prints its result (default: <verb>-<table>-<unique suffix>)',
    )
    .option('--rerun', 'run again even when the last run with this --workflow-id completed (default: a completed run is not run again)')
    .option('--transfer-task-queue <queue>', 'run the upload/download on this task queue (a worker on the host that has the local file)')
    .option(
      '--detach',
      'start the workflow, print its id (JSON with --json) and exit 0 without waiting; follow it later with `sapi-temporal wait <id>` or `status <id>`',
    )
    .option('--cancel-on-interrupt', 'Ctrl-C cancels the workflow and waits for it to end (default: Ctrl-C stops waiting, the workflow runs on)')
    .option('--no-worker-check', 'start even when no worker polls the task queue (default: wait up to 5 s for one, then fail, starting nothing)');
}

/** The flags {@link addWorkflowOptions} adds, as commander parses them. */
export interface WorkflowFlags extends TemporalFlags, PriorityFlags {
  /** ms, parsed by {@link parseDuration}. */
  reconnectTimeout?: number;
  connection?: string;
  workflowId?: string;
  /** `--rerun`: run again under a `--workflow-id` whose last run completed. */
  rerun?: boolean;
  transferTaskQueue?: string;
  json?: boolean;
  detach?: boolean;
  cancelOnInterrupt?: boolean;
  /** False with `--no-worker-check`. */
  workerCheck?: boolean;
}

/** How a run command starts and follows its workflow, from its flags (the part of a `TransferRun` every command shares). */
export function runOptions(
  env: NodeJS.ProcessEnv,
  flags: WorkflowFlags,
): {
  settings: CliSettings;
  json: boolean;
  reconnectTimeoutMs: number;
  detach: boolean;
  onInterrupt: 'detach' | 'cancel';
  checkWorkers: boolean;
  rerun: boolean;
  priority?: Priority;
} {
  return {
    settings: cliSettings(env, flags),
    json: flags.json ?? false,
    reconnectTimeoutMs: reconnectTimeoutMs(env, flags.reconnectTimeout),
    detach: flags.detach ?? false,
    onInterrupt: flags.cancelOnInterrupt ? 'cancel' : 'detach',
    checkWorkers: flags.workerCheck !== false,
    rerun: flags.rerun ?? false,
    priority: priorityOf(flags),
  };
}

/** A bucket id the service accepts, else a usage error (nothing is started). */
export function bucketIdArg(value: string): string {
  if (!BUCKET_ID_PATTERN.test(value)) throw new InvalidArgumentError(`expected a bucket id like in.c-main or out.c-main, got ${JSON.stringify(value)}`);
  return value;
}

/** A table name the service accepts, else a usage error (nothing is started). */
export function tableNameArg(value: string): string {
  if (!TABLE_NAME_PATTERN.test(value))
    throw new InvalidArgumentError(`expected a table name of 1–96 letters, digits, "_" or "-", got ${JSON.stringify(value)}`);
  return value;
}
