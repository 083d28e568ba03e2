/**
 * Child jobs: plans which child runs follow a parent page. Pure module.
 *
 * For every parent page, all children of all its rows run (each fully paginated, its own counters) before the
 * parent's next page; order: for each child job, for each row (the reference's order). `{placeholder}`s in the
 * child endpoint are filled from the parent row (`placeholders: {"user-id": "id"}`); `"2:id"` reads the
 * grandparent's row. Child rows carry `parent_<field>` columns, including those inherited from ancestors.
 * A child's `recursionFilter` skips parent rows that do not pass it; a placeholder whose value is an array starts
 * one run per element.
 */
import { PlaceholderMissingError } from './errors';
import { cellValue } from './flatten';
import { getPath } from './path';
import { matchesRecursionFilter, parseRecursionFilter } from './recursion-filter';
import type { JobConfig } from './types';
import { DeferredCall, evaluateFunctions, type CryptoFunctions } from './functions';

/**
 * A `{path, function, …}` placeholder: the function applied to the parent value (context `placeholder.value`,
 * plus `urlencode`, as the reference). Hashing needs `crypto` (given by the activity); a secret cannot be used here.
 */
function placeholderFunction(fn: unknown, value: unknown, placeholder: string, child: JobConfig, crypto: CryptoFunctions | undefined, nowMs: number): unknown {
  const path = `job '${child.id}' placeholders.${placeholder}`;
  const result = evaluateFunctions(fn, { placeholder: { value } }, { nowMs, crypto, extraFunctions: ['urlencode'], path });
  if (result instanceof DeferredCall) {
    throw new PlaceholderMissingError(
      `The function of placeholder '${placeholder}' (endpoint '${child.endpoint}') could not be evaluated here (it needs hashing or a secret).`,
    );
  }
  return result;
}

/** A placeholder value taken from a parent row. */
interface PlaceholderValue {
  placeholder: string;
  /** The field path in the parent row. */
  field: string;
  value: unknown;
}

/**
 * What a child run knows about its ancestors. Small JSON: only the fields placeholders refer to are kept
 * (nearest parent first), never whole rows.
 */
export interface ParentContext {
  levels: Array<Record<string, unknown>>;
  params: PlaceholderValue[];
}

/** One child job run to execute (fully paginated) for one parent row. */
export interface ChildRun {
  /** The child job with its endpoint filled; its own `children` still hold placeholders. */
  job: JobConfig;
  /** Index of the parent row in the page. */
  rowIndex: number;
  /** Columns every row of this run gets (`parent_<field>`), by flattened key. */
  parentColumns: Record<string, string>;
  /** Context for this run's own children. */
  parent: ParentContext;
}

/** The plan after one parent page. */
interface ChildPlan {
  runs: ChildRun[];
  warnings: string[];
}

function placeholderFields(job: JobConfig, into = new Set<string>()): Set<string> {
  for (const child of job.children) {
    for (const field of Object.values(child.placeholders)) into.add(field);
    placeholderFields(child, into);
  }
  return into;
}

function pickFields(record: unknown, fields: Set<string>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    const found = getPath(record, field);
    if (found.found && found.value !== null) picked[field] = found.value;
  }
  return picked;
}

/** `parent_<field>` (a field already starting with `parent_` is kept). */
export function parentColumnName(field: string): string {
  return field.startsWith('parent_') ? field : `parent_${field}`;
}

/**
 * Plans the child runs that follow one page of `job` (whose rows are `records`); `parent` is the context of
 * `job` itself (`null` for a top-level job). Throws `PlaceholderMissingError` when a row lacks a placeholder's field.
 */
export function planChildRuns(job: JobConfig, records: readonly unknown[], parent: ParentContext | null, crypto?: CryptoFunctions, nowMs = 0): ChildPlan {
  const runs: ChildRun[] = [];
  const warnings: string[] = [];
  if (job.children.length === 0) return { runs, warnings };
  const fields = placeholderFields(job);

  for (const child of job.children) {
    if (Object.keys(child.placeholders).length === 0) warnings.push(`No 'placeholders' set for '${child.endpoint}'`);
    const filter = child.recursionFilter === undefined ? null : parseRecursionFilter(child.recursionFilter);
    records.forEach((record, rowIndex) => {
      if (filter && !matchesRecursionFilter(filter, record)) return;
      const levels = [pickFields(record, fields), ...(parent?.levels ?? [])];
      const own = Object.entries(child.placeholders).map(([placeholder, field]): PlaceholderValue => {
        const colon = placeholder.indexOf(':');
        const level = colon === -1 ? 0 : Number(placeholder.slice(0, colon)) - 1;
        if (!(level >= 0 && level < levels.length)) {
          throw new PlaceholderMissingError(
            `Level ${level + 1} not found in parent results! Maximum level: ${levels.length} (placeholder '${placeholder}', endpoint '${child.endpoint}')`,
          );
        }
        const value = levels[level][field];
        if (value === undefined || value === null) {
          throw new PlaceholderMissingError(
            `No value found for ${placeholder} in parent result. (level: ${level + 1}, field '${field}', endpoint '${child.endpoint}')`,
          );
        }
        const fn = child.placeholderFunctions?.[placeholder];
        return { placeholder, field, value: fn === undefined ? value : placeholderFunction(fn, value, placeholder, child, crypto, nowMs) };
      });
      // Inherited placeholders first; a placeholder of the same name at a deeper level replaces the parent's value.
      const merged: PlaceholderValue[] = (parent?.params ?? []).map((p) => own.find((o) => o.placeholder === p.placeholder) ?? p);
      for (const o of own) if (!merged.some((p) => p.placeholder === o.placeholder)) merged.push(o);

      // A placeholder whose value is an array gives one run per element (every combination, the last placeholder
      // varying fastest); no placeholder at all gives no run, as in the reference.
      for (const params of combinations(merged)) {
        let endpoint = child.endpoint;
        for (const p of params) endpoint = endpoint.split(`{${p.placeholder}}`).join(cellValue(p.value));
        const parentColumns: Record<string, string> = {};
        for (const p of params) parentColumns[parentColumnName(p.field)] = cellValue(p.value);
        runs.push({ job: { ...child, endpoint }, rowIndex, parentColumns, parent: { levels, params } });
      }
    });
  }
  return { runs, warnings };
}

/** Every combination of the placeholders' values, an array value standing for each of its elements. */
function combinations(params: PlaceholderValue[]): PlaceholderValue[][] {
  if (params.length === 0) return [];
  let result: PlaceholderValue[][] = [[]];
  for (const p of params) {
    const values = Array.isArray(p.value) ? p.value : [p.value];
    result = result.flatMap((prefix) => values.map((value) => [...prefix, { ...p, value }]));
  }
  return result;
}
