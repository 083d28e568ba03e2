import { type DuckDBConnection } from '@duckdb/node-api';
import { type EmulatorContext } from '../context';
import { JobError } from '../errors';
import { castSql, columnSql, datatypeMetadata, misfitReason, misfitSql } from '../column-types';
import {
  type BucketRecord,
  type ColumnDefinition,
  type FileRecord,
  type JobRecord,
  type MetadataRecord,
  type TableDefinition,
  type TableRecord,
} from '../model';
import { tableResource } from '../resources';
import { STAGING_PREFIX, TIMESTAMP_COLUMN, ident, tableRef } from '../table-store';
import { formatTimestamp } from '../time';
import { type CsvDialect, loadCsvIntoStaging, stagingTableSql, validateColumnNames } from './csv-load';

/** `operationParams` of `tableCreate` and `tableImport` jobs: everything needed to run (or re-run) the load. */
export interface LoadOperationParams {
  source: { type: 'file'; fileId: number };
  bucketId: string;
  name: string;
  /** tableCreate only. */
  primaryKey?: string[];
  incremental?: boolean;
  delimiter: string;
  enclosure: string;
  escapedBy: string;
  columns?: string[];
  withoutHeaders?: boolean;
  ignoredLinesCount?: number;
  treatValuesAsNull?: string[];
}

function dialectOf(p: LoadOperationParams): CsvDialect {
  return {
    delimiter: p.delimiter,
    enclosure: p.enclosure,
    escapedBy: p.escapedBy,
    columns: p.columns,
    withoutHeaders: p.withoutHeaders ?? false,
    ignoredLinesCount: p.ignoredLinesCount ?? 0,
    treatValuesAsNull: p.treatValuesAsNull ?? [],
  };
}

/**
 * Deletes the earlier rows of each primary key from a table, so the last row of each key in file order stays; picked
 * narrow (key and rowid only): a `row_number()` window over every column of a 1,599-column load ran out of DuckDB's
 * memory limit. The kept rows stay in file order: DuckDB scans in insertion order (`preserve_insertion_order`).
 */
export async function keepLastRowPerKey(conn: DuckDBConnection, ref: string, primaryKey: string[]): Promise<void> {
  if (!primaryKey.length) return;
  await conn.run(`DELETE FROM ${ref} WHERE rowid NOT IN (SELECT max(rowid) FROM ${ref} GROUP BY ${primaryKey.map(ident).join(', ')})`);
}

/** Columns summed per statement by {@link tableStats}: its memory and SQL stay bounded whatever the width. */
const STATS_COLUMNS_PER_QUERY = 256;

/**
 * Rows and bytes of a table. A column's bytes are summed as a list (`list_sum([…])`), not as `a + b + …`, which
 * DuckDB parses as one expression per column deep (its depth limit is 1,000), a group of columns at a time.
 */
export async function tableStats(conn: DuckDBConnection, ref: string, columns: string[]): Promise<{ rows: number; bytes: number }> {
  const [[rows]] = (await conn.runAndReadAll(`SELECT count(*) FROM ${ref}`)).getRowsJS() as [[bigint]];
  let bytes = 0;
  for (let from = 0; from < columns.length; from += STATS_COLUMNS_PER_QUERY) {
    const lengths = columns.slice(from, from + STATS_COLUMNS_PER_QUERY).map((c) => `coalesce(strlen(CAST(${ident(c)} AS VARCHAR)), 0)`);
    const [[sum]] = (await conn.runAndReadAll(`SELECT coalesce(sum(list_sum([${lengths.join(', ')}])), 0) FROM ${ref}`)).getRowsJS() as [[bigint | number]];
    bytes += Number(sum);
  }
  return { rows: Number(rows), bytes };
}

function requireFile(ctx: EmulatorContext, fileId: number): FileRecord {
  const file = ctx.state.get<FileRecord>('file', fileId);
  if (!file) throw new JobError('storage.files.notFound', `file ${fileId} not found: upload it first (files/prepare + upload, or the importer)`);
  return file;
}

