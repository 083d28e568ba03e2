/**
 * The reference JSON parser's stored structure (`json_parser.struct` of a run state, keboola/php-jsonparser 3) as
 * columns. Pure module, workflow-safe.
 *
 * The reference loads the structure a previous run stored and parses the new pages against it, so a table keeps
 * the columns of earlier runs (example 107: `previous`, a column no record of this run has, stays, empty). Ours
 * converts the structure into a {@link TableSchema} seed ({@link schemaFromStruct}) and lays every table this run
 * produced over the seed's columns for that table ({@link seedSchema}): the seed's columns first, in its order, this
 * run's new columns where the structure order puts them. Tables the structure knows but this run did not produce
 * are not written (the reference writes only tables it parsed rows into). Only columns are taken from it: node
 * types stored there do not change how this run's values are parsed.
 *
 * Structure shape: `{"data": {"_<dataType>": {"nodeType": "array", "[]": <item node>}}, "parent_aliases": …}`; an
 * object node has its properties as `_<name>` keys in column order; an array property's items are a child table
 * (`<table>_<property>`); a node with `"type": "parent"` is a parent column (`JSON_parentId`, `parent_<field>`).
 */
import { PARENT_KEY_MARK } from './json-parser';
import type { ExtractRunState } from './run-state';
import type { ExtractorConfig, JobConfig } from './types';
import { mergeTableSchema, segmentsOf, type TableSchema } from './table-schema';
import { safeName } from './table-names';

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const ARRAY = '[]';
const escapeSegment = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\./g, '\\.');
/** Child nodes of an object node, in order: `_name` keys (and `[]`). */
const childrenOf = (node: Node): Array<[string, Node]> =>
  Object.entries(node).filter((e): e is [string, Node] => (e[0].startsWith('_') || e[0] === ARRAY) && isNode(e[1]));

/** The `json_parser.struct` of a run state, if it has one. */
export function parserStructOf(state: ExtractRunState | null | undefined): unknown {
  return state?.['json_parser.struct'];
}

/** The tables and header keys a stored structure describes (table names as the JSON parser names them). */
export function schemaFromStruct(struct: unknown): TableSchema {
  const schema: TableSchema = {};
  const data = isNode(struct) && isNode(struct.data) ? struct.data : {};
  // the rows of the table at `path` (the item node of an array)
  const table = (items: Node, path: string[]) => {
    const keys: string[] = [];
    const visit = (node: Node, prefix: string[]) => {
      for (const [name, child] of childrenOf(node)) {
        if (name === ARRAY) continue;
        const property = name.slice(1);
        if (child.type === 'parent') {
          keys.push(PARENT_KEY_MARK + property);
        } else if (child.nodeType === 'object') {
          visit(child, [...prefix, property]);
        } else {
          keys.push([...prefix, property].map(escapeSegment).join('.'));
          if (child.nodeType === 'array' && isNode(child[ARRAY])) table(child[ARRAY], [...path, ...prefix, property]);
        }
      }
    };
    if (items.nodeType === 'object') visit(items, []);
    else if (items.nodeType === 'scalar' || items.nodeType === 'array') {
      keys.push('data');
      for (const [name, child] of childrenOf(items)) if (child.type === 'parent') keys.push(PARENT_KEY_MARK + name.slice(1));
    }
    if (keys.length > 0) schema[safeName(path.join('.'))] = mergeTableSchema({}, [{ name: 't', keys }]).t!;
  };
  for (const [name, node] of childrenOf(data)) {
    if (name !== ARRAY && node.nodeType === 'array' && isNode(node[ARRAY])) table(node[ARRAY], [name.slice(1)]);
  }
  return schema;
}

/**
 * Every table of `schema` laid over the seed's columns for it (seed first, in its order; this run's new keys
 * inserted where the structure order puts them). Tables only the seed has are left out.
 */
export function seedSchema(schema: TableSchema, seed: TableSchema): TableSchema {
  const result: TableSchema = {};
  for (const [name, keys] of Object.entries(schema)) {
    const base = Object.prototype.hasOwnProperty.call(seed, name) ? seed[name]! : [];
    result[name] = mergeTableSchema(base.length > 0 ? { [name]: base } : {}, [{ name, keys }])[name]!;
  }
  return result;
}

