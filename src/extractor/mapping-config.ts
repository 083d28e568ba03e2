/**
 * Validation and normalization of `parameters.config.mappings`, `userData` (config and job level) and a child job's
 * `recursionFilter`. Called by `parseExtractorConfig` on the raw configuration after the schema accepted it; every
 * issue names its key. Not needed by workflows (they get the normalized `JobConfig`s).
 */
import { ExtractorConfigError, type ConfigIssue } from './errors';
import { mappedTables, type MappedTableSpec } from './mapping';
import { parseRecursionFilter, RecursionFilterSyntaxError } from './recursion-filter';
import { safeName } from './table-names';
import type { ExtractorConfig, JobConfig, MappingEntry, TableMapping, UserDataFunction, UserDataValue } from './types';
import { evaluateFunctions, flattenContext, functionIssues, isFunctionCall } from './functions';
import { referencedNames } from './secrets';

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
/** PHP's `!empty()` on a configuration flag. */
const flag = (v: unknown) => !(v === undefined || v === null || v === false || v === 0 || v === '' || v === '0' || (Array.isArray(v) && v.length === 0));

const COLUMN_KEYS = ['type', 'mapping', 'forceType', 'delimiter'];
const TABLE_KEYS = ['type', 'destination', 'tableMapping', 'parentKey', 'delimiter'];

function unknownKeys(obj: Raw, allowed: string[], path: string, issues: ConfigIssue[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) issues.push({ path: `${path}.${key}`, message: `Unknown mapping property '${key}' (allowed here: ${allowed.join(', ')}).` });
  }
}

function delimiterOf(obj: Raw, path: string, issues: ConfigIssue[]): string {
  if (obj.delimiter === undefined || obj.delimiter === null || obj.delimiter === '') return '.';
  if (typeof obj.delimiter !== 'string') {
    issues.push({ path: `${path}.delimiter`, message: "The mapping 'delimiter' must be a string." });
    return '.';
  }
  return obj.delimiter;
}

function normalizeEntry(key: string, raw: unknown, table: string, path: string, issues: ConfigIssue[]): MappingEntry | null {
  if (typeof raw === 'string') {
    if (raw === '') issues.push({ path, message: `Key 'mapping.destination' is not set for column '${key}'.` });
    return { type: 'column', path: key, delimiter: '.', destination: raw, primaryKey: false, forceType: false };
  }
  if (!isObject(raw)) {
    issues.push({ path, message: `The mapping of '${key}' must be an object or a column name.` });
    return null;
  }
  const type = raw.type === undefined || raw.type === null || raw.type === '' ? 'column' : raw.type;
  if (type === 'date') {
    issues.push({
      path: `${path}.type`,
      message: `Mapping type 'date' (column '${key}') is not supported by this extractor (supported: column, user, table).`,
    });
    return null;
  }
  if (type === 'column' || type === 'user') {
    unknownKeys(raw, type === 'user' ? ['type', 'mapping'] : COLUMN_KEYS, path, issues);
    const mapping = isObject(raw.mapping) ? raw.mapping : {};
    unknownKeys(mapping, ['destination', 'primaryKey'], `${path}.mapping`, issues);
    if (typeof mapping.destination !== 'string' || mapping.destination === '') {
      issues.push({ path: `${path}.mapping.destination`, message: `Key 'mapping.destination' is not set for column '${key}'.` });
      return null;
    }
    return {
      type,
      path: key,
      delimiter: type === 'user' ? '/' : delimiterOf(raw, path, issues),
      destination: mapping.destination,
      primaryKey: flag(mapping.primaryKey),
      forceType: flag(raw.forceType),
    };
  }
  if (type !== 'table') {
    issues.push({ path: `${path}.type`, message: `Invalid mapping type "${String(type)}" (supported: column, user, table).` });
    return null;
  }
  unknownKeys(raw, TABLE_KEYS, path, issues);
  if (typeof raw.destination !== 'string' || raw.destination === '') {
    issues.push({ path: `${path}.destination`, message: `Key 'destination' is not set for table '${key}'.` });
    return null;
  }
  const parentKeyRaw = isObject(raw.parentKey) ? raw.parentKey : {};
  if (raw.parentKey !== undefined && raw.parentKey !== null && !isObject(raw.parentKey)) {
    issues.push({ path: `${path}.parentKey`, message: "'parentKey' must be an object with 'destination', 'primaryKey' or 'disable'." });
  }
  unknownKeys(parentKeyRaw, ['destination', 'primaryKey', 'disable'], `${path}.parentKey`, issues);
  const parentKey = {
    disable: flag(parentKeyRaw.disable),
    primaryKey: flag(parentKeyRaw.primaryKey),
    destination: typeof parentKeyRaw.destination === 'string' && parentKeyRaw.destination !== '' ? parentKeyRaw.destination : null,
  };
  const delimiter = delimiterOf(raw, path, issues);
  if (raw.destination === table) {
    if (!parentKey.disable) {
      issues.push({ path: `${path}.parentKey.disable`, message: "'parentKey.disable' must be true to parse child values into parent's table" });
    }
    if (raw.tableMapping !== undefined) {
      issues.push({
        path: `${path}.tableMapping`,
        message: `'tableMapping' is not used when the destination is the mapping's own table '${table}': the rows are mapped with this mapping.`,
      });
    }
    return { type: 'table', path: key, delimiter, destination: raw.destination, tableMapping: null, parentKey };
  }
  if (!isObject(raw.tableMapping) || Object.keys(raw.tableMapping).length === 0) {
    issues.push({ path: `${path}.tableMapping`, message: `Key 'tableMapping' is not set for table '${key}'.` });
    return null;
  }
  const tableMapping = normalizeMapping(raw.destination, raw.tableMapping, `${path}.tableMapping`, issues);
  return { type: 'table', path: key, delimiter, destination: raw.destination, tableMapping, parentKey };
}

