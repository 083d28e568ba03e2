import { type Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_RECEIPTS_TABLE, RECEIPTS_TABLE_PATTERN, type ReceiptsOption } from '../contracts/receipts';
import { DEFAULT_METADATA_PROVIDER, type CsvDialect, type ImportTableInput, type ImportTableResult, type TypedColumn } from '../contracts/transfer';
import type { CliContext, Summary } from './context';
import {
  addWorkflowOptions,
  bucketIdArg,
  tableNameArg,
  runOptions,
  defaultWorkflowId,
  definedOnly,
  parseCsvCharacter,
  parseList,
  workerLocation,
  type WorkflowFlags,
} from './common';
import { formatBytes } from './progress';
import { collectColumn, collectMetadata, readColumnsFile } from './typed-columns';

/** `sapi-temporal import` flags as commander parses them. */
export interface ImportFlags extends WorkflowFlags {
  bucket: string;
  table: string;
  createBucket?: boolean;
  mode: 'create' | 'load';
  incremental?: boolean;
  primaryKey?: string[];
  via?: 'direct' | 'importer';
  delimiter?: string;
  enclosure?: string;
  gzip?: boolean;
  /** Repeated `--slice <source>`: more parts after `<source>`, uploaded as one sliced file. */
  slice?: string[];
  /** `--columns a,b`: the column names of headerless sources (sliced uploads). */
  columns?: string[];
  /** Repeated `--column name:TYPE[(len)]`. */
  column?: TypedColumn[];
  columnsFile?: string;
  description?: string;
  metadata?: Record<string, string>;
  metadataProvider?: string;
  /** `--receipts-table T`. */
  receiptsTable?: string;
  /** False with `--no-receipts`. */
  receipts?: boolean;
}

/** The workflow input a command line describes; a relative local `source` is made absolute against `cwd`. */
export function importInput(source: string, flags: ImportFlags, cwd: string = process.cwd()): ImportTableInput {
  const csv: CsvDialect = definedOnly({ delimiter: flags.delimiter, enclosure: flags.enclosure });
  const file = flags.columnsFile !== undefined ? readColumnsFile(flags.columnsFile, cwd) : undefined;
  const sourceAt = workerLocation(source, cwd);
  return definedOnly<ImportTableInput>({
    connection: flags.connection,
    source: sourceAt,
    slices: flags.slice ? [sourceAt, ...flags.slice.map((part) => workerLocation(part, cwd))] : undefined,
    columns: flags.columns,
    bucketId: flags.bucket,
    createBucket: flags.createBucket,
    table: flags.table,
    mode: flags.mode,
    incremental: flags.incremental,
    primaryKey: flags.primaryKey ?? file?.primaryKey,
    typedColumns: flags.column ?? file?.columns,
    description: flags.description,
    metadata: flags.metadata,
    metadataProvider: flags.metadataProvider,
    csv: Object.keys(csv).length > 0 ? csv : undefined,
    via: flags.via,
    gzip: flags.gzip,
    transferTaskQueue: flags.transferTaskQueue,
    receipts: receiptsOf(flags),
  });
}

/** The `receipts` input of `--no-receipts` / `--receipts-table T` (absent: the worker's setting). */
export function receiptsOf(flags: { receipts?: boolean; receiptsTable?: string }): ReceiptsOption | undefined {
  if (flags.receipts === false) return false;
  return flags.receiptsTable !== undefined ? { table: flags.receiptsTable } : undefined;
}

/** `--receipts-table` and `--no-receipts` (import, schedule import, extract). */
export function addReceiptsOptions(command: Command): Command {
  return command
    .option(
      '--receipts-table <table id>',
      "where the load's receipt goes (default: the worker's SAPI_RECEIPTS_TABLE, else in.c-sapi-temporal.receipts)",
      receiptsTableArg,
    )
    .option('--no-receipts', 'write no load receipt (the result still carries it)');
}

function receiptsTableArg(value: string): string {
  if (!RECEIPTS_TABLE_PATTERN.test(value)) throw new InvalidArgumentError(`must be a table id like ${DEFAULT_RECEIPTS_TABLE}`);
  return value;
}

