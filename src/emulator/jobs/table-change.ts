/**
 * Jobs that change an existing table, as the service's: drop (`tableDrop`), add or delete a column
 * (`tableColumnAdd`, `tableColumnDelete`), delete rows or truncate (`tableRowsDelete`), definition updates
 * (`tableDefinitionUpdate`), snapshots (`tableSnapshotCreate`, a table created from one) and
 * the pull of a table into a development branch (`devBranchTablePull`). Data, table record and the job's commit marker
 * change in one DuckDB transaction, like the loads'.
 */
import { type DuckDBConnection } from '@duckdb/node-api';
import { baseTypeOf, columnSql, datatypeMetadata, duckdbType } from '../column-types';
import { type EmulatorContext } from '../context';
import { JobError, TOO_MANY_COLUMNS, tooManyColumnsMessage } from '../errors';
import { type ExportOperationParams, whereSql } from './export-query';
import { type BucketRecord, type ColumnDefinition, type JobRecord, type MetadataRecord, type SnapshotRecord, type TableRecord } from '../model';
import { snapshotResource, tableResource } from '../resources';
import { TIMESTAMP_COLUMN, ident, tableRef } from '../table-store';
import { formatTimestamp } from '../time';
import { stagingTableSql } from './csv-load';
import { inTransaction, tableStats } from './table-load';

/** The table a job works on, or the job's `storage.tables.notFound` (it went away between the request and the run). */
export function jobTable(ctx: EmulatorContext, job: JobRecord): TableRecord {
  const table = job.tableId ? ctx.tables.get(job.tableId) : undefined;
  if (!table) throw new JobError('storage.tables.notFound', `The table "${job.tableId ?? ''}" was not found in the project "${ctx.projectId}"`);
  return table;
}

/** Runs `change` on its own connection inside a transaction that also saves the record and the job's commit marker. */
async function commitChange<T>(
  ctx: EmulatorContext,
  job: JobRecord,
  record: TableRecord,
  change: (conn: DuckDBConnection) => Promise<T>,
  results: (changed: T) => unknown,
): Promise<unknown> {
  const conn = await ctx.tables.connect();
  try {
    const out = await inTransaction(conn, async () => {
      const changed = await change(conn);
      const stats = await tableStats(conn, tableRef(record.bucketId, record.name), record.columns);
      record.rowsCount = stats.rows;
      record.dataSizeBytes = stats.bytes;
      const value = results(changed);
      await ctx.tables.writeMeta(conn, record);
      await ctx.tables.writeJobCommit(conn, job.id, value);
      return value;
    });
    ctx.tables.remember(record);
    return out;
  } finally {
    conn.closeSync();
  }
}

/** `KBC.datatype.*` entries (provider `storage`) of a typed column. */
function storageEntries(
  ctx: EmulatorContext,
  tableId: string,
  column: string,
  definition: ColumnDefinition,
  basetype: string,
  timestamp: string,
): MetadataRecord[] {
  return datatypeMetadata(definition, basetype).map((m) => ({
    id: String(ctx.nextId('metadata')),
    objectType: 'column' as const,
    objectId: `${tableId}.${column}`,
    key: m.key,
    value: m.value,
    provider: 'storage',
    timestamp,
  }));
}

/** `tableDrop` (`DELETE tables/{id}?async=1`): the table, its data and its metadata go. */
export async function runTableDrop(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  await ctx.tables.dropTable(table.id);
  ctx.metadata.deleteObject('table', table.id);
  return null;
}

/** `operationParams` of `tableColumnAdd`. */
export interface ColumnAddParams {
  name: string;
  /** Typed tables: the column's definition in the backend's types. */
  definition?: ColumnDefinition;
  basetype?: string;
  /** `definition.description`: the column's `KBC.description`. */
  description?: string;
}

/**
 * `tableColumnAdd` (`POST tables/{id}/columns`): a string column (existing rows get an empty value) on an untyped
 * table, a column of the given type (existing rows get its default, else NULL) on a typed one.
 */