/** Runs a load in its own connection: staging table, checks, then one transaction that swaps data, metadata and the job's commit marker. */
async function withStaging<T>(
  ctx: EmulatorContext,
  job: JobRecord,
  bucketId: string,
  run: (conn: DuckDBConnection, staging: { schema: string; name: string; ref: string }) => Promise<T>,
): Promise<T> {
  const conn = await ctx.tables.connect();
  const staging = { schema: bucketId, name: `${STAGING_PREFIX}${job.id}`, ref: '' };
  staging.ref = tableRef(staging.schema, staging.name);
  try {
    await ctx.tables.ensureSchema(conn, bucketId);
    await conn.run(`DROP TABLE IF EXISTS ${staging.ref}`);
    return await run(conn, staging);
  } finally {
    await conn.run(`DROP TABLE IF EXISTS ${staging.ref}`).catch(() => undefined);
    for (const suffix of ['_typed', '_wide'])
      await conn.run(`DROP TABLE IF EXISTS ${tableRef(staging.schema, `${staging.name}${suffix}`)}`).catch(() => undefined);
    conn.closeSync();
  }
}

/** Tables at least this wide are checkpointed after their load ({@link checkpointWide}). */
const CHECKPOINT_COLUMNS = 200;

/**
 * Until a checkpoint, each column of a freshly loaded table holds a block (256 KiB) of DuckDB's buffer pool, and a
 * scan pins them all at once: a table of 1,599 columns could not be exported or previewed within the pool's 256 MB.
 * The checkpoint packs the small columns into shared blocks. It cannot run while another transaction writes (a job
 * record, an event): tried again for up to {@link CHECKPOINT_TRIES} × 100 ms (a preview reads wide tables a group of
 * columns at a time, see `readRows`).
 */
