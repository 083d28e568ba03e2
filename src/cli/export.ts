import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ExportTableInput, ExportTableResult } from '../contracts/transfer';
import type { CliContext, Summary } from './context';
import { addWorkflowOptions, runOptions, defaultWorkflowId, definedOnly, integerParser, parseList, workerLocation, type WorkflowFlags } from './common';
import { formatBytes } from './progress';

type WhereFilter = NonNullable<ExportTableInput['whereFilters']>[number];
type WhereOperator = NonNullable<WhereFilter['operator']>;
const WHERE_OPERATORS: readonly WhereOperator[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];

/** `sapi-temporal export` flags as commander parses them. */
export interface ExportFlags extends WorkflowFlags {
  columns?: string[];
  limit?: number;
  gzip?: boolean;
  keepGzip?: boolean;
  overwrite?: boolean;
  /** False with `--no-header`. */
  header: boolean;
  where?: WhereFilter[];
}

/**
 * Parses one `--where`: `column=value`, `column=v1|v2` (any of), `column=op:v1|v2` with op one of eq, ne, gt, ge,
 * lt, le. Appends to the filters of earlier `--where` flags.
 */
export function parseWhere(value: string, previous: WhereFilter[] = []): WhereFilter[] {
  const match = /^([^=]+)=(.*)$/s.exec(value);
  const column = match?.[1]?.trim();
  if (!match || !column) {
    throw new InvalidArgumentError(`expected column=value, column=v1|v2 or column=op:v1|v2 (op: ${WHERE_OPERATORS.join(', ')}), got ${JSON.stringify(value)}`);
  }
  let rest = match[2] ?? '';
  let operator: WhereOperator | undefined;
  const prefix = /^([a-z]+):/.exec(rest);
  if (prefix && (WHERE_OPERATORS as readonly string[]).includes(prefix[1] ?? '')) {
    operator = prefix[1] as WhereOperator;
    rest = rest.slice(prefix[0].length);
  }
  return [...previous, definedOnly({ column, operator, values: rest.split('|') })];
}

/** The workflow input a command line describes; a relative local `destination` is made absolute against `cwd`. */
export function exportInput(tableId: string, destination: string, flags: ExportFlags, cwd: string = process.cwd()): ExportTableInput {
  return definedOnly<ExportTableInput>({
    connection: flags.connection,
    tableId,
    destination: workerLocation(destination, cwd),
    columns: flags.columns,
    limit: flags.limit,
    whereFilters: flags.where,
    gzip: flags.gzip,
    keepGzip: flags.keepGzip,
    overwrite: flags.overwrite,
    header: flags.header === false ? false : undefined,
    transferTaskQueue: flags.transferTaskQueue,
  });
}

/** Adds `<tableId> <destination>` and the export flags (shared by `export` and `schedule export`). */
export function addExportArguments(command: Command): Command {
  return command
    .argument('<tableId>', 'table id, e.g. in.c-main.orders')
    .argument(
      '<destination>',
      "a path on the worker's host or s3://bucket/key; a relative path is made absolute against the current directory (the worker may run in another one)",
    )
    .option('--columns <columns>', 'columns to export, comma-separated (a,b)', parseList)
    .option('--limit <rows>', 'export at most this many rows', integerParser(1))
    .option('--overwrite', 'replace a local destination that exists (default: the export fails before it starts)')
    .option('--gzip', 'have the service gzip the export (the download is decompressed unless --keep-gzip)')
    .addOption(new Option('--keep-gzip', 'keep the download gzipped (implies --gzip)').implies({ gzip: true }))
    .option('--no-header', "no header row on sliced exports (they come without one; default: one is added from the table's columns)")
    .option('--where <filter>', 'row filter, repeatable: column=value, column=v1|v2 or column=op:v1|v2 (op: eq, ne, gt, ge, lt, le)', parseWhere);
}

/** The summary of a finished export (also what `wait` prints for an exportTableWorkflow). */
export function summarizeExport(result: ExportTableResult, input: Partial<ExportTableInput> = {}): Summary {
  return {
    title: `exported ${input.tableId ?? 'the table'} to ${result.path}`,
    fields: [
      ['path', result.path],
      ['bytes', `${formatBytes(result.bytes)} (${result.bytes} B)`],
      ['sha256', result.sha256],
      ['slices', result.sliced ? `${result.slices} (sliced file, concatenated)` : '1'],
      ['file id', result.fileId],
      ['job id', result.jobId],
    ],
  };
}

/** `sapi-temporal export <tableId> <destination>`: runs `exportTableWorkflow` and waits for the file. */
export function registerExportCommand(program: Command, context: CliContext): void {
  const command = addExportArguments(
    program.command('export').description('export a Storage table to a file (exportTableWorkflow) and wait for it, with a progress bar'),
  );
  addWorkflowOptions(command).action(async (tableId: string, destination: string, flags: ExportFlags) => {
    const input = exportInput(tableId, destination, flags);
    await context.runTransfer({
      verb: 'export',
      workflowType: 'exportTableWorkflow',
      workflowId: flags.workflowId ?? defaultWorkflowId('export', tableId),
      input,
      ...runOptions(context.env, flags),
      summarize: (result) => summarizeExport(result, input),
    });
  });
}
