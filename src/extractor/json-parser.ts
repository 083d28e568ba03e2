/**
 * One page of records → rows of the output tables, the way the reference's JSON parser (keboola/php-jsonparser 3,
 * the one Generic Extractor uses by default) does it: first the page is *analyzed* into a structure (a node per
 * property path with its type, scalars upgraded to arrays where a later row has an array), then every row is
 * *parsed* against that structure. Pure module, workflow-safe.
 *
 * - Columns of a table follow the structure tree (a nested object's later keys stay next to its first ones).
 * - A property whose node is an array gets a link id, `<path>_<md5(serialize(row) . outer id)>` (the path is the
 *   raw data type plus the property path, e.g. `users-2.members`), and its items become rows of the child table
 *   `<table>_<property>` with a `JSON_parentId` column; a scalar where the structure has an array is wrapped.
 * - Nested arrays (an array item that is an array) are JSON-encoded into the `data` column.
 * - Parent columns (a child job's `parent_<field>`, `JSON_parentId`) come after the data columns; one that clashes
 *   with a property of the rows is renamed `<name>_u0` (`_u1`, …) and the row keeps its own value.
 * - Incompatible types within the page fail with the reference's messages (`ExtractorDataError`).
 *
 * Rows are keyed by *header keys*: the property path below the table's row (`address.street`, `.` inside a name
 * escaped as `\.`), `data`, or {@link PARENT_KEY_MARK} + name for parent columns. `columnNamesFor` makes them safe
 * column names at load time; `mergeTableSchema` keeps the tree order across pages.
 */
import { ExtractorDataError } from './errors';
import { md5Hex } from './md5';
import { phpJsonEncode, phpNumberString, phpSerialize } from './php-values';
import { safeName } from './table-names';

/** Marks the header key of a parent column (`JSON_parentId`, `parent_<field>`); `safeName` drops it. */
export const PARENT_KEY_MARK = '\u001f';
/** Column of scalar items (and JSON-encoded nested arrays). */
const DATA_KEY = 'data';
/** Link column of child-table rows. */
const PARENT_ID_KEY = 'JSON_parentId';
const ARRAY = '[]';

type NodeType = 'null' | 'scalar' | 'object' | 'array';
/** A structure node, like the reference's PHP array: properties (`nodeType`, `type`) and children (`_name`, `[]`). */
type Node = Map<string, Node | string>;

/** Rows of one table produced from one page. */
export interface ParsedTable {
  name: string;
  keys: string[];
  rows: Array<Record<string, string>>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const encode = (name: string): string => (name === ARRAY ? name : `_${name}`);
const decode = (name: string): string => (name === ARRAY ? name : name.slice(1));
const isNode = (v: Node | string | undefined): v is Node => v instanceof Map;
const pathText = (path: readonly string[]): string => path.join('.');
const cleanPath = (path: readonly string[]): string => path.filter((p) => p !== ARRAY).join('.');
const escapeSegment = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\./g, '\\.');

function fail(message: string): never {
  throw new ExtractorDataError(`Error parsing response JSON: ${message}`);
}

/** The cell text of a value: `true` → "1", `false`/`null` → "", numbers as PHP prints them. */
export function phpCell(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value === true) return '1';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return phpNumberString(value);
  return phpJsonEncode(value);
}

class Structure {
  readonly root: Node = new Map();

  getNode(path: readonly string[]): Node | undefined {
    let node: Node = this.root;
    for (const seg of path) {
      const next = node.get(encode(seg));
      if (!isNode(next)) return undefined;
      node = next;
    }
    return node;
  }

  private ensure(path: readonly string[]): Node {
    let node = this.root;
    for (const seg of path) {
      let next = node.get(encode(seg));
      if (!isNode(next)) {
        next = new Map();
        node.set(encode(seg), next);
      }
      node = next;
    }
    return node;
  }

  /** Stores a node at `path` (its parent must exist), keeping its position among its siblings. */
  private replace(path: readonly string[], node: Node): void {
    const parent = this.getNode(path.slice(0, -1)) as Node;
    parent.set(encode(path[path.length - 1]), node);
  }

  saveNodeType(path: readonly string[], type: NodeType): void {
    const node = this.ensure(path);
    const existing = node.get('nodeType') as NodeType | undefined;
    if (existing === undefined || existing === type) {
      node.set('nodeType', type);
      return;
    }
    this.upgrade(node, path, existing, type);
  }

