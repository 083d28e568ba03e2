import { Context } from '@temporalio/activity';
import { startExportOnce, startImportOnce, startTableDefinitionOnce } from '../storage-api';
import type { CsvDialect, ExportTableInput, JobSummary, TypedColumn } from '../contracts/transfer';
import type { ActivityDeps } from './deps';
import { activityMarker, asActivity } from './context';
import { summarizeJob } from './job-summary';

export interface CreateTableAsyncInput {
  connection?: string;
  bucketId: string;
  name: string;
  fileId: number;
  csv?: CsvDialect;
  primaryKey?: string[];
  /** Columns of a headerless source (sliced uploads). */
  columns?: string[];
}

export interface CreateTableDefinitionInput {
  connection?: string;
  bucketId: string;
  name: string;
  columns: TypedColumn[];
  primaryKey?: string[];
}

export interface LoadTableAsyncInput {
  connection?: string;
  tableId: string;
  fileId: number;
  incremental: boolean;
  csv?: CsvDialect;
  columns?: string[];
}

/** The export options of the workflow input, sent as `export-async` parameters. */
export type ExportTableAsyncInput = Pick<
  ExportTableInput,
  'connection' | 'tableId' | 'columns' | 'limit' | 'whereFilters' | 'orderBy' | 'changedSince' | 'gzip'
>;

/**
 * Reconcile across attempts: from the second attempt on, look for the job an earlier attempt created first. The
 * activity's marker (`X-KBC-RunId`, the same in every attempt) proves which job is ours.
 */
function onceOptions() {
  const info = Context.current().info;
  return { lookupFirst: info.attempt > 1, since: info.scheduledTimestampMs - 60_000, signal: Context.current().cancellationSignal, runId: activityMarker() };
}

/** `tables-async`: starts creating a table from a file, at most once per file and table (see reconcile.ts). */
export function createTableAsync(deps: ActivityDeps) {
  return (input: CreateTableAsyncInput): Promise<JobSummary> => asActivity(() => createTableJob(deps, input));
}

/** The body of {@link createTableAsync} (the activity's marker and attempt reconcile a lost response). */
export async function createTableJob(deps: ActivityDeps, input: CreateTableAsyncInput): Promise<JobSummary> {
  const { runId, ...once } = onceOptions();
  const { job } = await startImportOnce(deps.storage(input.connection), {
    ...once,
    operation: 'create',
    create: {
      runId,
      bucketId: input.bucketId,
      name: input.name,
      dataFileId: input.fileId,
      primaryKey: input.primaryKey,
      columns: input.columns,
      ...input.csv,
    },
  });
  return summarizeJob(job);
}

/**
 * `tables-definition`: starts creating an empty typed table, at most once (a lost response is reconciled by the job
 * carrying this activity's marker; see reconcile.ts).
 */
export function createTableDefinition(deps: ActivityDeps) {
  return (input: CreateTableDefinitionInput): Promise<JobSummary> =>
    asActivity(async () => {
      const { runId, ...once } = onceOptions();
      const { job } = await startTableDefinitionOnce(deps.storage(input.connection), {
        ...once,
        definition: { runId, bucketId: input.bucketId, name: input.name, columns: input.columns, primaryKeysNames: input.primaryKey ?? [] },
      });
      return summarizeJob(job);
    });
}

/** `import-async`: starts loading a file into an existing table (incremental or full), at most once per file. */
export function loadTableAsync(deps: ActivityDeps) {
  return (input: LoadTableAsyncInput): Promise<JobSummary> => asActivity(() => loadTableJob(deps, input));
}

/** The body of {@link loadTableAsync} (the activity's marker and attempt reconcile a lost response). */
export async function loadTableJob(deps: ActivityDeps, input: LoadTableAsyncInput): Promise<JobSummary> {
  const { runId, ...once } = onceOptions();
  const { job } = await startImportOnce(deps.storage(input.connection), {
    ...once,
    operation: 'load',
    load: { runId, tableId: input.tableId, dataFileId: input.fileId, incremental: input.incremental, columns: input.columns, ...input.csv },
  });
  return summarizeJob(job);
}

/** `export-async`: starts exporting a table into file storage, reconciled after a lost response. */
export function exportTableAsync(deps: ActivityDeps) {
  return (input: ExportTableAsyncInput): Promise<JobSummary> =>
    asActivity(async () => {
      const { connection: _connection, ...exportInput } = input;
      const { runId, ...once } = onceOptions();
      const { job } = await startExportOnce(deps.storage(input.connection), { ...once, export: { ...exportInput, runId } });
      return summarizeJob(job);
    });
}

/** `GET jobs/{id}`: one poll of a job. */
export function getJob(deps: ActivityDeps) {
  return (input: { connection?: string; jobId: number }): Promise<JobSummary> =>
    asActivity(async () => summarizeJob(await deps.storage(input.connection).getJob({ jobId: input.jobId })));
}
