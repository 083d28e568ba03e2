import { type DuckDBConnection } from '@duckdb/node-api';
import { ApiError } from '../errors';
import { type TableRecord } from '../model';
import { TIMESTAMP_COLUMN, ident, tableRef } from '../table-store';

export type WhereOperator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

export interface WhereFilter {
  column: string;
  operator: WhereOperator;
  values: string[];
  /** Optional cast before comparing: INTEGER, DOUBLE, BIGINT, REAL, DECIMAL (numeric compare) or VARCHAR. */
  dataType?: string;
}

export interface OrderBy {
  column: string;
  order: 'ASC' | 'DESC';
  dataType?: string;
}

/** `operationParams` of a `tableExport` job. */
export interface ExportOperationParams {
  bucketId: string;
  name: string;
  columns?: string[];
  limit?: number;
  whereFilters?: WhereFilter[];
  orderBy?: OrderBy[];
  /** Epoch ms bounds on the time a row was last written. */
  changedSince?: number;
  changedUntil?: number;
  gzip: boolean;
  fileType: 'csv';
}

const SQL_OPERATORS: Record<WhereOperator, string> = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' };
const NUMERIC_TYPES = new Set(['INTEGER', 'BIGINT', 'DOUBLE', 'REAL', 'DECIMAL', 'NUMERIC', 'FLOAT']);

function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function typed(expr: string, dataType?: string): string {
  return dataType && NUMERIC_TYPES.has(dataType.toUpperCase()) ? `TRY_CAST(${expr} AS DOUBLE)` : expr;
}

/** Checks the export parameters against the table; throws a 400 naming the bad value. */
export function validateExport(table: TableRecord, p: ExportOperationParams): void {
  const known = new Set(table.columns);
  const check = (column: string, where: string): void => {
    if (!known.has(column)) {
      throw new ApiError(
        400,
        'storage.tables.columnNotFound',
        `${where}: column "${column}" is not in table ${table.id} (columns: ${table.columns.join(', ')})`,
      );
    }
  };
  for (const c of p.columns ?? []) check(c, 'columns');
  for (const [i, f] of (p.whereFilters ?? []).entries()) {
    check(f.column, `whereFilters[${i}]`);
    if (!SQL_OPERATORS[f.operator])
      throw new ApiError(400, 'storage.validation', `whereFilters[${i}].operator must be one of eq, ne, gt, ge, lt, le; got "${f.operator}"`);
    if (!f.values.length) throw new ApiError(400, 'storage.validation', `whereFilters[${i}].values must list at least one value`);
  }
  for (const [i, o] of (p.orderBy ?? []).entries()) check(o.column, `orderBy[${i}]`);
}

/**
 * `a OP b OP …` nested as a balanced tree: DuckDB parses a flat chain one level deeper per term and refuses more than
 * 1,000 levels; balanced, 10,000 terms are 14 deep.
 */
export function balanced(terms: string[], op: 'AND' | 'OR'): string {
  if (terms.length === 1) return `(${terms[0]})`;
  const half = Math.ceil(terms.length / 2);
  return `(${balanced(terms.slice(0, half), op)} ${op} ${balanced(terms.slice(half), op)})`;
}

/** The condition of the rows the filters and time bounds select (all of them ANDed), or '' when there are none. */
export function whereSql(p: Pick<ExportOperationParams, 'whereFilters' | 'changedSince' | 'changedUntil'>): string {
  const conditions: string[] = [];
  for (const f of p.whereFilters ?? []) {
    const column = typed(ident(f.column), f.dataType);
    const values = f.values.map((v) => typed(literal(v), f.dataType));
    if (f.operator === 'eq') conditions.push(`${column} IN (${values.join(', ')})`);
    else if (f.operator === 'ne') conditions.push(`${column} NOT IN (${values.join(', ')})`);
    else
      conditions.push(
        balanced(
          values.map((v) => `${column} ${SQL_OPERATORS[f.operator]} ${v}`),
          'OR',
        ),
      );
  }
  if (p.changedSince !== undefined) conditions.push(`${ident(TIMESTAMP_COLUMN)} >= ${Math.floor(p.changedSince)}`);
  if (p.changedUntil !== undefined) conditions.push(`${ident(TIMESTAMP_COLUMN)} < ${Math.floor(p.changedUntil)}`);
  return conditions.length ? balanced(conditions, 'AND') : '';
}