  /** The reference's `handleUpgrade`: scalar/object ↔ array becomes an array; null gives way; anything else fails. */
  private upgrade(node: Node, path: readonly string[], old: NodeType, type: NodeType): void {
    if (old === 'array' || type === 'array') {
      const item = node.get(ARRAY);
      const itemType = isNode(item) ? (item.get('nodeType') as NodeType | undefined) : undefined;
      if (!itemType) fail('Array contents are unknown');
      const nonArray = old === 'array' ? type : old;
      if (itemType !== nonArray && nonArray !== 'null' && itemType !== 'null') {
        fail(`Data array in '${pathText(path)}' contains incompatible types '${itemType}' and '${nonArray}'`);
      }
      const newItem: Node = new Map();
      for (const [k, v] of item as Node) newItem.set(k, v);
      for (const [k, v] of node) if (isNode(v) && k !== ARRAY) newItem.set(k, v);
      newItem.set('nodeType', type !== 'array' ? type : old);
      this.replace(
        path,
        new Map<string, Node | string>([
          [ARRAY, newItem],
          ['nodeType', 'array'],
        ]),
      );
    } else if (old !== 'null' && type === 'null') {
      // the known type stays
    } else if (old === 'null') {
      node.set('nodeType', type);
    } else {
      fail(`Unhandled nodeType change from "${old}" to "${type}" in "${pathText(path)}"`);
    }
  }
}

/** The reference's `Analyzer` with nested arrays as JSON (Generic Extractor's setting). */
class Analyzer {
  constructor(
    private readonly structure: Structure,
    private readonly warnings: Set<string>,
  ) {}

  analyzeData(records: readonly unknown[], type: string): void {
    if (records.length === 0) return;
    this.analyzeArray(records, [type]);
    this.structure.saveNodeType([type], 'array');
  }

  private analyzeItem(item: unknown, path: string[]): NodeType {
    let type: NodeType;
    if (isScalar(item)) type = 'scalar';
    else if (isObject(item)) {
      type = 'object';
      for (const [key, value] of Object.entries(item)) this.analyzeItem(value, [...path, key]);
    } else if (item === null || item === undefined) type = 'null';
    else if (path[path.length - 1] === ARRAY) {
      this.warnings.add(`Converting nested array '${pathText(path)}' to JSON string.`);
      type = 'scalar';
    } else {
      type = 'array';
      this.analyzeArray(item as unknown[], path);
    }
    this.structure.saveNodeType(path, type);
    return type;
  }

  private analyzeArray(items: readonly unknown[], path: string[]): void {
    const itemPath = [...path, ARRAY];
    if (items.length === 0) this.structure.saveNodeType(itemPath, 'null');
    let old: NodeType | null = null;
    for (const item of items) {
      const type = this.analyzeItem(item, itemPath);
      if (old !== null && type !== old && type !== 'null' && old !== 'null') {
        fail(`Data in '${pathText(itemPath)}' contains incompatible data types '${old}' and '${type}'.`);
      }
      old = type;
    }
  }
}

type Pairs = Array<[string, unknown]>;

/** What `parseRow` does with each column of rows at one path. */
interface RowPlan {
  /** The link-id prefix: the raw path without `[]`, then `_`. */
  idPrefix: string;
  headers: string[];
  columns: Array<{
    column: string;
    type: string | undefined;
    childPath: string[];
    itemPath: string[];
    /** Where a scalar goes: the column's own header, else the row's (`data`). */
    header: string | null;
    ownHeader: string;
  }>;
}

/** The reference's `Parser` for one page: rows against the page's structure. */
class PageParser {
  private readonly tables = new Map<string, { keys: string[]; rows: Array<Record<string, string>> }>();
  private readonly tableNames = new Map<readonly string[], string>();
  private readonly headerCache = new Map<string, string[]>();
  /** Per row path (and parent columns): headers and what to do with each column; the structure is fixed meanwhile. */
  private plans = new Map<readonly string[], Map<string, RowPlan>>();

  constructor(
    private readonly structure: Structure,
    private readonly warnings: Set<string>,
    /** Renamed parent columns (the reference's `parentAliases`): name → the name it got. */
    private readonly aliases = new Map<string, string>(),
  ) {}

  result(): ParsedTable[] {
    return [...this.tables].map(([name, t]) => ({ name, keys: t.keys, rows: t.rows }));
  }

  private headerKey(path: readonly string[]): string {
    const last = path[path.length - 1];
    if (last === ARRAY) return DATA_KEY;
    if (this.structure.getNode(path)?.get('type') === 'parent') return PARENT_KEY_MARK + last;
    return path
      .slice(path.lastIndexOf(ARRAY) + 1)
      .map(escapeSegment)
      .join('.');
  }

