// `sapi-temporal list`: the plugin's runs as Temporal's visibility finds them, by the search attributes the
// workflows set (src/contracts/search-attributes.ts).
import type { Client } from '@temporalio/client';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CliContext, TemporalFlags } from './context';
import { addOutputOptions, addTemporalOptions, cliSettings } from './common';
import { registerCommand, SAPI_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { SapiInvalidInputError } from '../errors';

/** `list` flags as commander parses them. */
interface ListFlags extends TemporalFlags {
  table?: string;
  bucket?: string;
  operation?: 'import' | 'export' | 'extract' | 'backfill';
  status?: string;
  apiHost?: string;
  connection?: string;
  stateKey?: string;
  query?: string;
  limit?: number;
  output?: 'text' | 'json';
  json?: boolean;
}

/** The plugin's workflow types: every `list` is limited to them. */
const LISTED_WORKFLOW_TYPES = ['importTableWorkflow', 'exportTableWorkflow', 'extractWorkflow', 'backfillWorkflow'];

/** `--status` values and the `ExecutionStatus` each stands for. */
const STATUS_FILTERS: Readonly<Record<string, string>> = {
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Canceled',
  terminated: 'Terminated',
  'timed-out': 'TimedOut',
  'continued-as-new': 'ContinuedAsNew',
};

/** Default and largest `--limit`. */
const DEFAULT_LIST_LIMIT = 50;

const quoted = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The visibility query of a `list` command line: the plugin's workflow types, and each filter given. */
export function listQuery(flags: ListFlags): string {
  const clauses = [`WorkflowType IN (${LISTED_WORKFLOW_TYPES.map(quoted).join(', ')})`];
  const equal: Array<[string, string | undefined]> = [
    ['SapiTableId', flags.table],
    ['SapiBucket', flags.bucket],
    ['SapiOperation', flags.operation],
    ['SapiApiHost', flags.apiHost?.toLowerCase()],
    ['SapiConnection', flags.connection],
    ['SapiStateKey', flags.stateKey],
  ];
  for (const [name, value] of equal) if (value !== undefined) clauses.push(`${name} = ${quoted(value)}`);
  if (flags.status !== undefined) clauses.push(`ExecutionStatus = ${quoted(STATUS_FILTERS[flags.status]!)}`);
  if (flags.query) clauses.push(`(${flags.query})`);
  return clauses.join(' AND ');
}

/** One run as `list` prints it (`-o json`: an array of these). */
interface ListedRun {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  startTime: string;
  closeTime?: string;
  operation?: string;
  tableId?: string;
  bucket?: string;
  connection?: string;
  sourceKind?: string;
  destinationKind?: string;
  apiHost?: string;
  stateKey?: string;
  phase?: string;
  rows?: number;
  bytes?: number;
  /** What became of an import's load receipt (`written`, `failed`, `off`). */
  receipt?: string;
}

const ATTRIBUTE_FIELDS: ReadonlyArray<[keyof ListedRun, string]> = [
  ['operation', 'SapiOperation'],
  ['tableId', 'SapiTableId'],
  ['bucket', 'SapiBucket'],
  ['connection', 'SapiConnection'],
  ['sourceKind', 'SapiSourceKind'],
  ['destinationKind', 'SapiDestinationKind'],
  ['apiHost', 'SapiApiHost'],
  ['stateKey', 'SapiStateKey'],
  ['phase', 'SapiPhase'],
  ['rows', 'SapiRows'],
  ['bytes', 'SapiBytes'],
  ['receipt', 'SapiReceipt'],
];

/** The runs the query finds, newest first, at most `limit`. */
async function listRuns(client: Client, query: string, limit: number): Promise<ListedRun[]> {
  const runs: ListedRun[] = [];
  for await (const execution of client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
    const attributes = execution.searchAttributes as Record<string, unknown[] | undefined>;
    const run: ListedRun = {
      workflowId: execution.workflowId,
      runId: execution.runId,
      type: execution.type,
      status: execution.status.name.toLowerCase(),
      startTime: execution.startTime.toISOString(),
      ...(execution.closeTime ? { closeTime: execution.closeTime.toISOString() } : {}),
    };
    for (const [field, name] of ATTRIBUTE_FIELDS) {
      const value = attributes[name]?.[0];
      if (value !== undefined) Object.assign(run, { [field]: value });
    }
    runs.push(run);
    if (runs.length >= limit) break;
  }
  return runs;
}

/** The text table of `list`: one line per run. */
function formatRuns(runs: ListedRun[]): string {
  if (runs.length === 0) return 'no runs found\n';
  const header = ['WORKFLOW ID', 'STATUS', 'OPERATION', 'TARGET', 'PHASE', 'ROWS', 'BYTES', 'STARTED'];
  const rows = runs.map((r) => [
    r.workflowId,
    r.status,
    r.operation ?? r.type,
    r.tableId ?? r.apiHost ?? r.bucket ?? '',
    r.phase ?? '',
    r.rows !== undefined ? String(r.rows) : '',
    r.bytes !== undefined ? String(r.bytes) : '',
    r.startTime,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  return (
    [header, ...rows]
      .map((row) =>
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** The message and its causes' (the SDK says only "Failed to list workflows"; the server's why is in its cause). */
function messageChain(err: unknown): string {
  const parts: string[] = [];
  for (let current = err, depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message && !parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
}

/** The plugin's search attributes the namespace lacks; undefined when the server does not say. */
async function missingSearchAttributes(client: Client, namespace: string): Promise<string[] | undefined> {
  try {
    const answer = await client.connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(answer.customAttributes ?? {}));
    return SAPI_SEARCH_ATTRIBUTES.map((k) => k.name).filter((name) => !known.has(name));
  } catch {
    return undefined;
  }
}

/**
 * The line of a failed `list`: the query, the server's reason and, when the namespace lacks the plugin's search
 * attributes (or the reason names one), the command that registers them.
 */
async function listFailure(client: Client, namespace: string, query: string, err: unknown): Promise<string> {
  const message = messageChain(err);
  const missing = await missingSearchAttributes(client, namespace);
  let hint = '';
  if (missing?.length) {
    hint = `; namespace ${namespace} lacks the plugin's search attributes ${missing.join(', ')}: register the search attributes: ${registerCommand(namespace, missing)}`;
  } else if (missing === undefined && /Sapi[A-Za-z]+/.test(message)) {
    hint = `; register the search attributes: ${registerCommand(namespace)}`;
  }
  return `list failed [query: ${query}]: ${message}${hint}`;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError(`expected a whole number 1-1000, got ${JSON.stringify(value)}`);
  return n;
}

/** `sapi-temporal list`: the plugin's runs by table, operation, status, API host, … over Temporal's visibility. */
export function registerListCommand(program: Command, context: CliContext): void {
  const command = addTemporalOptions(
    program.command('list').description('list import/export/extract runs as Temporal visibility finds them by their search attributes (newest first)'),
  )
    .option('--table <tableId>', 'runs that loaded or read this table (SapiTableId)')
    .option('--bucket <bucketId>', 'runs of this bucket (SapiBucket)')
    .addOption(
      new Option('--operation <operation>', 'import, export, extract or backfill (SapiOperation)').choices(['import', 'export', 'extract', 'backfill']),
    )
    .addOption(new Option('--status <status>', "the run's status").choices(Object.keys(STATUS_FILTERS)))
    .option('--api-host <host>', 'extractions of this API host (SapiApiHost)')
    .option('--connection <name>', 'runs on this Storage connection (SapiConnection)')
    .option('--state-key <key>', 'extractions with this state key (SapiStateKey)')
    .option('--query <query>', "a further visibility query clause, e.g. 'SapiRows > 1000'")
    .option('--limit <n>', `at most this many runs (default ${DEFAULT_LIST_LIMIT})`, positiveInt);
  addOutputOptions(command, 'an array of runs on stdout').action(async (flags: ListFlags) => {
    const settings = cliSettings(context.env, flags);
    const query = listQuery(flags);
    const { TemporalLink } = await import('./temporal-link');
    const link = await TemporalLink.open(settings);
    try {
      let runs: ListedRun[];
      try {
        runs = await listRuns(link.client, query, flags.limit ?? DEFAULT_LIST_LIMIT);
      } catch (err) {
        throw new SapiInvalidInputError(await listFailure(link.client, settings.namespace, query, err), undefined, { cause: err });
      }
      process.stdout.write(flags.json ? `${JSON.stringify(runs, null, 2)}\n` : formatRuns(runs));
    } finally {
      await link.close();
    }
  });
}