export async function runColumnAdd(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  const p = job.operationParams as unknown as ColumnAddParams;
  if (table.columns.some((c) => c.toLowerCase() === p.name.toLowerCase())) {
    throw new JobError('storage.tables.columnAlreadyExists', `Column "${p.name}" already exists in table "${table.id}".`);
  }
  if (table.columns.length >= ctx.maxTableColumns) {
    throw new JobError(TOO_MANY_COLUMNS, tooManyColumnsMessage(ctx.maxTableColumns, `Table ${table.id}`, `${table.columns.length} and one more was added`));
  }
  const now = formatTimestamp();
  const record: TableRecord = { ...table, columns: [...table.columns, p.name], lastChangeDate: now };
  const definition = table.definition ? p.definition : undefined;
  if (table.definition) {
    if (!definition)
      throw new JobError(
        'storage.tables.validation',
        `table ${table.id} is typed: the column needs a definition {type, length, nullable, default} or a basetype`,
      );
    const basetype = p.basetype ?? baseTypeOf(definition);
    record.definition = { ...table.definition, columns: [...table.definition.columns, { name: p.name, definition, basetype }] };
    record.storageMetadata = [...(table.storageMetadata ?? []), ...storageEntries(ctx, table.id, p.name, definition, basetype, now)];
  }
  const ref = tableRef(table.bucketId, table.name);
  await commitChange(
    ctx,
    job,
    record,
    async (conn) => {
      try {
        if (!definition) {
          await conn.run(`ALTER TABLE ${ref} ADD COLUMN ${ident(p.name)} VARCHAR DEFAULT ''`);
          return;
        }
        const type = duckdbType(definition);
        const dflt =
          definition.default !== undefined && definition.default !== '' ? ` DEFAULT CAST('${definition.default.replace(/'/g, "''")}' AS ${type})` : '';
        await conn.run(`ALTER TABLE ${ref} ADD COLUMN ${ident(p.name)} ${type}${dflt}`);
        if (!definition.nullable) await conn.run(`ALTER TABLE ${ref} ALTER COLUMN ${ident(p.name)} SET NOT NULL`);
      } catch (error) {
        throw new JobError('storage.tables.validation', `column "${p.name}" cannot be added to table ${table.id}: ${(error as Error).message}`);
      }
    },
    () => null,
  );
  if (p.description) ctx.metadata.upsert('column', `${table.id}.${p.name}`, 'user', [{ key: 'KBC.description', value: p.description }]);
  return tableResource(ctx, record);
}

/** `tableColumnDelete` (`DELETE tables/{id}/columns/{name}`): the column, its values and its metadata go. */
export async function runColumnDelete(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  const name = String(job.operationParams.name);
  const problem = columnDeleteProblem(table, name);
  if (problem) throw new JobError(problem.code, problem.message);
  const record: TableRecord = { ...table, columns: table.columns.filter((c) => c !== name), lastChangeDate: formatTimestamp() };
  if (table.definition) {
    record.definition = { ...table.definition, columns: table.definition.columns.filter((c) => c.name !== name) };
    record.storageMetadata = (table.storageMetadata ?? []).filter((m) => m.objectId !== `${table.id}.${name}`);
  }
  const ref = tableRef(table.bucketId, table.name);
  await commitChange(
    ctx,
    job,
    record,
    (conn) => conn.run(`ALTER TABLE ${ref} DROP COLUMN ${ident(name)}`),
    () => null,
  );
  for (const m of ctx.metadata.list('column', `${table.id}.${name}`)) ctx.metadata.delete(m.id);
  return tableResource(ctx, record);
}

/** Why a column cannot be deleted (unknown, in the primary key, the last one), or undefined. */
export function columnDeleteProblem(table: TableRecord, name: string): { status: number; code: string; message: string } | undefined {
  if (!table.columns.includes(name)) {
    return {
      status: 404,
      code: 'storage.tables.columnNotFound',
      message: `Column "${name}" not found in table "${table.id}" (columns: ${table.columns.join(', ')})`,
    };
  }
  if (table.primaryKey.includes(name)) {
    return {
      status: 400,
      code: 'storage.tables.cannotDeletePrimaryKeyColumn',
      message: `Column "${name}" is part of the primary key of table "${table.id}" (${table.primaryKey.join(', ')}); remove the primary key first`,
    };
  }
  if (table.columns.length === 1) {
    return {
      status: 400,
      code: 'storage.tables.cannotDeleteLastColumn',
      message: `Column "${name}" is the last column of table "${table.id}"; delete the table instead`,
    };
  }
  return undefined;
}