  private headerKeyIfKnown(path: readonly string[]): string | null {
    return this.structure.getNode(path) ? this.headerKey(path) : null;
  }

  /** The reference's `getHeaders`; with `parent`, registers the parent columns (renaming a clashing one). */
  private headers(path: string[], parent: Pairs | null): string[] {
    const cacheKey = JSON.stringify(path);
    if (!parent || parent.length === 0) {
      const cached = this.headerCache.get(cacheKey);
      if (cached) return cached;
    }
    let node = this.structure.getNode(path) ?? new Map();
    const headers: string[] = [];
    if (node.get('nodeType') === 'scalar') headers.push(this.headerKey(path));
    if (parent && parent.length > 0) {
      for (const [original, value] of [...parent]) {
        let key = original;
        const actual = encode(key);
        const item = node.get(ARRAY);
        const own = node.get(actual);
        const itemChild = isNode(item) ? item.get(actual) : undefined;
        if (!(isNode(item) && item.has(actual)) && !(isNode(own) && own.get('type')) && !(isNode(itemChild) && itemChild.get('type'))) {
          if (node.has(actual)) {
            let name = key;
            for (let i = 0; node.has(encode(name)); i++) name = `${key}_u${i}`;
            parent.splice(
              parent.findIndex(([k]) => k === key),
              1,
            );
            parent.push([name, value]);
            this.aliases.set(key, name);
            key = name;
          }
          if (!this.structure.getNode(path)) this.structure.getNode(path.slice(0, -1))?.set(ARRAY, node);
          node.set(
            encode(key),
            new Map([
              ['nodeType', 'scalar'],
              ['type', 'parent'],
            ]),
          );
          this.headerCache.clear();
          this.plans = new Map();
          node = this.structure.getNode(path) ?? node;
        }
      }
    }
    for (const [name, child] of node) {
      if (!isNode(child)) continue;
      const childPath = [...path, decode(name)];
      if (child.get('nodeType') === 'object') headers.push(...this.headers(childPath, null));
      else headers.push(this.headerKey(childPath));
    }
    this.headerCache.set(cacheKey, headers);
    return headers;
  }

  private columnTypes(path: readonly string[], parentColumns: readonly string[]): Array<[string, string | undefined]> {
    const node = this.structure.getNode(path);
    const result = new Map<string, string | undefined>();
    const type = node?.get('nodeType');
    if (node && type === 'object') {
      for (const [name, child] of node) {
        if (!isNode(child)) continue;
        const key = decode(name);
        result.set(key === ARRAY ? DATA_KEY : key, child.get('nodeType') as string | undefined);
      }
    } else if (node && type === 'scalar') {
      const last = path[path.length - 1];
      result.set(last === ARRAY ? DATA_KEY : last, 'scalar');
    }
    for (const name of parentColumns) result.set(name, 'string');
    return [...result];
  }

  /** Plans are cached by path array: the parser passes the same arrays again (from the plans themselves). */
  private plan(path: string[], parentColumns: readonly string[]): RowPlan {
    const key = parentColumns.length === 0 ? '' : parentColumns.join('\u0000');
    let byParents = this.plans.get(path);
    if (!byParents) {
      byParents = new Map();
      this.plans.set(path, byParents);
    }
    let plan = byParents.get(key);
    if (!plan) {
      const ownHeader = this.headerKeyIfKnown(path);
      plan = {
        idPrefix: `${cleanPath(path)}_`,
        headers: this.headers(path, null),
        columns: this.columnTypes(path, parentColumns).map(([column, type]) => {
          const childPath = [...path, column];
          return {
            column,
            type,
            childPath,
            itemPath: [...childPath, ARRAY],
            header: this.headerKeyIfKnown(childPath) ?? ownHeader,
            ownHeader: this.headerKey(childPath),
          };
        }),
      };
      byParents.set(key, plan);
    }
    return plan;
  }

