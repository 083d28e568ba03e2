/**
 * The column union of every output table, accumulated page by page. Pure module; the schema is plain JSON so a
 * workflow can keep it in its state (it grows with the number of distinct columns, not rows).
 *
 * Chosen storage model: each page's rows are written on their own (e.g. as JSON lines keyed by flattened key, see
 * `FlatTable`), and the schema records every table's keys in order of first appearance across pages. At load
 * time the CSV header is `columnsOf(schema, table)` and every stored row is re-aligned with `alignRow`. So pages
 * can be written independently and retried, and the final column order is deterministic.
 */
import type { FlatTable } from './flatten';
import { columnNamesFor } from './table-names';

/** Table name → flattened keys in order of first appearance. */
export type TableSchema = Record<string, string[]>;

/** An empty schema. */
export function createTableSchema(): TableSchema {
  return {};
}

/** Returns a new schema with the keys of `tables` appended where new (first-appearance order kept). */
export function mergeTableSchema(schema: TableSchema, tables: ReadonlyArray<Pick<FlatTable, 'name' | 'keys'>>): TableSchema {
  const result: TableSchema = { ...schema };
  for (const table of tables) {
    const existing = result[table.name] ?? [];
    const known = new Set(existing);
    const added = table.keys.filter((k) => !known.has(k));
    if (added.length > 0 || !(table.name in result)) result[table.name] = [...existing, ...added];
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
