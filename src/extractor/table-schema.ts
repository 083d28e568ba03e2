/**
 * The column union of every output table, accumulated page by page. Pure module; the schema is plain JSON so a
 * workflow can keep it in its state (it grows with the number of distinct columns, not rows).
 *
 * Chosen storage model: each page's rows are written on their own (e.g. as JSON lines keyed by header key, see
 * `FlatTable`), and the schema records every table's keys in the order the reference's structure gives them across
 * pages: a key a later page adds below a nested object lands after that object's known keys, other new keys after
 * the known data columns, and parent columns (`JSON_parentId`, `parent_<field>`, marked) stay last. At load time
 * the CSV header is `columnsOf(schema, table)` and every stored row is re-aligned with `alignRow`. So pages can be
 * written independently and retried, and the final column order is deterministic.
 */
import type { FlatTable } from './flatten';
import { PARENT_KEY_MARK } from './json-parser';
import { columnNamesFor } from './table-names';

/** Table name → header keys in column order. */
export type TableSchema = Record<string, string[]>;

/** The property path of a header key (`a.b\.c` → `a`, `b.c`). */
export function segmentsOf(key: string): string[] {
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < key.length; i++) {
    if (key[i] === '\\' && i + 1 < key.length) current += key[++i];
    else if (key[i] === '.') {
      segments.push(current);
      current = '';
    } else current += key[i];
  }
  segments.push(current);
  return segments;
}

/** Where a new data key goes: after the last known key sharing its longest parent path, else after the data keys. */
function insertionIndex(keys: readonly string[], key: string): number {
  const firstParent = keys.findIndex((k) => k.startsWith(PARENT_KEY_MARK));
  const dataEnd = firstParent === -1 ? keys.length : firstParent;
  const path = segmentsOf(key);
  const known = keys.slice(0, dataEnd).map(segmentsOf);
  for (let length = path.length - 1; length >= 1; length--) {
    let last = -1;
    known.forEach((segments, i) => {
      if (segments.length > length && path.slice(0, length).every((s, j) => segments[j] === s)) last = i;
    });
    if (last !== -1) return last + 1;
  }
  return dataEnd;
}

/** Adds `incoming` keys (one page's, in its order) to `existing` keys of the same table. */
function mergeKeys(existing: readonly string[], incoming: readonly string[]): string[] {
  const result = [...existing];
  const known = new Set(existing);
  for (const key of incoming) {
    if (known.has(key)) continue;
    known.add(key);
    if (key.startsWith(PARENT_KEY_MARK)) result.push(key);
    else result.splice(insertionIndex(result, key), 0, key);
  }
  return result;
}

/** An empty schema. */
export function createTableSchema(): TableSchema {
  return {};
}

/** Returns a new schema with the new keys of `tables` inserted where the reference's structure puts them. */
export function mergeTableSchema(schema: TableSchema, tables: ReadonlyArray<Pick<FlatTable, 'name' | 'keys'>>): TableSchema {
  const result: TableSchema = { ...schema };
  for (const table of tables) {
    const existing = result[table.name] ?? [];
    const known = new Set(existing);
    if (table.keys.some((k) => !known.has(k)) || !(table.name in result)) result[table.name] = mergeKeys(existing, table.keys);
  }
  return result;
}

/** The CSV header of a table: safe, unique column names aligned with the schema's keys. */
export function columnsOf(schema: TableSchema, table: string): string[] {
  return columnNamesFor(schema[table] ?? []);
}

/** The values of a row in schema order (missing keys → `""`). */
export function alignRow(keys: readonly string[], row: Readonly<Record<string, string>>): string[] {
  return keys.map((k) => (Object.prototype.hasOwnProperty.call(row, k) ? row[k] : ''));
}

/** One RFC 4180 CSV line (with `\n`): every field quoted, quotes doubled. */
export function csvLine(values: readonly string[]): string {
  return `${values.map((v) => `"${v.replace(/"/g, '""')}"`).join(',')}\n`;
}
