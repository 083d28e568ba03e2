/**
 * Output mappings (`parameters.config.mappings`): records → tables the way the reference's mapper
 * (keboola/php-csvmap, used by Generic Extractor's `JsonMap` parser) writes them. Pure and workflow-safe.
 *
 * - Columns are the mapping's entries in order: `column` (a path in the record; a value that is not a scalar fails
 *   unless `forceType`, which JSON-encodes it), `user` (a key of the user data: `userData` and `parent_<field>`),
 *   and, for `table` entries when the table has no primary key, a link column named after the child table.
 *   A child table ends with its link column (`parentKey.destination`, default `<parent table>_pk`).
 * - A `table` entry maps the value at its path (an array: one row per element; one value: one row) into its
 *   destination table with its own `tableMapping`. The link value is the parent's primary-key values joined by `,`,
 *   or, without a primary key, the MD5 of the record's PHP `serialize` (plus the user data's, when there is any).
 *   A table entry whose destination is the mapping's own table (`parentKey.disable` required) writes the child rows
 *   into that table with the same mapping, before the parent's row.
 * - A table's primary key: its entries with `primaryKey`, then its link column when `parentKey.primaryKey`.
 *
 * Everything here is decided per record from the configuration, so pages map independently (no state across pages).
 */
import { ExtractorDataError } from './errors';
import { cellValue, type FlatTable } from './flatten';
import { md5Hex } from './md5';
import { phpJsonEncode, phpNumberString, phpSerialize } from './php-values';
import { isEmptyValue } from './path';
import { safeName } from './table-names';
import type { ColumnMappingEntry, ExtractorConfig, JobConfig, TableMapping, TableMappingEntry } from './types';

/** The link a child table's rows carry: its column, the value for the current parent row, and whether it is in the primary key. */
interface ParentLink {
  column: string;
  value: string;
  primaryKey: boolean;
}

/** The link column of a table entry's rows (`null` when disabled). */
function linkColumnOf(entry: TableMappingEntry, parentTable: string): string | null {
  if (entry.parentKey.disable) return null;
  return entry.parentKey.destination ?? `${parentTable}_pk`;
}

/** The primary-key columns of a mapping's table: entries with `primaryKey`, then the link column when it is one. */
function mappingPrimaryKey(mapping: TableMapping, link: { column: string; primaryKey: boolean } | null): string[] {
  const pk = mapping.entries.filter((e): e is ColumnMappingEntry => e.type !== 'table' && e.primaryKey).map((e) => e.destination);
  if (link?.primaryKey) pk.push(link.column);
  return pk;
}

/** The columns of a mapping's table, in order (see the module comment). */
function mappingColumns(mapping: TableMapping, link: { column: string; primaryKey: boolean } | null): string[] {
  const hasPk = mappingPrimaryKey(mapping, link).length > 0;
  const columns: string[] = [];
  for (const entry of mapping.entries) {
    if (entry.type !== 'table') columns.push(entry.destination);
    else if (!hasPk && !entry.parentKey.disable) columns.push(entry.destination);
  }
  if (link) columns.push(link.column);
  return columns;
}

/** One output table of a mapping with its primary key, as `mappedTables` lists them. */
export interface MappedTableSpec {
  /** Safe table name. */
  name: string;
  columns: string[];
  primaryKey: string[];
}

/**
 * Every table a mapping can write (its own and its table entries', recursively), with columns and primary key, in
 * the order the reference creates them.
 */
export function mappedTables(mapping: TableMapping, link: { column: string; primaryKey: boolean } | null = null): MappedTableSpec[] {
  const tables: MappedTableSpec[] = [{ name: safeName(mapping.table), columns: mappingColumns(mapping, link), primaryKey: mappingPrimaryKey(mapping, link) }];
  for (const entry of mapping.entries) {
    if (entry.type !== 'table' || entry.tableMapping === null) continue;
    const column = linkColumnOf(entry, mapping.table);
    tables.push(...mappedTables(entry.tableMapping, column === null ? null : { column, primaryKey: entry.parentKey.primaryKey }));
  }
  return tables;
}

/**
 * Every table the configuration's jobs' mappings write (first definition of a name wins; the configuration check
 * makes them agree), in job order. The reference creates each of them, with its header, even when it got no rows.
 */
export function configMappedTables(config: Pick<ExtractorConfig, 'config'>): MappedTableSpec[] {
  const tables = new Map<string, MappedTableSpec>();
  const visit = (job: JobConfig) => {
    if (job.mapping) for (const spec of mappedTables(job.mapping)) if (!tables.has(spec.name)) tables.set(spec.name, spec);
    job.children.forEach(visit);
  };
  config.config.jobs.forEach(visit);
  return [...tables.values()];
}

/**
 * Primary keys of every table the configuration's mappings write (safe name → columns, only tables that have one),
 * for creating the tables in Storage.
 */
export function mappedPrimaryKeys(config: Pick<ExtractorConfig, 'config'>): Record<string, string[]> {
  return Object.fromEntries(
    configMappedTables(config)
      .filter((t) => t.primaryKey.length > 0)
      .map((t) => [t.name, t.primaryKey]),
  );
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) => v === null || v === undefined || typeof v !== 'object';

