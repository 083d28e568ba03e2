// Typed-column and metadata flags of `sapi-temporal import`: `--column`, `--columns-file`, `--metadata`.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { TypedColumn } from '../contracts/transfer';

const COLUMN_FLAG = /^\s*([A-Za-z0-9_]{1,64})\s*:\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:\(\s*(\d+(?:\s*,\s*\d+)?)\s*\))?\s*(NOT\s+NULL)?\s*$/i;

/**
 * Parses one `--column` value, `name:TYPE`, `name:TYPE(len)` or `name:NUMBER(10,2)`, optionally followed by
 * `NOT NULL`, into a typed column (type upper-cased, length without spaces).
 */
export function parseColumnFlag(value: string): TypedColumn {
  const match = COLUMN_FLAG.exec(value);
  if (!match) {
    throw new InvalidArgumentError(
      `expected name:TYPE, name:TYPE(length) or name:NUMBER(precision,scale), optionally followed by NOT NULL (e.g. id:INTEGER, price:NUMBER(10,2), name:VARCHAR(255)), got ${JSON.stringify(value)}`,
    );
  }
  const [, name, type, length, notNull] = match;
  return {
    name: name!,
    definition: { type: type!.toUpperCase(), ...(length ? { length: length.replace(/\s+/g, '') } : {}), ...(notNull ? { nullable: false } : {}) },
  };
}

/** Collects repeated `--column` values. */
export function collectColumn(value: string, previous: TypedColumn[] = []): TypedColumn[] {
  return [...previous, parseColumnFlag(value)];
}

/** Collects repeated `--metadata key=value` values (a later key wins). */
export function collectMetadata(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`expected key=value, got ${JSON.stringify(value)}`);
  return { ...previous, [value.slice(0, eq).trim()]: value.slice(eq + 1) };
}

/** What a columns file describes. */
interface ColumnsFile {
  columns: TypedColumn[];
  /** The file's `primaryKeysNames`, when it has them. */
  primaryKey?: string[];
}

/**
 * Reads a `--columns-file`: the body of the service's `tables-definition` (`{"columns": [{"name", "definition":
 * {"type", "length", "nullable", "default"}}], "primaryKeysNames": [...]}`) or only its `columns` list. Fails naming
 * the file and the entry that is wrong.
 */
export function readColumnsFile(path: string, cwd: string = process.cwd()): ColumnsFile {
  const full = resolve(cwd, path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(full, 'utf8'));
  } catch (err) {
    throw new InvalidArgumentError(`--columns-file ${full}: ${(err as { message?: string }).message ?? String(err)}`);
  }
  const body = Array.isArray(parsed) ? { columns: parsed } : (parsed as { columns?: unknown; primaryKeysNames?: unknown });
  if (!body || typeof body !== 'object' || !Array.isArray(body.columns) || body.columns.length === 0) {
    throw new InvalidArgumentError(
      `--columns-file ${full}: expected a list of {name, definition: {type, length?, nullable?, default?}} or an object with such a "columns" list`,
    );
  }
  const columns = body.columns.map((item: unknown, i: number): TypedColumn => {
    const c = item as { name?: unknown; definition?: Record<string, unknown> } | null;
    const d = c?.definition;
    const bad = (what: string) => new InvalidArgumentError(`--columns-file ${full}: columns[${i}] ${what}`);
    if (!c || typeof c.name !== 'string' || !c.name) throw bad('needs a "name"');
    if (!d || typeof d !== 'object' || typeof d.type !== 'string' || !d.type) throw bad(`(${c.name}) needs "definition": {"type": …}`);
    if (d.nullable !== undefined && typeof d.nullable !== 'boolean') throw bad(`(${c.name}): "nullable" must be true or false`);
    const text = (v: unknown) => (v === undefined || v === null ? undefined : String(v as string | number));
    const definition: TypedColumn['definition'] = { type: d.type.toUpperCase() };
    if (text(d.length) !== undefined) definition.length = text(d.length);
    if (typeof d.nullable === 'boolean') definition.nullable = d.nullable;
    if (text(d.default) !== undefined) definition.default = text(d.default);
    return { name: c.name, definition };
  });
  const pk = Array.isArray(body.primaryKeysNames) ? body.primaryKeysNames.map(String) : undefined;
  return { columns, ...(pk?.length ? { primaryKey: pk } : {}) };
}