/** `operationParams` of `tableRowsDelete`: the filters (as the export's), epoch-ms bounds. */
export interface RowsDeleteParams {
  /** As sent (the service's `operationParams.request`). */
  request: { whereFilters: ExportOperationParams['whereFilters']; changedSince: string | null; changedUntil: string | null };
  allowTruncate: boolean;
  /** The filters with the time bounds resolved when the request came. */
  query: Pick<ExportOperationParams, 'whereFilters' | 'changedSince' | 'changedUntil'>;
}

/** `tableRowsDelete` (`DELETE tables/{id}/rows`): the rows matching every filter, or all rows (`allowTruncate`); `{deletedRows}`. */
export async function runRowsDelete(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  const p = job.operationParams as unknown as RowsDeleteParams;
  const ref = tableRef(table.bucketId, table.name);
  const record: TableRecord = { ...table, lastChangeDate: formatTimestamp() };
  const missing = (p.query.whereFilters ?? []).map((f) => f.column).filter((c) => !table.columns.includes(c));
  if (missing.length) throw new JobError('storage.tables.columnNotFound', `columns ${missing.join(', ')} are not in table ${table.id}`);
  return commitChange(
    ctx,
    job,
    record,
    async (conn) => {
      const where = whereSql(p.query);
      const [[before]] = (await conn.runAndReadAll(`SELECT count(*) FROM ${ref}`)).getRowsJS() as [[bigint]];
      try {
        await conn.run(`DELETE FROM ${ref}${where ? ` WHERE ${where}` : ''}`);
      } catch (error) {
        // a value that does not convert to a typed column's type
        throw new JobError('storage.tables.validation', `rows of table ${table.id} cannot be filtered so: ${(error as Error).message}`);
      }
      const [[after]] = (await conn.runAndReadAll(`SELECT count(*) FROM ${ref}`)).getRowsJS() as [[bigint]];
      return Number(before) - Number(after);
    },
    (deletedRows) => ({ deletedRows }),
  );
}

/** `tableSnapshotCreate` (`POST tables/{id}/snapshots`): the table's rows and properties copied; results: the snapshot. */
export async function runSnapshotCreate(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  const id = ctx.nextId('snapshot');
  const record: SnapshotRecord = {
    id,
    description: String(job.operationParams.description ?? ''),
    createdTime: formatTimestamp(),
    creatorToken: job.creatorToken,
    table: {
      id: table.id,
      name: table.name,
      bucketId: table.bucketId,
      columns: table.columns,
      primaryKey: table.primaryKey,
      ...(table.definition ? { definition: table.definition, storageMetadata: table.storageMetadata } : {}),
    },
  };
  const conn = await ctx.tables.connect();
  try {
    const cols = [...table.columns, TIMESTAMP_COLUMN].map(ident).join(', ');
    const out = await inTransaction(conn, async () => {
      await conn.run(`CREATE TABLE ${ctx.tables.snapshotRef(id)} AS SELECT ${cols} FROM ${tableRef(table.bucketId, table.name)} ORDER BY rowid`);
      await ctx.tables.writeSnapshot(conn, record);
      const value = snapshotResource(ctx, record);
      await ctx.tables.writeJobCommit(conn, job.id, value);
      return value;
    });
    ctx.tables.rememberSnapshot(record);
    return out;
  } finally {
    conn.closeSync();
  }
}

/**
 * `tableCreate` from a snapshot (`tables-async` with `snapshotId`): a new table with the snapshot's columns, primary
 * key, types and rows (in their order, with the times they were written).
 */
