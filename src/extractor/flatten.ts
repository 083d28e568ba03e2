/**
 * Flattens records into table rows the way the reference's JSON parser does. Pure module.
 *
 * - Nested objects become `_`-joined columns (`address.street` → `address_street`); an empty object adds nothing.
 * - `true` → `"1"`, `false`/`null` → `""`, numbers as JavaScript prints them, strings as they are.
 * - An array inside a row goes to a child table `<table>_<property>`: the row's column holds a link id
 *   (`<table>_<md5 of the row>`), each element is a child row with a `JSON_parentId` column holding that id;
 *   scalar elements go to a `data` column, nested arrays are JSON-encoded into `data`. An empty array gives `""`.
 * - A record that is a scalar goes to a `data` column; a record that is an array is JSON-encoded into `data`.
 *
 * Rows are keyed by *flattened keys* (`address.street`); `columnNamesFor` (table-names.ts) turns the union of keys
 * into safe, unique column names at the end, so every page can be flattened on its own.
 */
import { md5Hex } from './md5';
import { safeName } from './table-names';

/** Rows of one table from one page: keys in first-appearance order, rows keyed by flattened key. */
export interface FlatTable {
  /** Safe table name. */
  name: string;
  /** Flattened keys in order of first appearance. */
  keys: string[];
  rows: Array<Record<string, string>>;
}

/** Options of `flattenRecords`. */
export interface FlattenOptions {
  /** The job's `dataType` (before sanitizing; child tables are named from it). */
  dataType: string;
  /** Columns added to every root row (a child job's `parent_<field>` columns). */
  parentColumns?: Record<string, string>;
}

/** Link column of child-table rows. */
export const PARENT_ID_COLUMN = 'JSON_parentId';
/** Column of scalar (or JSON-encoded array) records. */
export const DATA_COLUMN = 'data';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The cell text of a scalar: `true` → "1", `false`/`null`/`undefined` → "", objects/arrays → JSON. */
export function cellValue(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value === true) return '1';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

class TableBuilder {
  readonly keys: string[] = [];
  private readonly known = new Set<string>();
  readonly rows: Array<Record<string, string>> = [];

  constructor(readonly name: string) {}

  add(row: Map<string, string>): void {
    for (const key of row.keys()) {
      if (!this.known.has(key)) {
        this.known.add(key);
        this.keys.push(key);
      }
    }
    this.rows.push(Object.fromEntries(row));
  }
}

/** Flattens one page of records (of one job) into its root table and child tables. Root table first. */
export function flattenRecords(records: readonly unknown[], options: FlattenOptions): FlatTable[] {
  const tables = new Map<string, TableBuilder>();
  const tableFor = (rawName: string): TableBuilder => {
    const name = safeName(rawName);
    let table = tables.get(name);
    if (!table) {
      table = new TableBuilder(name);
      tables.set(name, table);
    }
    return table;
  };
  const root = tableFor(options.dataType);
  const parentColumns = options.parentColumns ?? {};

  const addRows = (table: TableBuilder, tableRaw: string, items: readonly unknown[], extra: Record<string, string>) => {
    for (const item of items) {
      const row = new Map<string, string>();
      if (isObject(item)) {
        const withExtra = { ...item, ...extra };
        flattenObject(withExtra, [], tableRaw, row, () => '');
      } else {
        row.set(DATA_COLUMN, Array.isArray(item) ? JSON.stringify(item) : cellValue(item));
        for (const [k, v] of Object.entries(extra)) row.set(k, v);
      }
      table.add(row);
    }
  };

  const flattenObject = (obj: Record<string, unknown>, path: string[], tableRaw: string, row: Map<string, string>, outer: () => string) => {
    let ownId: string | undefined;
    const linkId = () => {
      ownId ??= `${safeName([tableRaw, ...path].join('.'))}_${md5Hex(JSON.stringify(obj) + outer())}`;
      return ownId;
    };
    for (const [key, value] of Object.entries(obj)) {
      const keyPath = [...path, key];
      const flatKey = keyPath.join('.');
      if (Array.isArray(value)) {
        if (value.length === 0) {
          row.set(flatKey, '');
          continue;
        }
        const id = linkId();
        row.set(flatKey, id);
        const childRaw = `${tableRaw}.${flatKey}`;
        addRows(tableFor(childRaw), childRaw, value, { [PARENT_ID_COLUMN]: id });
      } else if (isObject(value)) {
        if (Object.keys(value).length > 0) flattenObject(value, keyPath, tableRaw, row, linkId);
      } else {
        row.set(flatKey, cellValue(value));
      }
    }
  };

  addRows(root, options.dataType, records, parentColumns);
  return [...tables.values()].map((t) => ({ name: t.name, keys: t.keys, rows: t.rows }));
}