/** Adds `<source>` and the import flags (shared by `import` and `schedule import`). */
export function addImportArguments(command: Command): Command {
  const withImport = command
    .argument(
      '<source>',
      "a file on the worker's host, an http(s):// URL or s3://bucket/key; a relative path is made absolute against the current directory (the worker may run in another one)",
    )
    .requiredOption('--bucket <id>', 'bucket id, e.g. in.c-main', bucketIdArg)
    .requiredOption('--table <name>', 'table name within the bucket', tableNameArg)
    .option('--create-bucket', 'create the bucket when it does not exist')
    .addOption(new Option('--mode <mode>', 'create a new table or load into an existing one').choices(['create', 'load']).default('create'))
    .option('--incremental', 'with --mode load: append (upsert by primary key) instead of replacing the rows')
    .option('--primary-key <columns>', 'primary key columns, comma-separated (a,b)', parseList)
    .addOption(
      new Option('--via <via>', 'upload directly to object storage (resumable) or through the importer service (default: direct)').choices([
        'direct',
        'importer',
      ]),
    )
    .option('--delimiter <char>', 'CSV delimiter (default ","; \\t or tab for a tab)', parseCsvCharacter)
    .option('--enclosure <char>', "CSV enclosure (default '\"')", parseCsvCharacter)
    .option('--gzip', 'compress while uploading')
    .option(
      '--slice <source>',
      'one more part after <source>: all are uploaded, in order, as the slices of one sliced file (headerless CSV parts: give --columns or typed columns) (repeatable)',
      collectString,
    )
    .option('--columns <names>', 'column names of headerless sources (sliced uploads), comma-separated (a,b)', parseList)
    .option(
      '--column <name:TYPE[(len)]>',
      'with --mode create: make a typed table; one per column of the file, e.g. id:INTEGER, price:NUMBER(10,2), name:VARCHAR(255), "day:DATE NOT NULL" (repeatable)',
      collectColumn,
    )
    .option(
      '--columns-file <defs.json>',
      'with --mode create: the typed columns as JSON, [{"name", "definition": {"type", "length", "nullable", "default"}}] or {"columns": […], "primaryKeysNames": […]}',
    )
    .option('--description <text>', "set the table's description (metadata KBC.description) after the load")
    .option('--metadata <key=value>', 'set a table metadata entry after the load (repeatable)', collectMetadata)
    .option('--metadata-provider <name>', `provider of the metadata entries (default: ${DEFAULT_METADATA_PROVIDER})`);
  return addReceiptsOptions(withImport);
}

const collectString = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Usage error when the flags contradict each other (commander cannot express it). */
export function checkImportFlags(command: Command, flags: ImportFlags): void {
  if (flags.receipts === false && flags.receiptsTable !== undefined) {
    command.error('error: --no-receipts and --receipts-table contradict each other: give one', { exitCode: 2, code: 'sapi.usage' });
  }
  if (flags.incremental && flags.mode !== 'load') {
    command.error('error: --incremental needs --mode load (a new table has nothing to append to)', { exitCode: 2, code: 'sapi.usage' });
  }
  if (flags.column && flags.columnsFile !== undefined) {
    command.error('error: give the typed columns with --column or with --columns-file, not both', { exitCode: 2, code: 'sapi.usage' });
  }
  if ((flags.column || flags.columnsFile !== undefined) && flags.mode !== 'create') {
    command.error("error: --column/--columns-file need --mode create (a load uses the existing table's types)", { exitCode: 2, code: 'sapi.usage' });
  }
  if (flags.slice && flags.via === 'importer') {
    command.error('error: --slice needs --via direct (the importer service takes one file)', { exitCode: 2, code: 'sapi.usage' });
  }
  if (flags.slice && flags.columns === undefined && !flags.column && flags.columnsFile === undefined) {
    command.error('error: --slice needs --columns (or typed columns): the slices of a sliced file carry no header row', { exitCode: 2, code: 'sapi.usage' });
  }
  if (flags.metadataProvider !== undefined && flags.description === undefined && flags.metadata === undefined) {
    command.error('error: --metadata-provider needs --description or --metadata', { exitCode: 2, code: 'sapi.usage' });
  }
  if (flags.columnsFile !== undefined) {
    try {
      readColumnsFile(flags.columnsFile);
    } catch (err) {
      command.error(`error: ${err instanceof Error ? err.message : String(err)}`, { exitCode: 2, code: 'sapi.usage' });
    }
  }
}

/** The summary of a finished import (also what `wait` prints for an importTableWorkflow). */
export function summarizeImport(result: ImportTableResult, input: Partial<ImportTableInput> = {}): Summary {
  return {
    title: `imported ${result.importedRowsCount} rows into ${result.tableId}`,
    fields: [
      ['table', result.tableId],
      ['rows', result.importedRowsCount],
      ['bytes', `${formatBytes(result.bytes)} (${result.bytes} B${input.gzip ? ' gzipped' : ''})`],
      ['sha256', result.sha256],
      ['file id', result.fileId],
      ['job id', result.jobId],
      ...(result.typed ? [['typed', 'yes'] as [string, string]] : []),
      ...(result.metadataSet ? [['metadata', `${result.metadataSet} entr${result.metadataSet === 1 ? 'y' : 'ies'} set`] as [string, string]] : []),
    ],
  };
}

/** `sapi-temporal import <source>`: runs `importTableWorkflow` and waits for the table. */
export function registerImportCommand(program: Command, context: CliContext): void {
  const command = addImportArguments(
    program.command('import').description('import a CSV into a Storage table (importTableWorkflow) and wait for it, with a progress bar'),
  );
  addWorkflowOptions(command).action(async (source: string, flags: ImportFlags) => {
    checkImportFlags(command, flags);
    const input = importInput(source, flags);
    const tableId = `${input.bucketId}.${input.table}`;
    await context.runTransfer({
      verb: 'import',
      workflowType: 'importTableWorkflow',
      workflowId: flags.workflowId ?? defaultWorkflowId('import', tableId),
      input,
      ...runOptions(context.env, flags),
      summarize: (result) => summarizeImport(result, input),
    });
  });
}