export async function runTableCreateFromSnapshot(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const p = job.operationParams as { bucketId: string; name: string; source: { snapshotId: number } };
  const snapshot = ctx.tables.snapshot(Number(p.source.snapshotId));
  if (!snapshot) throw new JobError('storage.snapshots.notFound', `Snapshot ${p.source.snapshotId} not found`);
  const tableId = `${p.bucketId}.${p.name}`;
  if (!ctx.state.get<BucketRecord>('bucket', p.bucketId))
    throw new JobError('storage.buckets.notFound', `The bucket "${p.bucketId}" was not found in the project "${ctx.projectId}"`);
  if (ctx.tables.get(tableId)) throw new JobError('storage.tables.alreadyExists', `table ${tableId} already exists`);
  const now = formatTimestamp();
  const record: TableRecord = {
    id: tableId,
    name: p.name,
    bucketId: p.bucketId,
    columns: snapshot.table.columns,
    primaryKey: snapshot.table.primaryKey,
    rowsCount: 0,
    dataSizeBytes: 0,
    created: now,
    lastImportDate: now,
    lastChangeDate: now,
    ...(snapshot.table.definition
      ? {
          definition: snapshot.table.definition,
          storageMetadata: snapshot.table.definition.columns.flatMap((c) => storageEntries(ctx, tableId, c.name, c.definition, c.basetype, now)),
        }
      : {}),
  };
  const conn = await ctx.tables.connect();
  try {
    await ctx.tables.ensureSchema(conn, p.bucketId);
    const ref = tableRef(p.bucketId, p.name);
    const out = await inTransaction(conn, async () => {
      // the table as it was made (defaults, NOT NULL), then the rows in their order with the times they were written
      const definition = snapshot.table.definition;
      if (definition)
        await conn.run(
          `CREATE TABLE ${ref} (${[...definition.columns.map((c) => columnSql(c.name, c.definition)), `${ident(TIMESTAMP_COLUMN)} BIGINT`].join(', ')})`,
        );
      else await conn.run(stagingTableSql(ref, record.columns));
      const cols = [...record.columns, TIMESTAMP_COLUMN].map(ident).join(', ');
      await conn.run(`INSERT INTO ${ref} (${cols}) SELECT ${cols} FROM ${ctx.tables.snapshotRef(snapshot.id)} ORDER BY rowid`);
      const stats = await tableStats(conn, ref, record.columns);
      record.rowsCount = stats.rows;
      record.dataSizeBytes = stats.bytes;
      const value = tableResource(ctx, record);
      await ctx.tables.writeMeta(conn, record);
      await ctx.tables.writeJobCommit(conn, job.id, value);
      return value;
    });
    ctx.tables.remember(record);
    return out;
  } finally {
    conn.closeSync();
  }
}

/** One column patch of `PUT tables/{id}/definition`; a field not sent is not changed. */
export interface ColumnPatch {
  name: string;
  length?: string;
  nullable?: boolean;
  /** null: drop the default. */
  default?: string | null;
  /** null or '': clear the column's description. */
  description?: string | null;
}

/** `operationParams` of `tableDefinitionUpdate`. */
export interface DefinitionUpdateParams {
  tableStringId: string;
  displayName?: string;
  description?: string | null;
  columns: ColumnPatch[];
}

/** Sets (or with null / '' removes) the `KBC.description` of provider `user` of a table or column. */
function setDescription(ctx: EmulatorContext, objectType: 'table' | 'column', objectId: string, value: string | null): void {
  if (value) {
    ctx.metadata.upsert(objectType, objectId, 'user', [{ key: 'KBC.description', value }]);
    return;
  }
  for (const m of ctx.metadata.list(objectType, objectId)) if (m.provider === 'user' && m.key === 'KBC.description') ctx.metadata.delete(m.id);
}

/**
 * A typed column's definition after a patch, as a Snowflake stack allows it: nullable either way, drop the default,
 * a longer text or a more precise number of the same scale; anything else fails the job, naming the column.
 */
function patchedDefinition(ctx: EmulatorContext, tableId: string, old: ColumnDefinition, patch: ColumnPatch): ColumnDefinition {
  const refuse = (what: string): never => {
    throw new JobError('storage.tables.columnDefinitionUpdateNotSupported', `column "${patch.name}" of table ${tableId}: ${what}`);
  };
  const next: ColumnDefinition = { ...old };
  if (patch.nullable !== undefined) next.nullable = patch.nullable;
  if (patch.default !== undefined) {
    if (patch.default === null) delete next.default;
    else if (patch.default !== old.default && ctx.tableBackend === 'snowflake')
      refuse('a Snowflake stack can only drop a default (default: null), not add or change one');
    else next.default = patch.default;
  }
  if (patch.length !== undefined && patch.length !== old.length) {
    const base = baseTypeOf(old);
    if (base === 'STRING') {
      if (!/^\d+$/.test(patch.length) || Number(patch.length) < Number(old.length ?? 0))
        refuse(`the length of a ${old.type} can only grow (now ${old.length ?? 'none'}; got "${patch.length}")`);
    } else if (base === 'NUMERIC') {
      const [p0, s0] = (old.length ?? '38,0').split(',').map((x) => Number(x.trim()));
      const m = /^\s*(\d+)\s*(?:,\s*(\d+)\s*)?$/.exec(patch.length);
      if (!m || Number(m[1]) < p0! || Number(m[1]) > 38 || Number(m[2] ?? 0) !== (s0 ?? 0))
        refuse(`the precision of a ${old.type} can only grow up to 38, at the same scale (now ${old.length ?? '38,0'}; got "${patch.length}")`);
      next.length = `${m![1]},${s0 ?? 0}`;
    } else {
      refuse(`type ${old.type} takes no length; got "${patch.length}"`);
    }
    if (base === 'STRING') next.length = patch.length;
  }
  return next;
}

