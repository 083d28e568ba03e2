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
/** Timestamps take a fractional-seconds precision as their length (Snowflake reports `9`). */
const timestamp = (type: string): TypeRule => ({
  base: 'TIMESTAMP',
  duckdb: () => type,
  length: (l) => (/^\d$/.test(l) ? undefined : 'length must be a precision 0–9'),
});

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
  DATETIME: timestamp('TIMESTAMP'),
  TIMESTAMP: timestamp('TIMESTAMP'),
  TIMESTAMP_NTZ: timestamp('TIMESTAMP'),
  TIMESTAMP_LTZ: timestamp('TIMESTAMPTZ'),
  TIMESTAMP_TZ: timestamp('TIMESTAMPTZ'),
  // BigQuery's names.
  INT64: fixed('INTEGER', 'BIGINT'),
  FLOAT64: fixed('FLOAT', 'DOUBLE'),
  BOOL: fixed('BOOLEAN', 'BOOLEAN'),
  BIGNUMERIC: decimal,
  BYTEINT: fixed('INTEGER', 'TINYINT'),
};

/** Snowflake's longest VARCHAR, the length it reports for a VARCHAR given without one. */
const SNOWFLAKE_MAX_VARCHAR = String(MAX_VARCHAR);

/**
 * A checked definition as the stack reports it back (its table detail and `KBC.datatype.*` metadata): the backend's
 * own type name and length, like the service's Snowflake stacks (INT → NUMBER "38,0", VARCHAR → VARCHAR "16777216",
 * NUMBER "37" → NUMBER "37,0", TIMESTAMP → TIMESTAMP_NTZ "9") and BigQuery stacks (INT64 → INTEGER, BOOLEAN → BOOL,
 * FLOAT → FLOAT64; no lengths unless given). `numericScale` is the scale of a NUMBER given without a length (the
 * service gives a NUMERIC basetype 9, a NUMBER type 0).
 */
export function backendDefinition(d: ColumnDefinition, backend: 'snowflake' | 'bigquery', numericScale = 0): ColumnDefinition {
  const t = d.type.toUpperCase();
  const base = COLUMN_TYPES[t]!.base;
  const keep = { nullable: d.nullable, ...(d.default !== undefined ? { default: d.default } : {}) };
  const withLength = (type: string, length: string | undefined): ColumnDefinition => ({ type, ...keep, ...(length ? { length } : {}) });
  if (backend === 'bigquery') {
    switch (base) {
      case 'INTEGER':
        return withLength('INTEGER', undefined);
      case 'NUMERIC':
        return withLength(t === 'BIGNUMERIC' ? 'BIGNUMERIC' : 'NUMERIC', d.length);
      case 'STRING':
        return withLength('STRING', d.length);
      case 'FLOAT':
        return withLength('FLOAT64', undefined);
      case 'BOOLEAN':
        return withLength('BOOL', undefined);
      case 'DATE':
        return withLength('DATE', undefined);
      case 'TIMESTAMP':
        return withLength(t === 'DATETIME' ? 'DATETIME' : 'TIMESTAMP', undefined);
    }
  }
  switch (base) {
    case 'INTEGER':
      return withLength('NUMBER', '38,0');
    case 'NUMERIC': {
      const [p, sc] = (d.length ?? `38,${numericScale}`).split(',').map((x) => Number(x.trim()));
      return withLength('NUMBER', `${p},${sc ?? 0}`);
    }
    case 'STRING':
      return withLength('VARCHAR', d.length ?? (t === 'CHAR' || t === 'CHARACTER' ? '1' : SNOWFLAKE_MAX_VARCHAR));
    case 'FLOAT':
      return withLength('FLOAT', undefined);
    case 'BOOLEAN':
    case 'DATE':
      return withLength(base, undefined);
    case 'TIMESTAMP':
      return withLength(t === 'TIMESTAMP_LTZ' || t === 'TIMESTAMP_TZ' ? t : 'TIMESTAMP_NTZ', d.length ?? '9');
  }
}

/**
 * The base type the service reports for a column given as `given` (before {@link backendDefinition}), Keboola's
 * datatype rules: only the INT family (`INT`, `INTEGER`, `BIGINT`, `SMALLINT`, `TINYINT`, `BYTEINT`, `INT64`) is
 * INTEGER; `NUMBER`/`NUMERIC`/`DECIMAL` of any precision and scale is NUMERIC, although a Snowflake stack stores both
 * as a NUMBER.
 */
export function givenBaseType(given: ColumnDefinition): BaseType {
  return baseTypeOf(given);
}

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

/** The `KBC.datatype.*` metadata the service writes (provider `storage`) for a typed column of base type `basetype`. */
export function datatypeMetadata(d: ColumnDefinition, basetype: string = baseTypeOf(d)): { key: string; value: string }[] {
  const out = [
    { key: 'KBC.datatype.type', value: d.type.toUpperCase() },
    { key: 'KBC.datatype.nullable', value: d.nullable ? '1' : '' },
    { key: 'KBC.datatype.basetype', value: basetype },
  ];
  if (d.length) out.push({ key: 'KBC.datatype.length', value: d.length });
  if (d.default !== undefined && d.default !== '') out.push({ key: 'KBC.datatype.default', value: d.default });
  return out;
}
