/**
 * Flattens records into table rows the way the reference's JSON parser does (see `json-parser.ts` for the rules:
 * structure analysis, type upgrades, link ids byte-identical to the reference's, column order). Pure module.
 *
 * - Nested objects become `_`-joined columns (`address.street` → `address_street`); an empty object adds nothing.
 * - `true` → `"1"`, `false`/`null` → `""`, numbers as PHP prints them, strings as they are.
 * - An array inside a row goes to a child table `<table>_<property>`: the row's column holds a link id
 *   (`<data type>[.<path>]_<md5>`), each element is a child row with a `JSON_parentId` column holding that id;
 *   scalar elements go to a `data` column, nested arrays are JSON-encoded into `data`. An empty array gives `""`.
 * - A record that is a scalar goes to a `data` column; a record that is an array is JSON-encoded into `data`.
 *
 * Rows are keyed by *header keys* (`address.street`); `columnNamesFor` (table-names.ts) turns the union of keys
 * into safe, unique column names at the end, so every page can be flattened on its own.
 */
import { parseRecords, phpCell } from './json-parser';
import { parseRecordsLegacy } from './json-parser-legacy';

/** Rows of one table from one page: keys in column order, rows keyed by header key. */
export interface FlatTable {
  /** Safe table name. */
  name: string;
  /** Header keys in column order (the structure's order; parent columns last). */
  keys: string[];
  rows: Array<Record<string, string>>;
}

/** Options of `flattenRecords`. */
interface FlattenOptions {
  /** The job's `dataType` (before sanitizing; child tables and link ids are named from it). */
  dataType: string;
  /** Columns added to every root row (a child job's `parent_<field>` columns), as cell text. */
  parentColumns?: Record<string, string>;
  /**
   * The same parent columns with their values as decoded from the parent row (a number stays a number): link ids
   * hash them as the reference does. Names not listed here use `parentColumns`' text.
   */
  parentValues?: Record<string, unknown>;
  /** Collects warnings (nested arrays converted to JSON, values of an unexpected type). */
  warnings?: string[];
  /** `compatLevel` 1: the reference's legacy JSON parser (`json-parser-legacy.ts`: its names, link ids). */
  legacy?: boolean;
  /** The run's renamed parent columns (`ParseRecordsOptions.parentAliases`): read and extended in place. */
  parentAliases?: Record<string, string>;
}

/** The cell text of a scalar: `true` → "1", `false`/`null`/`undefined` → "", numbers as PHP prints them, others JSON. */
export function cellValue(value: unknown): string {
  return phpCell(value);
}

/** Flattens one page of records (of one job) into its root table and child tables. Root table first. */
export function flattenRecords(records: readonly unknown[], options: FlattenOptions): FlatTable[] {
  const values = options.parentValues ?? {};
  // a decoded value is used only where it is the one the column's text was made from
  const parentColumns = Object.entries(options.parentColumns ?? {}).map(([name, text]): [string, unknown] => {
    const known = Object.prototype.hasOwnProperty.call(values, name) && phpCell(values[name]) === text;
    return [name, known ? values[name] : text];
  });
  if (options.legacy) return parseRecordsLegacy(records, { dataType: options.dataType, parentColumns, warnings: options.warnings });
  return parseRecords(records, { dataType: options.dataType, parentColumns, warnings: options.warnings, parentAliases: options.parentAliases });
}
