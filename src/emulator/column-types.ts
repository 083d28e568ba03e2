/**
 * Typed tables' column types: the names `tables-definition` accepts (Snowflake's, which most stacks run), the DuckDB
 * type behind each, its Keboola base type, and the SQL that checks and converts CSV strings. Pure code.
 */
import { type ColumnDefinition } from './model';
import { ident } from './table-store';

export type BaseType = 'STRING' | 'INTEGER' | 'NUMERIC' | 'FLOAT' | 'BOOLEAN' | 'DATE' | 'TIMESTAMP';

interface TypeRule {
  base: BaseType;
  /** DuckDB type for a length (already validated), e.g. `DECIMAL(10,2)`. */
  duckdb: (length: string | undefined) => string;
  /** Checks `length`; returns the problem, or undefined. */
  length?: (length: string) => string | undefined;
}

const MAX_VARCHAR = 16_777_216;

const varchar: TypeRule = {
  base: 'STRING',
  duckdb: () => 'VARCHAR',
  length: (l) => (/^\d+$/.test(l) && Number(l) >= 1 && Number(l) <= MAX_VARCHAR ? undefined : `length must be an integer 1–${MAX_VARCHAR}`),
};
const decimal: TypeRule = {
  base: 'NUMERIC',
  duckdb: (l) => {
    const [p, s] = (l ?? '38,0').split(',').map((x) => Number(x.trim()));
    return `DECIMAL(${p},${s ?? 0})`;
  },
  length: (l) => {
    const m = /^\s*(\d+)\s*(?:,\s*(\d+)\s*)?$/.exec(l);
    if (!m) return 'length must be "precision" or "precision,scale", e.g. "10,2"';
    const p = Number(m[1]);
    const s = Number(m[2] ?? 0);
    return p >= 1 && p <= 38 && s <= p ? undefined : 'precision must be 1–38 and scale at most the precision';
  },
};
const fixed = (base: BaseType, type: string): TypeRule => ({ base, duckdb: () => type });

/** Accepted type names (upper case) → rule. */
export const COLUMN_TYPES: Readonly<Record<string, TypeRule>> = {
  VARCHAR: varchar,
  STRING: varchar,
  TEXT: varchar,
  CHAR: varchar,
  CHARACTER: varchar,
  NVARCHAR: varchar,
  NUMBER: decimal,
  NUMERIC: decimal,
  DECIMAL: decimal,
  INTEGER: fixed('INTEGER', 'BIGINT'),
  INT: fixed('INTEGER', 'BIGINT'),
  BIGINT: fixed('INTEGER', 'BIGINT'),
  SMALLINT: fixed('INTEGER', 'SMALLINT'),
  TINYINT: fixed('INTEGER', 'TINYINT'),
  FLOAT: fixed('FLOAT', 'DOUBLE'),
  FLOAT4: fixed('FLOAT', 'DOUBLE'),
  FLOAT8: fixed('FLOAT', 'DOUBLE'),
  DOUBLE: fixed('FLOAT', 'DOUBLE'),
  REAL: fixed('FLOAT', 'DOUBLE'),
  BOOLEAN: fixed('BOOLEAN', 'BOOLEAN'),
  DATE: fixed('DATE', 'DATE'),
  DATETIME: fixed('TIMESTAMP', 'TIMESTAMP'),
  TIMESTAMP: fixed('TIMESTAMP', 'TIMESTAMP'),
  TIMESTAMP_NTZ: fixed('TIMESTAMP', 'TIMESTAMP'),
  TIMESTAMP_LTZ: fixed('TIMESTAMP', 'TIMESTAMPTZ'),
  TIMESTAMP_TZ: fixed('TIMESTAMP', 'TIMESTAMPTZ'),
};