function normalizeMapping(table: string, raw: Raw, path: string, issues: ConfigIssue[]): TableMapping {
  const entries: MappingEntry[] = [];
  const tablesSeen = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    const entryPath = `${path}[${JSON.stringify(key)}]`;
    const entry = normalizeEntry(key, value, table, entryPath, issues);
    if (!entry) continue;
    if (entry.type === 'table' && entry.tableMapping !== null) {
      // the reference reuses the first table mapping for a destination within one mapping: refuse a different second one
      const signature = JSON.stringify(value);
      const first = tablesSeen.get(entry.destination);
      if (first !== undefined && first !== signature) {
        issues.push({ path: entryPath, message: `Table '${entry.destination}' is mapped twice in one mapping with different settings; give it one mapping.` });
      }
      tablesSeen.set(entry.destination, signature);
    }
    entries.push(entry);
  }
  return { table, entries };
}

/** Columns twice in one table, and one table written with different columns or keys. */
function tableIssues(specs: Array<MappedTableSpec & { path: string }>, issues: ConfigIssue[]): void {
  const byName = new Map<string, MappedTableSpec>();
  for (const spec of specs) {
    const seen = new Set<string>();
    for (const column of spec.columns) {
      if (seen.has(column))
        issues.push({ path: spec.path, message: `Column '${column}' appears twice in the mapped table '${spec.name}'; use distinct destinations.` });
      seen.add(column);
    }
    const other = byName.get(spec.name);
    if (other && (JSON.stringify(other.columns) !== JSON.stringify(spec.columns) || JSON.stringify(other.primaryKey) !== JSON.stringify(spec.primaryKey))) {
      issues.push({
        path: spec.path,
        message: `Multiple results for '${spec.name}' table have different columns! (${other.columns.join(', ')} / ${spec.columns.join(', ')})`,
      });
    }
    if (!other) byName.set(spec.name, spec);
  }
}