async function checkpointWide(conn: DuckDBConnection, columns: number): Promise<void> {
  if (columns < CHECKPOINT_COLUMNS) return;
  for (let attempt = 1; attempt <= CHECKPOINT_TRIES; attempt++) {
    try {
      await conn.run('CHECKPOINT');
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Attempts of {@link checkpointWide} (100 ms apart). */
const CHECKPOINT_TRIES = 30;

export async function inTransaction<T>(conn: DuckDBConnection, body: () => Promise<T>): Promise<T> {
  await conn.run('BEGIN TRANSACTION');
  try {
    const result = await body();
    await conn.run('COMMIT');
    return result;
  } catch (error) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

export async function runTableCreate(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const p = job.operationParams as unknown as LoadOperationParams;
  const tableId = `${p.bucketId}.${p.name}`;
  if (!ctx.state.get<BucketRecord>('bucket', p.bucketId))
    throw new JobError('storage.buckets.notFound', `The bucket "${p.bucketId}" was not found in the project "${ctx.projectId}"`);
  if (ctx.tables.get(tableId)) throw new JobError('storage.tables.alreadyExists', `table ${tableId} already exists; load into it with import-async instead`);
  const file = requireFile(ctx, p.source.fileId);
  const primaryKey = p.primaryKey ?? [];
  const now = Date.now();
  return withStaging(ctx, job, p.bucketId, async (conn, staging) => {
    const loaded = await loadCsvIntoStaging({
      conn,
      objects: ctx.objects,
      file,
      dialect: dialectOf(p),
      schema: staging.schema,
      stagingName: staging.name,
      tmpDir: ctx.tmpDir,
      maxColumns: ctx.maxTableColumns,
      timestamp: now,
    });
    // a key copies the staging table into the table: its blocks packed first
    if (primaryKey.length) await checkpointWide(conn, loaded.columns.length);
    const missingPk = primaryKey.filter((c) => !loaded.columns.includes(c));
    if (missingPk.length) {
      throw new JobError(
        'storage.tables.validation',
        `primary key column(s) ${missingPk.join(', ')} are not among the file's columns (${loaded.columns.join(', ')})`,
      );
    }
    const ref = tableRef(p.bucketId, p.name);
    const record: TableRecord = {
      id: tableId,
      name: p.name,
      bucketId: p.bucketId,
      columns: loaded.columns,
      primaryKey,
      rowsCount: 0,
      dataSizeBytes: 0,
      created: formatTimestamp(now),
      lastImportDate: formatTimestamp(now),
      lastChangeDate: formatTimestamp(now),
    };
    const results = await inTransaction(conn, async () => {
      // the staging table (defaults and `_timestamp` included) becomes the table, rows in file order (a copy was
      // ~35 % of the load); with a key, the earlier rows of each key then go
      await conn.run(`ALTER TABLE ${staging.ref} RENAME TO ${ident(p.name)}`);
      await keepLastRowPerKey(conn, ref, primaryKey);
      const stats = await tableStats(conn, ref, loaded.columns);
      record.rowsCount = stats.rows;
      record.dataSizeBytes = stats.bytes;
      const out = { ...tableResource(ctx, record), importedRowsCount: loaded.rowsCount };
      await ctx.tables.writeMeta(conn, record);
      await ctx.tables.writeJobCommit(conn, job.id, out);
      return out;
    });
    ctx.tables.remember(record);
    await checkpointWide(conn, record.columns.length);
    return results;
  });
}

export async function runTableImport(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const p = job.operationParams as unknown as LoadOperationParams;
  const tableId = `${p.bucketId}.${p.name}`;
  const table = ctx.tables.get(tableId);
  if (!table) throw new JobError('storage.tables.notFound', `table ${tableId} not found; create it with tables-async first`);
  const file = requireFile(ctx, p.source.fileId);
  const now = Date.now();
  return withStaging(ctx, job, p.bucketId, async (conn, staging) => {
    const loaded = await loadCsvIntoStaging({
      conn,
      objects: ctx.objects,
      file,
      dialect: dialectOf(p),
      schema: staging.schema,
      stagingName: staging.name,
      tmpDir: ctx.tmpDir,
      fallbackColumns: table.columns,
      maxColumns: ctx.maxTableColumns,
      timestamp: now,
    });
    // the staging table's blocks packed before the table (a second set of them) is written
    await checkpointWide(conn, loaded.columns.length);
    validateColumnNames(loaded.columns, `file ${file.id}`);
    const missing = table.columns.filter((c) => !loaded.columns.includes(c));
    if (missing.length) {
      throw new JobError(
        'storage.tables.missingColumns',
        `some columns are missing in the csv file: ${missing.join(', ')}; expected columns: ${table.columns.join(', ')}, got: ${loaded.columns.join(', ')} (check the delimiter ${JSON.stringify(p.delimiter)})`,
      );
    }
    const added = loaded.columns.filter((c) => !table.columns.includes(c));
    let source = staging.ref;
    if (table.definition) {
      if (added.length) {
        throw new JobError(
          'storage.tables.columnsNotMatch',
          `typed table ${tableId} has no column(s) ${added.join(', ')} (its columns: ${table.columns.join(', ')}); a load cannot add columns to a typed table`,
        );
      }
      await checkTypes(conn, staging.ref, table.definition, `file ${file.id}`);
      source = await typedStaging(conn, staging, loaded.columns, table.definition);
    }
    await keepLastRowPerKey(conn, source, table.primaryKey);
    const ref = tableRef(p.bucketId, p.name);
    const record: TableRecord = { ...table, columns: [...table.columns, ...added], lastImportDate: formatTimestamp(now), lastChangeDate: formatTimestamp(now) };
    // a wide table is rebuilt, not appended to: an append to its checkpointed segments takes a fresh block per column
    // at the commit (1,599 columns × 256 KiB is past the pool's 256 MB: "could not allocate block")
    const rebuild = added.length > 0 || record.columns.length >= CHECKPOINT_COLUMNS;
    const results = await inTransaction(conn, async () => {
      if (p.incremental && table.primaryKey.length) {
        // the rows the load replaces go first, from the table as it is (a delete from a rebuilt table in the same
        // transaction made the commit run out of memory)
        const on = table.primaryKey.map((c) => `${ref}.${ident(c)} = s.${ident(c)}`).join(' AND ');
        await conn.run(`DELETE FROM ${ref} USING ${source} AS s WHERE ${on}`);
      }
      if (rebuild) {
        await rebuildTable(conn, {
          staging,
          ref,
          name: p.name,
          columns: table.columns,
          rebuilt: record.columns,
          keepRows: p.incremental ?? false,
          definition: table.definition,
          source,
          timestamp: now,
        });
      } else {
        if (!p.incremental) await conn.run(`DELETE FROM ${ref}`);
        const cols = loaded.columns.map(ident).join(', ');
        await conn.run(`INSERT INTO ${ref} (${cols}, ${ident(TIMESTAMP_COLUMN)}) SELECT ${cols}, ${now} FROM ${source}`);
      }
      const stats = await tableStats(conn, ref, record.columns);
      record.rowsCount = stats.rows;
      record.dataSizeBytes = stats.bytes;
      const out = {
        importedRowsCount: loaded.rowsCount,
        importedColumns: loaded.columns,
        warnings: [] as string[],
        newColumns: added,
        totalRowsCount: stats.rows,
        totalDataSizeBytes: stats.bytes,
        transaction: null,
      };
      await ctx.tables.writeMeta(conn, record);
      await ctx.tables.writeJobCommit(conn, job.id, out);
      return out;
    });
    ctx.tables.remember(record);
    await checkpointWide(conn, record.columns.length);
    return results;
  });
}

/**
 * Rebuilds a table with `rebuilt` columns (its own and a load's new ones) instead of appending to it: a new table
 * (typed columns as `definition` says, the others strings), the kept rows (none for a full load, which replaces them)
 * then the staged rows appended in order, swapped in under the old name. Runs inside the load's transaction.
 *
 * Why: one `ADD COLUMN` per new column keeps a copy of the table's catalog entry each until the commit; an append to a
 * wide table's checkpointed segments takes a fresh 256 KiB block per column at the commit; and an `INSERT … SELECT`
 * of 1,599 columns holds a 32 KiB buffer per column and thread. The rows go through an appender a chunk (2,048 rows)
 * at a time instead, as the CSV parser's do.
 */
async function rebuildTable(
  conn: DuckDBConnection,
  r: {
    staging: { schema: string; name: string };
    ref: string;
    name: string;
    columns: string[];
    rebuilt: string[];
    keepRows: boolean;
    definition: TableDefinition | undefined;
    source: string;
    timestamp: number;
  },
): Promise<void> {
  const name = `${r.staging.name}_wide`;
  const wide = tableRef(r.staging.schema, name);
  if (r.definition) {
    const byName = new Map(r.definition.columns.map((c) => [c.name, c.definition]));
    await conn.run(`CREATE TABLE ${wide} (${[...r.rebuilt.map((c) => columnSql(c, byName.get(c)!)), `${ident(TIMESTAMP_COLUMN)} BIGINT`].join(', ')})`);
  } else {
    await conn.run(stagingTableSql(wide, r.rebuilt));
  }
  const appender = await conn.createAppender(name, r.staging.schema);
  try {
    const append = async (sql: string) => {
      const result = await conn.stream(sql);
      for (let chunk = await result.fetchChunk(); chunk?.rowCount; chunk = await result.fetchChunk()) appender.appendDataChunk(chunk);
    };
    // positional: every column of the rebuilt table in its order, `_timestamp` last
    if (r.keepRows)
      await append(`SELECT ${r.rebuilt.map((c) => (r.columns.includes(c) ? ident(c) : "''")).join(', ')}, ${ident(TIMESTAMP_COLUMN)} FROM ${r.ref}`);
    await append(`SELECT ${r.rebuilt.map(ident).join(', ')}, ${r.timestamp}::BIGINT FROM ${r.source}`);
  } finally {
    appender.closeSync();
  }
  await conn.run(`DROP TABLE ${r.ref}`);
  await conn.run(`ALTER TABLE ${wide} RENAME TO ${ident(r.name)}`);
}

/**
 * The first staged row whose value does not fit its typed column fails the load, naming column, row and value. One
 * scan finds each column's first misfit row; the first column (in table order) that has one is reported.
 */
async function checkTypes(conn: DuckDBConnection, staging: string, definition: TableDefinition, where: string): Promise<void> {
  const firsts = definition.columns.map((c) => `min(CASE WHEN ${misfitSql(c.name, c.definition)} THEN rowid END)`).join(', ');
  const [row] = (await conn.runAndReadAll(`SELECT ${firsts} FROM ${staging}`)).getRowsJS();
  const index = (row ?? []).findIndex((v) => v !== null);
  if (index < 0) return;
  const column = definition.columns[index]!;
  const rowid = Number(row![index]);
  const [[value]] = (await conn.runAndReadAll(`SELECT ${ident(column.name)} FROM ${staging} WHERE rowid = ${rowid}`)).getRowsJS() as [[unknown]];
  throw new JobError(
    'storage.tables.invalidValue',
    `Load error: column "${column.name}", row ${rowid + 1} of ${where}: ${misfitReason(value === null ? null : String(value), column.definition)}; nothing was loaded`,
  );
}

/** The staged strings converted to the table's types, in file order, in a second staging table. */
async function typedStaging(
  conn: DuckDBConnection,
  staging: { schema: string; name: string },
  columns: string[],
  definition: TableDefinition,
): Promise<string> {
  const ref = tableRef(staging.schema, `${staging.name}_typed`);
  const byName = new Map(definition.columns.map((c) => [c.name, c.definition]));
  const select = columns.map((c) => `${castSql(c, byName.get(c)!)} AS ${ident(c)}`).join(', ');
  await conn.run(`DROP TABLE IF EXISTS ${ref}`);
  await conn.run(`CREATE TABLE ${ref} AS SELECT ${select} FROM ${tableRef(staging.schema, staging.name)} ORDER BY rowid`);
  return ref;
}

/** `operationParams` of a `tableDefinitionCreate` job (`POST buckets/{id}/tables-definition`). */
export interface DefinitionOperationParams {
  bucketId: string;
  name: string;
  definition: TableDefinition;
  /** False: no column named a type, the table is not typed (its columns are strings). Absent: typed. */
  typed?: boolean;
}

/** Creates an empty typed table: DuckDB columns of the defined types, its `KBC.datatype.*` metadata, in one commit. */
export async function runTableDefinitionCreate(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const p = job.operationParams as unknown as DefinitionOperationParams;
  const tableId = `${p.bucketId}.${p.name}`;
  if (!ctx.state.get<BucketRecord>('bucket', p.bucketId))
    throw new JobError('storage.buckets.notFound', `The bucket "${p.bucketId}" was not found in the project "${ctx.projectId}"`);
  if (ctx.tables.get(tableId)) throw new JobError('storage.tables.alreadyExists', `table ${tableId} already exists`);
  const now = Date.now();
  const created = formatTimestamp(now);
  const typed = p.typed !== false;
  const storageMetadata: MetadataRecord[] = (typed ? p.definition.columns : []).flatMap((c) =>
    datatypeMetadata(c.definition, c.basetype).map((m) => ({
      id: String(ctx.nextId('metadata')),
      objectType: 'column' as const,
      objectId: `${tableId}.${c.name}`,
      key: m.key,
      value: m.value,
      provider: 'storage',
      timestamp: created,
    })),
  );
  const record: TableRecord = {
    id: tableId,
    name: p.name,
    bucketId: p.bucketId,
    columns: p.definition.columns.map((c) => c.name),
    primaryKey: p.definition.primaryKeysNames,
    rowsCount: 0,
    dataSizeBytes: 0,
    created,
    lastImportDate: null,
    lastChangeDate: created,
    ...(typed ? { definition: p.definition, storageMetadata } : {}),
  };
  const conn = await ctx.tables.connect();
  try {
    await ctx.tables.ensureSchema(conn, p.bucketId);
    const results = await inTransaction(conn, async () => {
      const columnDefinition = (d: ColumnDefinition): ColumnDefinition => (typed ? d : { type: 'VARCHAR', nullable: true });
      const defs = [...p.definition.columns.map((c) => columnSql(c.name, columnDefinition(c.definition))), `${ident(TIMESTAMP_COLUMN)} BIGINT`].join(', ');
      try {
        await conn.run(`CREATE TABLE ${tableRef(p.bucketId, p.name)} (${defs})`);
      } catch (error) {
        throw new JobError('storage.tables.validation', `table ${tableId} cannot be created from its definition: ${(error as Error).message}`);
      }
      const out = tableResource(ctx, record);
      await ctx.tables.writeMeta(conn, record);
      await ctx.tables.writeJobCommit(conn, job.id, out);
      return out;
    });
    ctx.tables.remember(record);
    return results;
  } finally {
    conn.closeSync();
  }
}