/**
 * `tableDefinitionUpdate` (`PUT tables/{id}/definition`): display name, table and column descriptions (`KBC.description`
 * of provider `user`, as the UI's), and on typed tables the columns' nullability, default and length.
 */
export async function runDefinitionUpdate(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  return applyDefinitionUpdate(ctx, job, job.operationParams as unknown as DefinitionUpdateParams);
}

/** `operationParams` of `tableColumnDefinitionUpdate` (`PUT tables/{id}/columns/{name}/definition`), as the service's. */
export interface ColumnDefinitionUpdateParams {
  columnName: string;
  columnDefinition: { length?: string; nullable?: boolean; default?: string; removeDefault?: boolean };
}

/** `tableColumnDefinitionUpdate`: one typed column's nullability, length or default, by the rules of {@link runDefinitionUpdate}. */
export async function runColumnDefinitionUpdate(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const p = job.operationParams as unknown as ColumnDefinitionUpdateParams;
  const d = p.columnDefinition;
  const patch: ColumnPatch = {
    name: p.columnName,
    ...(d.length !== undefined ? { length: d.length } : {}),
    ...(d.nullable !== undefined ? { nullable: d.nullable } : {}),
    ...(d.removeDefault ? { default: null } : d.default !== undefined ? { default: d.default } : {}),
  };
  return applyDefinitionUpdate(ctx, job, { tableStringId: job.tableId ?? '', columns: [patch] });
}

async function applyDefinitionUpdate(ctx: EmulatorContext, job: JobRecord, p: DefinitionUpdateParams): Promise<unknown> {
  const table = jobTable(ctx, job);
  const unknown = p.columns.map((c) => c.name).filter((n) => !table.columns.includes(n));
  if (unknown.length)
    throw new JobError(
      'storage.tables.columnNotFound',
      `column(s) ${unknown.join(', ')} not found in table ${table.id} (columns: ${table.columns.join(', ')})`,
    );
  const now = formatTimestamp();
  const record: TableRecord = { ...table, lastChangeDate: now, ...(p.displayName !== undefined ? { displayName: p.displayName } : {}) };
  const ref = tableRef(table.bucketId, table.name);
  const statements: string[] = [];
  if (table.definition) {
    const changed = new Map<string, ColumnDefinition>();
    for (const patch of p.columns) {
      const current = table.definition.columns.find((c) => c.name === patch.name)!;
      const next = patchedDefinition(ctx, table.id, changed.get(patch.name) ?? current.definition, patch);
      const col = ident(patch.name);
      if (next.nullable !== current.definition.nullable) statements.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} ${next.nullable ? 'DROP' : 'SET'} NOT NULL`);
      if (next.default === undefined && current.definition.default !== undefined) statements.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} DROP DEFAULT`);
      else if (next.default !== undefined && next.default !== current.definition.default)
        statements.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} SET DEFAULT CAST('${next.default.replace(/'/g, "''")}' AS ${duckdbType(next)})`);
      if (baseTypeOf(next) === 'NUMERIC' && next.length !== current.definition.length)
        statements.push(`ALTER TABLE ${ref} ALTER COLUMN ${col} TYPE ${duckdbType(next)}`);
      // only a definition that changes gets new KBC.datatype entries (a description alone leaves them as they are)
      if (JSON.stringify(next) !== JSON.stringify(current.definition)) changed.set(patch.name, next);
    }
    if (changed.size) {
      record.definition = {
        ...table.definition,
        columns: table.definition.columns.map((c) => (changed.has(c.name) ? { ...c, definition: changed.get(c.name)! } : c)),
      };
      const changedIds = new Set([...changed.keys()].map((n) => `${table.id}.${n}`));
      record.storageMetadata = [
        ...(table.storageMetadata ?? []).filter((m) => !changedIds.has(m.objectId)),
        ...[...changed].flatMap(([name, d]) => storageEntries(ctx, table.id, name, d, table.definition!.columns.find((c) => c.name === name)!.basetype, now)),
      ];
    }
  }
  await commitChange(
    ctx,
    job,
    record,
    async (conn) => {
      for (const sql of statements) {
        try {
          await conn.run(sql);
        } catch (error) {
          throw new JobError('storage.tables.columnDefinitionUpdateNotSupported', `table ${table.id}: ${(error as Error).message}`);
        }
      }
    },
    () => null,
  );
  if (p.description !== undefined) setDescription(ctx, 'table', table.id, p.description);
  for (const c of p.columns) if (c.description !== undefined) setDescription(ctx, 'column', `${table.id}.${c.name}`, c.description);
  return tableResource(ctx, record);
}