  /** The reference's `parse`: rows of one array (a page, or a property's items) into the table of `path`. */
  parse(items: readonly unknown[], path: string[], parentId: string | Pairs | null): void {
    const given: Pairs = parentId === null ? [] : typeof parentId === 'string' ? [[PARENT_ID_KEY, parentId]] : parentId;
    // renamed parent columns keep their new name for the rest of the run (the reference's `parentAliases`)
    const parent: Pairs = given.map(([k, v]) => [this.aliases.get(k) ?? k, v]);
    let name = this.tableNames.get(path);
    if (name === undefined) {
      name = safeName(cleanPath(path));
      this.tableNames.set(path, name);
    }
    let table = this.tables.get(name);
    if (!table) {
      table = { keys: [...this.headers(path, parent)], rows: [] };
      this.tables.set(name, table);
    }
    const parentColumns = parent.map(([k]) => k);
    const parentValues = parent.length > 0 ? Object.fromEntries(parent) : null;
    const plan = this.plan(path, parentColumns);
    for (const item of items) {
      let row: Record<string, unknown>;
      if (isObject(item)) row = item;
      else if (Array.isArray(item)) row = { [DATA_KEY]: phpJsonEncode(item) };
      else row = { [DATA_KEY]: item };
      if (parentValues) row = { ...row, ...parentValues };
      const cells = this.parseRow(row, plan, null);
      const out: Record<string, string> = {};
      for (const [key, value] of cells) Object.defineProperty(out, key, { value: phpCell(value), enumerable: true, writable: true, configurable: true });
      table.rows.push(out);
    }
  }

  /** The reference's `parseRow`: one object into header key → value (nested objects inline, arrays linked). */
  private parseRow(row: Record<string, unknown>, plan: RowPlan, outerId: (() => string) | null): Map<string, unknown> {
    const cells = new Map<string, unknown>();
    for (const h of plan.headers) cells.set(h, null);
    // computed only when an array below needs it (serialize + MD5 per row is the parser's costliest step)
    let id: string | undefined;
    const linkId = () => (id ??= plan.idPrefix + md5Hex(phpSerialize(row) + (outerId?.() ?? '')));
    const set = (key: string | null, value: unknown) => {
      if (key === null || !cells.has(key)) {
        fail(`Error assigning '${phpCell(value)}' to a non-existing column '${key ?? ''}'!`);
      }
      cells.set(key, value);
    };

    for (const c of plan.columns) {
      const value = Object.prototype.hasOwnProperty.call(row, c.column) ? row[c.column] : undefined;
      if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
        if (c.type !== 'object') set(c.header, null);
        continue;
      }
      if (c.type === 'array') {
        set(c.ownHeader, linkId());
        this.parse(Array.isArray(value) ? value : [value], c.itemPath, linkId());
      } else if (c.type === 'object' && isObject(value)) {
        for (const [key, cell] of this.parseRow(value, this.plan(c.childPath, []), linkId)) set(key, cell);
      } else if (isScalar(value)) {
        set(c.header, value);
      } else {
        this.warnings.add(`Data parse error in '${c.column}' - unexpected '${Array.isArray(value) ? 'array' : 'object'}' where '${c.type}' was expected!`);
        set(c.ownHeader, phpJsonEncode(value));
      }
    }
    return cells;
  }
}

/** Options of {@link parseRecords}. */
export interface ParseRecordsOptions {
  /** The job's `dataType` as configured (names the tables and prefixes the link ids). */
  dataType: string;
  /** Parent columns of every root row, in order, with their values as decoded (a child job's `parent_<field>`). */
  parentColumns?: ReadonlyArray<readonly [string, unknown]>;
  /** Collects the parser's warnings (nested arrays converted to JSON, values of an unexpected type). */
  warnings?: string[];
  /**
   * The run's memory of renamed parent columns (the reference's `Structure::setParentTargetName`): a parent column
   * renamed once (`tag` → `tag_u0`, clashing with a field) keeps that name in every later table of the run. Read,
   * and extended in place with this page's renames; plain JSON, so a workflow can checkpoint it.
   */
  parentAliases?: Record<string, string>;
}

/** Analyzes and parses one page of records; tables in order of first row, the root table first. */
export function parseRecords(records: readonly unknown[], options: ParseRecordsOptions): ParsedTable[] {
  if (records.length === 0 || (records.length === 1 && records[0] === null)) return [];
  const structure = new Structure();
  const warnings = new Set<string>();
  new Analyzer(structure, warnings).analyzeData(records, options.dataType);
  const aliases = new Map(Object.entries(options.parentAliases ?? {}));
  const parser = new PageParser(structure, warnings, aliases);
  const parent: Pairs = (options.parentColumns ?? []).map(([k, v]) => [k, v]);
  parser.parse(records, [options.dataType, ARRAY], parent.length > 0 ? parent : null);
  options.warnings?.push(...warnings);
  if (options.parentAliases) for (const [name, target] of aliases) options.parentAliases[name] = target;
  return parser.result();
}