/**
 * The SELECT that produces the export, in table order unless `orderBy` says otherwise. `text`: every value as a
 * string, NULL as '' (what a CSV writer should print).
 */
export function exportSql(
  table: TableRecord,
  p: ExportOperationParams,
  options: { text?: boolean; stableOrder?: boolean } = {},
): { sql: string; columns: string[] } {
  const columns = p.columns?.length ? p.columns : table.columns;
  const condition = whereSql(p);
  const orderBy = p.orderBy?.map((o) => `${typed(ident(o.column), o.dataType)} ${o.order}`) ?? [];
  // a stable order breaks ties by insertion order, so reads of the same rows in several queries line up
  const stable = options.stableOrder === true;
  const order = orderBy.length ? [...orderBy, ...(stable ? ['rowid'] : [])].join(', ') : 'rowid';
  const from = tableRef(table.bucketId, table.name);
  const where = condition ? `WHERE ${condition}` : '';
  // Typed columns leave as text (DuckDB's canonical form: `2024-05-01`, `12.50`, `true`), like the CSV they came from.
  const select = `SELECT ${columns.map((c) => (options.text ? `coalesce(CAST(${ident(c)} AS VARCHAR), '') AS ${ident(c)}` : table.definition ? `CAST(${ident(c)} AS VARCHAR) AS ${ident(c)}` : ident(c))).join(', ')} FROM ${from}`;
  // A limit in table order is a plain LIMIT of the scan, which keeps the insertion (rowid) order: DuckDB's top-N of
  // `ORDER BY rowid LIMIT n` takes ~200 KiB per column (a preview of 999 columns did not fit its 256 MB).
  const limit = p.limit === undefined ? '' : `LIMIT ${Math.max(0, Math.floor(p.limit))}`;
  const sql = [select, where, stable || orderBy.length || !limit ? `ORDER BY ${order}` : '', limit].filter(Boolean).join(' ');
  return { sql, columns };
}

/**
 * Columns per query of {@link readRows}: a scan holds buffers per column and thread (32 KiB pieces), and a preview of
 * 1,599 columns in one query ran out of DuckDB's 256 MB pool now and then on a loaded machine.
 */
const READ_GROUP_COLUMNS = 200;

/**
 * Reads the rows `p` asks for into memory (a preview). A table wider than {@link READ_GROUP_COLUMNS} is read a group
 * of columns at a time in one transaction (one snapshot), each group in the same stable order, and the parts joined.
 */
export async function readRows(conn: DuckDBConnection, table: TableRecord, p: ExportOperationParams): Promise<{ columns: string[]; rows: unknown[][] }> {
  const columns = p.columns?.length ? p.columns : table.columns;
  if (columns.length <= READ_GROUP_COLUMNS) {
    const { sql } = exportSql(table, p);
    return { columns, rows: (await conn.runAndReadAll(sql)).getRowsJS() };
  }
  const rows: unknown[][] = [];
  await conn.run('BEGIN TRANSACTION');
  try {
    for (let start = 0; start < columns.length; start += READ_GROUP_COLUMNS) {
      const { sql } = exportSql(table, { ...p, columns: columns.slice(start, start + READ_GROUP_COLUMNS) }, { stableOrder: true });
      (await conn.runAndReadAll(sql)).getRowsJS().forEach((part, i) => (rows[i] ??= []).push(...part));
    }
  } finally {
    await conn.run('COMMIT').catch(() => undefined);
  }
  return { columns, rows };
}

/** `changedSince`/`changedUntil`: unix seconds, an ISO date, or a relative `-2 days` / `-30 minutes`. Epoch ms. */
export function parseTimeParam(name: string, value: string, now = Date.now()): number {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const relative = /^([-+]?\d+)\s*(second|minute|hour|day|week)s?$/i.exec(trimmed);
  if (relative) {
    const unit = { second: 1e3, minute: 6e4, hour: 3.6e6, day: 8.64e7, week: 6.048e8 }[relative[2]!.toLowerCase() as 'second'];
    return now + Number(relative[1]) * unit;
  }
  const parsed = Date.parse(trimmed);
  if (Number.isNaN(parsed)) {
    throw new ApiError(400, 'storage.validation', `${name} must be a unix timestamp, an ISO 8601 date or a relative time like "-2 days"; got "${value}"`);
  }
  return parsed;
}