/**
 * `devBranchTablePull` (`POST branch/{id}/tables/{tableId}/pull`): the emulator's branches share the default branch's
 * tables, so the table is already in the branch as it is in the default branch; results: the table.
 */
export async function runTablePull(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  return tableResource(ctx, jobTable(ctx, job));
}

/**
 * `tablePrimaryKeyAdd` (`POST tables/{id}/primary-key {columns[]}`): the table's key, after checking that no two rows
 * share it (unless `skipDuplicatesCheck`); a table that has a key already fails, as on the service.
 */
export async function runPrimaryKeyAdd(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  const columns = job.operationParams.columns as string[];
  if (table.primaryKey.length) {
    throw new JobError(
      'storage.tables.primaryKeyAlreadyExists',
      `Table ${table.id} has a primary key already (${table.primaryKey.join(', ')}); remove it first`,
    );
  }
  const missing = columns.filter((c) => !table.columns.includes(c));
  if (missing.length)
    throw new JobError(
      'storage.tables.columnNotFound',
      `primary key column(s) ${missing.join(', ')} are not in table ${table.id} (columns: ${table.columns.join(', ')})`,
    );
  const ref = tableRef(table.bucketId, table.name);
  const record: TableRecord = {
    ...table,
    primaryKey: columns,
    lastChangeDate: formatTimestamp(),
    ...(table.definition ? { definition: { ...table.definition, primaryKeysNames: columns } } : {}),
  };
  await commitChange(
    ctx,
    job,
    record,
    async (conn) => {
      if (job.operationParams.skipDuplicatesCheck) return;
      const key = columns.map(ident).join(', ');
      const [[duplicates]] = (await conn.runAndReadAll(`SELECT count(*) FROM (SELECT ${key} FROM ${ref} GROUP BY ${key} HAVING count(*) > 1)`)).getRowsJS() as [
        [bigint],
      ];
      if (Number(duplicates) > 0) {
        throw new JobError(
          'storage.tables.primaryKeyDuplicates',
          `The primary key (${columns.join(', ')}) cannot be set on table ${table.id}: ${Number(duplicates)} value(s) of it occur in more than one row`,
        );
      }
    },
    () => null,
  );
  return tableResource(ctx, record);
}

/** `tablePrimaryKeyDelete` (`DELETE tables/{id}/primary-key`): the table has no key afterwards. */
export async function runPrimaryKeyDelete(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  const record: TableRecord = {
    ...table,
    primaryKey: [],
    lastChangeDate: formatTimestamp(),
    ...(table.definition ? { definition: { ...table.definition, primaryKeysNames: [] } } : {}),
  };
  await commitChange(
    ctx,
    job,
    record,
    async () => undefined,
    () => null,
  );
  return tableResource(ctx, record);
}

/** `tableUpdate` (`PUT tables/{id}?async=1 {displayName}`): the display name. */
export async function runTableUpdate(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  const record: TableRecord = { ...table, displayName: String(job.operationParams.displayName), lastChangeDate: formatTimestamp() };
  await commitChange(
    ctx,
    job,
    record,
    async () => undefined,
    () => null,
  );
  return tableResource(ctx, record);
}