/** keboola/php-utils `getDataFromPath`: `path === delimiter` is the value itself; a missing key gives `null`. */
function dataAtPath(data: unknown, path: string, delimiter: string): unknown {
  if (path === delimiter) return data;
  let current: unknown = data;
  for (const key of path.split(delimiter)) {
    if (isObject(current) && Object.prototype.hasOwnProperty.call(current, key)) current = current[key];
    else if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < current.length) current = current[Number(key)];
    else return null;
    if (current === undefined) return null;
  }
  return current;
}

/**
 * PHP's `serialize` of the user data, a PHP array (from the configuration and the parent row): keys that are decimal
 * integers become integer keys; values as decoded.
 */
export function serializeUserData(data: Record<string, unknown>): string {
  const entries = Object.entries(data).map(([key, value]) => {
    const intKey = /^(0|-?[1-9][0-9]*)$/.test(key) && Math.abs(Number(key)) < 2 ** 63;
    return `${intKey ? `i:${key};` : phpSerialize(key)}${phpSerialize(value)}`;
  });
  return `a:${entries.length}:{${entries.join('')}}`;
}

/** PHP's string conversion of a scalar (CSV cells, `join`): floats with 14 significant digits. */
function phpString(value: unknown): string {
  if (typeof value === 'number') return phpNumberString(value);
  return cellValue(value);
}

/** Maps one page of records of a job whose `dataType` has a mapping; `userData` is the job's user data with its `parent_<field>` values. */
export function mapRecords(records: readonly unknown[], mapping: TableMapping, userData: Record<string, unknown> = {}): FlatTable[] {
  const tables = new Map<string, FlatTable>();
  const tableOf = (m: TableMapping, link: ParentLink | null): FlatTable => {
    const name = safeName(m.table);
    let table = tables.get(name);
    if (!table) {
      table = { name, keys: mappingColumns(m, link), rows: [] };
      tables.set(name, table);
    }
    return table;
  };
  const hashUserData = Object.keys(userData).length > 0 ? serializeUserData(userData) : '';

  const primaryKeyValues = (row: unknown, m: TableMapping, link: ParentLink | null): string[] => {
    const pk = m.entries.filter((e): e is ColumnMappingEntry => e.type !== 'table' && e.primaryKey);
    if (pk.length === 0 && !link?.primaryKey) return [md5Hex(phpSerialize(row) + hashUserData)];
    const values: unknown[] = pk.map((e) => (e.type === 'user' ? userData[e.path] : dataAtPath(row, e.path, e.delimiter)));
    if (link?.primaryKey) values.push(link.value);
    const bad = values.find((v) => !isScalar(v));
    if (bad !== undefined) {
      throw new ExtractorDataError(
        `Bad Json to CSV Mapping configuration: Only scalar values are allowed in primary key. Primary key: ${phpJsonEncode(values)} (table '${m.table}')`,
      );
    }
    return values.map(phpString);
  };

  const mapRow = (row: unknown, m: TableMapping, link: ParentLink | null): void => {
    const table = tableOf(m, link);
    const hasPk = mappingPrimaryKey(m, link).length > 0;
    const out: Record<string, string> = {};
    const notScalar: string[] = [];
    for (const entry of m.entries) {
      const value = isObject(row) || Array.isArray(row) ? dataAtPath(row, entry.path, entry.delimiter) : row;
      if (entry.type === 'table') {
        if (!hasPk && isEmptyValue(value)) {
          if (!entry.parentKey.disable) out[entry.destination] = '';
          continue;
        }
        const joined = primaryKeyValues(row, m, link).join(',');
        let childLink: ParentLink | null = link;
        if (!entry.parentKey.disable) {
          if (!hasPk) out[entry.destination] = joined;
          childLink = { column: linkColumnOf(entry, m.table) as string, value: joined, primaryKey: entry.parentKey.primaryKey };
        }
        const target = entry.tableMapping ?? m;
        for (const item of Array.isArray(value) ? value : [value]) mapRow(item, target, entry.tableMapping ? childLink : link);
        continue;
      }
      const cell = entry.type === 'user' ? dataAtPath(userData, entry.path, '/') : value;
      if (isScalar(cell)) out[entry.destination] = phpString(cell);
      else if (entry.forceType) out[entry.destination] = phpJsonEncode(cell);
      else notScalar.push(entry.destination);
    }
    // like the reference, a value that is not a scalar fails when the row is written (after its child rows)
    if (notScalar.length > 0) {
      throw new ExtractorDataError(
        `Error saving '${m.table}' data to CSV column: Error writing '${notScalar.join(',')}' column: the value is an array or ` +
          'an object, not a scalar (set "forceType": true on its mapping to store it as JSON).',
      );
    }
    if (link) out[link.column] ??= link.value;
    table.rows.push(out);
  };

  tableOf(mapping, null);
  for (const record of records) mapRow(record, mapping, null);
  return [...tables.values()];
}