const clone = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/**
 * The structure a run leaves for the next one (the reference stores its parser's structure in `state.json`): the
 * previous structure with the nodes of this run's tables added (existing nodes are kept as they are). `dataTypes`
 * are the jobs' data types as configured (the root of each table written by the JSON parser; mapped ones left out).
 */
export function structFromSchema(schema: TableSchema, dataTypes: readonly string[], previous: unknown): Record<string, unknown> {
  const struct = (isNode(previous) ? clone(previous) : {}) as Node;
  if (!isNode(struct.data)) struct.data = {};
  if (!('parent_aliases' in struct)) struct.parent_aliases = [];
  const child = (node: Node, name: string, nodeType: string): Node => {
    const existing = node[name];
    if (isNode(existing)) return existing;
    const created: Node = { nodeType };
    node[name] = created;
    return created;
  };
  const itemsOf = (array: Node): Node => {
    if (!isNode(array[ARRAY])) array[ARRAY] = {};
    return array[ARRAY] as Node;
  };
  const fill = (items: Node, path: string[], table: string): void => {
    const keys = schema[table] ?? [];
    const dataKeys = keys.filter((k) => !k.startsWith(PARENT_KEY_MARK));
    if (!('nodeType' in items)) items.nodeType = dataKeys.length === 1 && dataKeys[0] === 'data' ? 'scalar' : 'object';
    for (const key of keys) {
      if (key.startsWith(PARENT_KEY_MARK)) {
        const name = key.slice(PARENT_KEY_MARK.length);
        if (!isNode(items[`_${name}`])) items[`_${name}`] = { nodeType: 'scalar', type: 'parent', headerNames: name };
        continue;
      }
      if (items.nodeType !== 'object') continue;
      const segments = segmentsOf(key);
      let node = items;
      segments.slice(0, -1).forEach((segment) => (node = child(node, `_${segment}`, 'object')));
      const last = segments[segments.length - 1]!;
      const childTable = safeName([...path, ...segments].join('.'));
      if (childTable !== table && Object.prototype.hasOwnProperty.call(schema, childTable)) {
        const array = child(node, `_${last}`, 'array');
        fill(itemsOf(array), [...path, ...segments], childTable);
      } else if (!isNode(node[`_${last}`])) {
        node[`_${last}`] = { nodeType: 'scalar', headerNames: safeName(segments.join('_')) };
      }
    }
  };
  for (const dataType of [...new Set(dataTypes)]) {
    const table = safeName(dataType);
    if (!Object.prototype.hasOwnProperty.call(schema, table)) continue;
    fill(itemsOf(child(struct.data as Node, `_${dataType}`, 'array')), [dataType], table);
  }
  return struct;
}

/** The data types the JSON parser writes in a configuration (every job and child job without a mapping, all iterations). */
function parserDataTypes(config: ExtractorConfig): string[] {
  const types: string[] = [];
  const visit = (job: JobConfig) => {
    if (!job.mapping) types.push(job.dataType);
    job.children.forEach(visit);
  };
  for (const iteration of config.iterations ?? [config]) iteration.config.jobs.forEach(visit);
  return [...new Set(types)];
}

/**
 * The renamed parent columns a previous run stored (`json_parser.struct.parent_aliases`: name → new name; the
 * reference writes `[]` when there are none); the JSON parser keeps using them (`RunContext.parentAliases`).
 */
export function parentAliasesOf(state: ExtractRunState | null | undefined): Record<string, string> | undefined {
  const struct = parserStructOf(state);
  const aliases = isNode(struct) ? struct.parent_aliases : undefined;
  if (!isNode(aliases)) return undefined;
  const result = Object.fromEntries(Object.entries(aliases).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return Object.keys(result).length > 0 ? result : undefined;
}

/**
 * The `json_parser.*` keys of the state a run leaves: the structure with this run's tables and the renamed parent
 * columns so far (`parentAliases`, the stored ones included), version 3.
 */
export function parserStateOf(
  schema: TableSchema,
  config: ExtractorConfig,
  previous: ExtractRunState | null | undefined,
  parentAliases?: Record<string, string>,
): Record<string, unknown> {
  const struct = structFromSchema(schema, parserDataTypes(config), parserStructOf(previous));
  const aliases = { ...(parentAliasesOf(previous) ?? {}), ...(parentAliases ?? {}) };
  if (Object.keys(aliases).length > 0) struct.parent_aliases = aliases;
  return { 'json_parser.struct': struct, 'json_parser.structVersion': 3 };
}