/** Checks a column definition; returns what is wrong with it (naming the column), or undefined. */
export function definitionProblem(column: string, d: ColumnDefinition): string | undefined {
  const rule = COLUMN_TYPES[d.type.toUpperCase()];
  if (!rule) return `column "${column}": type "${d.type}" is not supported; use one of ${Object.keys(COLUMN_TYPES).join(', ')}`;
  if (d.length !== undefined && d.length !== '') {
    if (!rule.length) return `column "${column}": type ${d.type.toUpperCase()} takes no length; got "${d.length}"`;
    const problem = rule.length(d.length);
    if (problem) return `column "${column}": ${problem}; got "${d.length}"`;
  }
  if (d.default !== undefined && d.default !== '' && rule.base !== 'STRING' && !/^[-+]?[\w.:\s-]+$/.test(d.default)) {
    return `column "${column}": default ${JSON.stringify(d.default)} is not a ${d.type.toUpperCase()} literal`;
  }
  return undefined;
}

export function baseTypeOf(d: ColumnDefinition): BaseType {
  return COLUMN_TYPES[d.type.toUpperCase()]!.base;
}

/** The DuckDB column type of a (validated) definition. */
export function duckdbType(d: ColumnDefinition): string {
  return COLUMN_TYPES[d.type.toUpperCase()]!.duckdb(d.length || undefined);
}

function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** `"col" TYPE [NOT NULL] [DEFAULT …]` for CREATE TABLE. */
export function columnSql(name: string, d: ColumnDefinition): string {
  const type = duckdbType(d);
  const parts = [ident(name), type];
  if (!d.nullable) parts.push('NOT NULL');
  if (d.default !== undefined && d.default !== '') parts.push(`DEFAULT CAST(${literal(d.default)} AS ${type})`);
  return parts.join(' ');
}

/**
 * The CSV string of column `name` as its typed value: strings stay as they are; in other types an empty string is
 * NULL (a CSV has no other way to say it).
 */
export function castSql(name: string, d: ColumnDefinition): string {
  const type = duckdbType(d);
  if (baseTypeOf(d) === 'STRING') return ident(name);
  return `CAST(NULLIF(${ident(name)}, '') AS ${type})`;
}

/**
 * A condition true for the staged rows whose value of `name` does not fit the definition: no conversion to the type,
 * longer than the length, or no value in a column that is not nullable.
 */
export function misfitSql(name: string, d: ColumnDefinition): string {
  const col = ident(name);
  const conditions: string[] = [];
  if (baseTypeOf(d) === 'STRING') {
    if (d.length) conditions.push(`length(${col}) > ${Number(d.length)}`);
    if (!d.nullable) conditions.push(`${col} IS NULL`);
  } else {
    conditions.push(`(NULLIF(${col}, '') IS NOT NULL AND TRY_CAST(${col} AS ${duckdbType(d)}) IS NULL)`);
    if (!d.nullable) conditions.push(`NULLIF(${col}, '') IS NULL`);
  }
  return conditions.length ? conditions.join(' OR ') : 'FALSE';
}

/** Why a value does not fit (for the job's message). */
export function misfitReason(value: string | null, d: ColumnDefinition): string {
  const type = `${d.type.toUpperCase()}${d.length ? `(${d.length})` : ''}`;
  if (value === null || (value === '' && baseTypeOf(d) !== 'STRING')) return `column is not nullable (${type}) and the value is empty`;
  if (baseTypeOf(d) === 'STRING' && d.length && value.length > Number(d.length)) return `value is ${value.length} characters long, longer than ${type} allows`;
  return `value ${JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value)} is not a valid ${type}`;
}

/** The `KBC.datatype.*` metadata the service writes (provider `storage`) for a typed column. */
export function datatypeMetadata(d: ColumnDefinition): { key: string; value: string }[] {
  const out = [
    { key: 'KBC.datatype.type', value: d.type.toUpperCase() },
    { key: 'KBC.datatype.nullable', value: d.nullable ? '1' : '' },
    { key: 'KBC.datatype.basetype', value: baseTypeOf(d) },
  ];
  if (d.length) out.push({ key: 'KBC.datatype.length', value: d.length });
  if (d.default !== undefined && d.default !== '') out.push({ key: 'KBC.datatype.default', value: d.default });
  return out;
}