/** `parameters.config.mappings`: data type → normalized mapping. */
function normalizeMappings(raw: unknown, issues: ConfigIssue[]): Record<string, TableMapping> {
  const result: Record<string, TableMapping> = {};
  if (raw === undefined || raw === null || (isObject(raw) && Object.keys(raw).length === 0)) return result;
  if (!isObject(raw)) {
    issues.push({ path: 'parameters.config.mappings', message: "'mappings' must be an object: data type → mapping." });
    return result;
  }
  const specs: Array<MappedTableSpec & { path: string }> = [];
  for (const [type, mapping] of Object.entries(raw)) {
    const path = `parameters.config.mappings[${JSON.stringify(type)}]`;
    if (mapping === null || mapping === undefined || (isObject(mapping) && Object.keys(mapping).length === 0)) {
      issues.push({ path, message: `Empty mapping for '${type}' data type in 'mappings' config.` });
      continue;
    }
    if (!isObject(mapping)) {
      issues.push({ path, message: `Mapping must be an object for '${type}' data type in 'mappings' config.` });
      continue;
    }
    if (safeName(type) === '') issues.push({ path, message: `The table name made from '${type}' is empty.` });
    const count = issues.length;
    result[type] = normalizeMapping(type, mapping, path, issues);
    if (issues.length === count) specs.push(...mappedTables(result[type]).map((s) => ({ ...s, path })));
  }
  tableIssues(specs, issues);
  return result;
}

/** `userData` (config or job level): an object of scalars, or one scalar named `scalarKey` (the reference's rule). */
function normalizeUserData(
  raw: unknown,
  scalarKey: string,
  path: string,
  issues: ConfigIssue[],
  attributes: Record<string, unknown> = {},
): Record<string, UserDataValue | UserDataFunction> | undefined {
  if (raw === undefined || raw === null || raw === '' || raw === false || raw === 0 || raw === '0') return undefined;
  if (!isObject(raw)) {
    if (Array.isArray(raw)) {
      if (raw.length === 0) return undefined;
      issues.push({ path, message: "'userData' must be an object of column names and values." });
      return undefined;
    }
    return { [scalarKey]: raw as UserDataValue };
  }
  if (Object.keys(raw).length === 0) return undefined;
  const result: Record<string, UserDataValue | UserDataFunction> = {};
  for (const [key, value] of Object.entries(raw)) {
    // user functions and `{attr}`/`{time}` references (evaluated per job run, user-data-functions.ts)
    if (isObject(value) && (isFunctionCall(value) || (Object.keys(value).length === 1 && ['attr', 'time'].includes(Object.keys(value)[0]!)))) {
      const before = issues.length;
      issues.push(...functionIssues(value, `${path}.${key}`, { attr: flattenContext(attributes), time: { previousStart: 0, currentStart: 0 } }));
      if (referencedNames(value).length > 0) {
        issues.push({
          path: `${path}.${key}`,
          message: `'userData.${key}' must not reference a secret (\${env:…}): user data is written to the output table.`,
        });
      }
      if (issues.length === before) {
        // evaluated once now, so that a call that can only fail (an argument count, a type) fails before any request
        try {
          evaluateFunctions(value, { attr: attributes, time: { previousStart: 0, currentStart: 0 } }, { nowMs: 0, path: `${path}.${key}` });
          result[key] = value;
        } catch (err) {
          if (!(err instanceof ExtractorConfigError)) throw err;
          issues.push(...err.issues);
        }
      }
      continue;
    }
    if (value !== null && typeof value === 'object') {
      issues.push({
        path: `${path}.${key}`,
        message: `'userData.${key}' must be a string, number, boolean, null or a user function ({"function": …} or {"attr"|"time": …}).`,
      });
      continue;
    }
    result[key] = value as UserDataValue;
  }
  return result;
}

/**
 * A table written both by a mapping and by the JSON parser (a job without mapping whose `dataType` names it) would
 * mix two column sets; the reference fails on it ("different columns"), so it is refused before any request.
 */
