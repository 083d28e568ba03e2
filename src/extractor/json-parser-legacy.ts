/**
 * `compatLevel` 1: one page of records → rows of the output tables the way the reference's *legacy* JSON parser
 * (keboola-legacy/json-parser 3, Generic Extractor's choice for `compatLevel <= 1`, with auto-upgrade to arrays and
 * nested arrays as JSON) does it. Pure module, workflow-safe.
 *
 * How it differs from the current parser (`json-parser.ts`):
 * - The structure is flat: a map per *type* (`users`, `users.address`, `users.tags`) of property → type (`scalar`,
 *   `object`, `NULL`, `arrayOf<item type>`), properties in order of first appearance; an object whose first property
 *   is an empty object (recursively) counts as empty and adds no column.
 * - Column names are made safe without collapsing `_` runs (`a  b` → `a__b`, non-ASCII bytes each → `_`); a column
 *   whose safe name is already in the header (PHP's loose `in_array`) is named by the MD5 of its unsafe name and
 *   never gets a value: a parent column (`userData`, `parent_<field>`, `JSON_parentId`) with the name of a
 *   property overwrites the row's value and leaves an empty `<md5>` column.
 * - Link ids are `<type>_<md5(serialize(row) . outer id)>` with the raw type (`users.address`), the row with its
 *   parent columns already replaced/appended.
 *
 * Rows are keyed by the final column names marked with {@link VERBATIM_KEY_MARK} (and {@link PARENT_KEY_MARK} for
 * the parent part of the header), so `columnNamesFor` keeps them as they are and `mergeTableSchema` keeps the parent
 * columns last.
 */
import { ExtractorDataError } from './errors';
import { PARENT_KEY_MARK, phpCell, type ParsedTable } from './json-parser';
import { md5Hex } from './md5';
import { phpJsonEncode, phpSerialize } from './php-values';
import { MAX_NAME_LENGTH, VERBATIM_KEY_MARK } from './table-names';

const DATA_COLUMN = 'data';
const PARENT_ID_COLUMN = 'JSON_parentId';

type Row = Record<string, unknown>;
type Defs = Map<string, string>;

const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const has = (row: Row, key: string): boolean => Object.prototype.hasOwnProperty.call(row, key);

function fail(message: string): never {
  throw new ExtractorDataError(`Error parsing response JSON: ${message}`);
}

/** The analyzer's non-strict `getType`. */
function typeOf(value: unknown): string {
  if (isScalar(value)) return 'scalar';
  if (value === null || value === undefined) return 'NULL';
  return Array.isArray(value) ? 'array' : 'object';
}

/** `\Keboola\Utils\isEmptyObject`: no properties, or a first property that is itself an empty object. */
function isEmptyObject(value: Row): boolean {
  for (const key in value) {
    if (!has(value, key)) continue;
    const first = value[key];
    return isObject(first) && isEmptyObject(first);
  }
  return true;
}

/** The item type of an `arrayOf…` type, else `false` (`Struct::isArrayOf`). */
function arrayItemType(type: string): string | false {
  return type.startsWith('arrayOf') ? type.slice(7) : false;
}

/** A string's UTF-8 bytes as a binary string (one char per byte), as PHP's byte-wise string functions see it. */
function utf8Binary(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) out += ch;
    else if (cp < 0x800) out += String.fromCharCode(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) out += String.fromCharCode(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else out += String.fromCharCode(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  }
  return out;
}

/**
 * The legacy parser's `createSafeName`: names longer than 64 bytes shortened (an acronym or the MD5, then the tail),
 * every byte outside `[A-Za-z0-9-]` → `_` (runs are kept), `_` trimmed at both ends.
 */