function sharedTableIssues(jobs: JobConfig[], mappings: Record<string, TableMapping>): ConfigIssue[] {
  const mapped = new Set(Object.values(mappings).flatMap((m) => mappedTables(m).map((t) => t.name)));
  const issues: ConfigIssue[] = [];
  const visit = (job: JobConfig, path: string) => {
    const table = safeName(job.dataType);
    if (!job.mapping && mapped.has(table)) {
      issues.push({
        path: `${path}.dataType`,
        message: `Table '${table}' is written by a mapping and by this job without mapping: add a mapping for '${job.dataType}' or use another dataType.`,
      });
    }
    job.children.forEach((child, i) => visit(child, `${path}.children[${i}]`));
  };
  jobs.forEach((job, i) => visit(job, `parameters.config.jobs[${i}]`));
  return issues;
}

/** A mapping no job uses would only give the reference an empty table: refused rather than ignored. */
function unusedMappingIssues(jobs: JobConfig[], mappings: Record<string, TableMapping>): ConfigIssue[] {
  const types = new Set<string>();
  const visit = (job: JobConfig) => {
    types.add(job.dataType);
    job.children.forEach(visit);
  };
  jobs.forEach(visit);
  return Object.keys(mappings)
    .filter((type) => !types.has(type))
    .map((type) => ({
      path: `parameters.config.mappings[${JSON.stringify(type)}]`,
      message: `No job has the data type '${type}' (data types of the jobs: ${[...types].join(', ')}): the mapping would never be used; set it for a job's 'dataType' (which defaults to its endpoint) or remove it.`,
    }));
}

/** What `applyJobFeatures` adds to the normalized configuration. */
interface JobFeatureResult {
  issues: ConfigIssue[];
  /** The configuration with `recursionFilter`, `userData` and `mapping` set on its jobs (a new object). */
  config: ExtractorConfig;
}

/**
 * Reads `mappings`, `userData` and the jobs' `recursionFilter`/`userData` from the raw `parameters.config` and sets
 * them on the normalized jobs (walking raw and normalized jobs together).
 */
export function applyJobFeatures(configRaw: Raw, config: ExtractorConfig): JobFeatureResult {
  const issues: ConfigIssue[] = [];
  const mappings = normalizeMappings(configRaw.mappings, issues);
  const rootUserData = normalizeUserData(configRaw.userData, 'userData', 'parameters.config.userData', issues, config.config.attributes);

  const visit = (job: JobConfig, raw: Raw, path: string, topLevel: boolean): JobConfig => {
    const next: JobConfig = { ...job };
    if (raw.recursionFilter !== undefined && raw.recursionFilter !== null && raw.recursionFilter !== '') {
      if (typeof raw.recursionFilter !== 'string') {
        issues.push({ path: `${path}.recursionFilter`, message: '\'recursionFilter\' must be a string such as "status==active".' });
      } else if (topLevel) {
        issues.push({ path: `${path}.recursionFilter`, message: "'recursionFilter' applies to child jobs only (it filters the parent's rows)." });
      } else {
        try {
          parseRecursionFilter(raw.recursionFilter);
          next.recursionFilter = raw.recursionFilter;
        } catch (err) {
          if (!(err instanceof RecursionFilterSyntaxError)) throw err;
          issues.push({ path: `${path}.recursionFilter`, message: err.message });
        }
      }
    }
    const own = normalizeUserData(raw.userData, 'job_parent_id', `${path}.userData`, issues, config.config.attributes);
    const userData = topLevel && rootUserData ? { ...rootUserData, ...own } : own;
    if (userData) next.userData = userData;
    if (Object.prototype.hasOwnProperty.call(mappings, job.dataType)) next.mapping = mappings[job.dataType];
    const rawChildren = Array.isArray(raw.children) ? (raw.children as Raw[]) : [];
    next.children = job.children.map((child, i) => visit(child, rawChildren[i] ?? {}, `${path}.children[${i}]`, false));
    return next;
  };
  const rawJobs = configRaw.jobs as Raw[];
  const jobs = config.config.jobs.map((job, i) => visit(job, rawJobs[i] ?? {}, `parameters.config.jobs[${i}]`, true));
  issues.push(...sharedTableIssues(jobs, mappings));
  issues.push(...unusedMappingIssues(jobs, mappings));
  return { issues, config: { ...config, config: { ...config.config, jobs } } };
}