export function legacySafeName(name: string): string {
  let bytes = utf8Binary(name);
  if (bytes.length > MAX_NAME_LENGTH) {
    const words = bytes.match(/[A-Za-z'-]+/g) ?? [];
    const initials = [...bytes.matchAll(/\b(\w)/g)].map((m) => m[1]);
    const short = `${words.length > 1 && initials.length > 0 ? initials.join('') : md5Hex(name)}_`;
    const from = bytes.length - (MAX_NAME_LENGTH - short.length);
    let next = bytes.indexOf(' ', from);
    if (next <= 0) next = bytes.indexOf('_', from);
    bytes = next <= 0 ? short : short + bytes.slice(next);
  }
  return bytes.replace(/[^A-Za-z0-9-]/g, '_').replace(/^_+|_+$/g, '');
}

/** PHP 8's `==` between two header names: numeric strings compare as numbers (`"1"` == `"01"`). */
function looseEquals(a: string, b: string): boolean {
  if (a === b) return true;
  const numeric = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
  return numeric.test(a) && numeric.test(b) && Number(a) === Number(b);
}

/** The reference's `Struct` (auto-upgrade to arrays on): per type, property → type, in order of first appearance. */
class Struct {
  private readonly types = new Map<string, Defs>();

  hasDefinitions(type: string): boolean {
    return (this.types.get(type)?.size ?? 0) > 0;
  }

  definitions(type: string): Defs {
    const defs = this.types.get(type);
    if (!defs || defs.size === 0) fail(`Trying to retrieve unknown definitions for '${type}'`);
    return defs;
  }

  add(type: string, struct: Defs): void {
    const known = this.types.get(type);
    if (!known || known.size === 0) {
      this.types.set(type, new Map(struct));
      return;
    }
    for (const [key, value] of struct) {
      const old = known.get(key);
      if (old !== value) known.set(key, this.update(old ?? null, value, `${type}.${key}`));
    }
  }

  private update(old: string | null, type: string, path: string): string {
    if (!old || old === 'NULL') return type;
    if (type === 'NULL' || type === old) return old;
    const oldItem = arrayItemType(old);
    const newItem = arrayItemType(type);
    if (oldItem === type || type === `arrayOf${old}` || oldItem === 'NULL' || newItem === 'NULL') {
      if (oldItem !== false) return oldItem === 'NULL' ? (newItem !== false ? type : `arrayOf${type}`) : old;
      return old === 'array' ? `arrayOf${type}` : `arrayOf${old}`;
    }
    fail(`Unhandled type change from ${JSON.stringify(old)} to ${JSON.stringify(type)} in '${path}'`);
  }

  /** `getArrayType`: the known item type of the array at `type` (its property in the parent type), or null. */
  arrayType(type: string): string | null {
    const at = type.lastIndexOf('.');
    const [parent, child] = at <= 0 ? [type, DATA_COLUMN] : [type.slice(0, at), type.slice(at + 1)];
    const known = this.hasDefinitions(parent) ? this.types.get(parent)!.get(child) : undefined;
    return known ? known.replace(/arrayOf/g, '') : null;
  }
}

/** The reference's legacy `Analyzer` (all rows analyzed, nested arrays as JSON, non-strict scalars). */
class Analyzer {
  readonly rowsAnalyzed = new Map<string, number>();

  constructor(
    private readonly struct: Struct,
    private readonly warnings: Set<string>,
  ) {}

  /** Returns the type of the array's items, or `false` for an empty array. */
  analyze(data: readonly unknown[], type: string): string | false {
    if (data.length === 0) return false;
    this.rowsAnalyzed.set(type, (this.rowsAnalyzed.get(type) ?? 0) + data.length);
    let rowType = this.struct.arrayType(type);
    for (const row of data) {
      const newType = this.analyzeRow(row, type);
      if (rowType !== null && newType !== rowType && newType !== 'NULL' && rowType !== 'NULL') {
        fail(`Data array in '${type}' contains incompatible data types '${rowType}' and '${newType}'!`);
      }
      rowType = newType;
    }
    return rowType as string;
  }

  private analyzeRow(row: unknown, type: string): string {
    const struct: Defs = new Map();
    let rowType = typeOf(row);
    if (isScalar(row)) struct.set(DATA_COLUMN, 'scalar');
    else if (isObject(row)) {
      for (const key of Object.keys(row)) {
        const field = row[key];
        let fieldType = typeOf(field);
        if (fieldType === 'object') {
          if (isEmptyObject(field as Row)) continue;
          this.analyzeRow(field, `${type}.${key}`);
        } else if (fieldType === 'array') {
          const itemType = this.analyze(field as unknown[], `${type}.${key}`);
          fieldType = itemType === false ? 'NULL' : `arrayOf${itemType}`;
        }
        struct.set(key, fieldType);
      }
    } else if (Array.isArray(row)) {
      this.warnings.add(`Unsupported array nesting in '${type}'! Converting to JSON string.`);
      rowType = 'scalar';
      struct.set(DATA_COLUMN, rowType);
    }
    this.struct.add(type, struct);
    return rowType;
  }
}

/** A CSV row: validated column name → value; assigning to another name fails like the reference's `CsvRow`. */
class CsvRow {
  readonly data = new Map<string, unknown>();

  constructor(columns: readonly string[]) {
    for (const c of columns) this.data.set(c, null);
  }

  set(column: string, value: unknown): void {
    if (!this.data.has(column)) fail(`Error assigning '${phpCell(value)}' to a non-existing column '${column}'!`);
    this.data.set(column, value);
  }
}

interface LegacyTable {
  keys: string[];
  /** Column name → header key (the name with its marks). */
  keyOf: Map<string, string>;
  rows: Array<Record<string, string>>;
}

/** The reference's legacy `Parser` for one page. */
class LegacyParser {
  private readonly tables = new Map<string, LegacyTable>();
  private readonly headers = new Map<string, string[]>();
  private readonly headerCache = new Map<string, string[]>();
  private readonly safeNames = new Map<string, string>();
  /** Per type and parent columns: the columns `parseRow` walks (definitions, parent columns replacing or appended). */
  private readonly columnsCache = new Map<string, Map<string, string>>();

  constructor(
    private readonly struct: Struct,
    private readonly analyzer: Analyzer,
    private readonly warnings: Set<string>,
  ) {}

  result(): ParsedTable[] {
    return [...this.tables].map(([name, t]) => ({ name, keys: t.keys, rows: t.rows }));
  }

  private safeName(name: string): string {
    let safe = this.safeNames.get(name);
    if (safe === undefined) {
      safe = legacySafeName(name);
      this.safeNames.set(name, safe);
    }
    return safe;
  }

  /** `getHeader`: the type's columns (objects expanded), then the parent columns, made safe and unique. */
  private header(type: string, parentNames: readonly string[]): string[] {
    const cacheKey = `${type}\u0000${parentNames.join('\u0000')}`;
    const cached = this.headerCache.get(cacheKey);
    if (cached) return cached;
    const names: string[] = [];
    for (const [column, dataType] of this.struct.definitions(type)) {
      if (dataType === 'object') {
        for (const child of this.header(`${type}.${column}`, [])) names.push(`${this.safeName(column)}_${child}`);
      } else names.push(column);
    }
    names.push(...parentNames);
    const header: string[] = [];
    for (const name of names) {
      const safe = this.safeName(name);
      header.push(header.some((h) => looseEquals(h, safe)) ? md5Hex(name) : safe);
    }
    this.headerCache.set(cacheKey, header);
    return header;
  }

  /** `parse`: rows of one array (a page, or a property's items) into the table of `type`. */
  parse(data: readonly unknown[], type: string, parentId: string | ReadonlyArray<readonly [string, unknown]>): void {
    const rowsAnalyzed = this.analyzer.rowsAnalyzed.get(type) ?? 0;
    if (rowsAnalyzed === 0 || rowsAnalyzed < data.length) {
      // data the analysis did not see (a scalar wrapped where the structure has an array): analyzed on the fly
      this.analyzer.analyze(data, type);
      this.headerCache.clear();
      this.columnsCache.clear();
    }
    const parent: Array<readonly [string, unknown]> = typeof parentId === 'string' ? [[PARENT_ID_COLUMN, parentId]] : [...parentId];
    const parentNames = parent.map(([name]) => name);
    const table = this.table(type, parentNames);
    const parentValues: Row = {};
    for (const [name, value] of parent) parentValues[name] = value;

    for (const item of data) {
      let row: Row;
      if (isScalar(item) || item === null || item === undefined) row = { [DATA_COLUMN]: item ?? null };
      else if (Array.isArray(item)) row = { [DATA_COLUMN]: phpJsonEncode(item) };
      else row = item as Row;
      if (parent.length > 0) row = { ...row, ...parentValues };
      const csvRow = this.parseRow(row, type, parentNames, null);
      const out: Record<string, string> = {};
      for (const [name, value] of csvRow.data) {
        let key = table.keyOf.get(name);
        if (key === undefined) {
          // a header that changed after the table's (on-the-fly analysis): the column joins the table
          key = VERBATIM_KEY_MARK + name;
          table.keyOf.set(name, key);
          table.keys.push(key);
        }
        out[key] = phpCell(value);
      }
      table.rows.push(out);
    }
  }

  /** `createCsvFile`: the table of a type, its header fixed by the first rows parsed into it. */
  private table(type: string, parentNames: readonly string[]): LegacyTable {
    let header = this.headers.get(type);
    if (!header) {
      header = this.header(type, parentNames);
      this.headers.set(type, header);
    }
    const name = legacySafeName(type);
    let table = this.tables.get(name);
    if (!table) {
      const dataCount = header.length - parentNames.length;
      const keys = header.map((column, i) => (i >= dataCount ? PARENT_KEY_MARK : '') + VERBATIM_KEY_MARK + column);
      table = { keys, keyOf: new Map(header.map((column, i) => [column, keys[i]])), rows: [] };
      this.tables.set(name, table);
    }
    return table;
  }

  /** `parseRow`: one object into a CSV row (objects inline, arrays linked to child tables). */
  private parseRow(row: Row, type: string, parentNames: readonly string[], outerId: string | null): CsvRow {
    const csvRow = new CsvRow(this.header(type, parentNames));
    // computed only when an array or object below needs it (serialize + MD5 per row)
    let id: string | undefined;
    const linkId = () => (id ??= `${type}_${md5Hex(phpSerialize(row) + (outerId ?? ''))}`);
    const cacheKey = `${type}\u0000${parentNames.join('\u0000')}`;
    let columns = this.columnsCache.get(cacheKey);
    if (!columns) {
      columns = new Map(this.struct.definitions(type));
      for (const name of parentNames) columns.set(name, 'string');
      this.columnsCache.set(cacheKey, columns);
    }
    for (const [column, dataType] of columns) this.parseField(row, csvRow, linkId, column, dataType, type);
    return csvRow;
  }

  /** `parseField`: one property of a row. */
  private parseField(row: Row, csvRow: CsvRow, linkId: () => string, column: string, dataType: string, type: string): void {
    const safeColumn = this.safeName(column);
    let value = has(row, column) ? row[column] : undefined;
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
      if (dataType !== 'object') csvRow.set(safeColumn, null);
      return;
    }
    if (dataType === 'NULL') {
      this.warnings.add(`Encountered data where 'NULL' was expected from previous analysis in '${type}'.`);
      csvRow.set(column, phpJsonEncode(row));
      return;
    }
    let kind = dataType;
    if (arrayItemType(dataType) !== false) {
      if (!Array.isArray(value)) value = [value];
      kind = 'array';
    }
    if (kind === 'array') {
      csvRow.set(safeColumn, linkId());
      this.parse(value as unknown[], `${type}.${column}`, linkId());
    } else if (kind === 'object') {
      if (!isObject(value)) fail(`Data in '${type}.${column}' is '${typeOf(value)}' where an object was expected.`);
      const child = this.parseRow(value, `${type}.${column}`, [], linkId());
      for (const [key, cell] of child.data) csvRow.set(this.safeName(`${safeColumn}_${key}`), cell);
    } else if (isScalar(value)) {
      csvRow.set(safeColumn, value);
    } else {
      this.warnings.add(`Data parse error in '${column}' - unexpected '${typeOf(value)}' where '${dataType}' was expected!`);
      csvRow.set(safeColumn, phpJsonEncode(value));
    }
  }
}

/** Options of {@link parseRecordsLegacy}. */
interface ParseRecordsLegacyOptions {
  /** The job's `dataType` as configured (names the tables and prefixes the link ids). */
  dataType: string;
  /** Parent columns of every root row, in order, with their values as decoded (user data, `parent_<field>`). */
  parentColumns?: ReadonlyArray<readonly [string, unknown]>;
  /** Collects the parser's warnings (nested arrays converted to JSON, values of an unexpected type). */
  warnings?: string[];
}

/** Analyzes and parses one page of records like the legacy parser; tables in order of first row, the root first. */
export function parseRecordsLegacy(records: readonly unknown[], options: ParseRecordsLegacyOptions): ParsedTable[] {
  // the reference's `$data == [null]` is PHP's loose comparison: [false], [0], [""] and [[]] are no data either
  const only = records.length === 1 ? records[0] : undefined;
  if (records.length === 0 || only === null || only === false || only === 0 || only === '' || (Array.isArray(only) && only.length === 0)) return [];
  const parent = options.parentColumns ?? [];
  // PHP's `count($parentId) !== count($parentId, COUNT_RECURSIVE)`: only a non-empty list counts
  if (parent.some(([, value]) => Array.isArray(value) && value.length > 0)) {
    fail('Error assigning parentId to a CSV file! $parentId array cannot be multidimensional.');
  }
  const struct = new Struct();
  const warnings = new Set<string>();
  const analyzer = new Analyzer(struct, warnings);
  analyzer.analyze(records, options.dataType);
  const parser = new LegacyParser(struct, analyzer, warnings);
  parser.parse(records, options.dataType, parent);
  options.warnings?.push(...warnings);
  return parser.result();
}
