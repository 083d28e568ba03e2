import {
  backendDefinition,
  baseTypeOf,
  castSql,
  columnSql,
  datatypeMetadata,
  definitionProblem,
  duckdbType,
  givenBaseType,
  misfitReason,
} from '../../../src/emulator/column-types';

describe('typed column definitions', () => {
  test('each accepted type maps to a DuckDB type and a Keboola base type', () => {
    const cases: [string, string | undefined, string, string][] = [
      ['VARCHAR', '10', 'VARCHAR', 'STRING'],
      ['string', undefined, 'VARCHAR', 'STRING'],
      ['NUMBER', '10,2', 'DECIMAL(10,2)', 'NUMERIC'],
      ['NUMERIC', undefined, 'DECIMAL(38,0)', 'NUMERIC'],
      ['INTEGER', undefined, 'BIGINT', 'INTEGER'],
      ['FLOAT', undefined, 'DOUBLE', 'FLOAT'],
      ['BOOLEAN', undefined, 'BOOLEAN', 'BOOLEAN'],
      ['DATE', undefined, 'DATE', 'DATE'],
      ['TIMESTAMP_NTZ', undefined, 'TIMESTAMP', 'TIMESTAMP'],
      ['TIMESTAMP_TZ', undefined, 'TIMESTAMPTZ', 'TIMESTAMP'],
    ];
    for (const [type, length, duckdb, base] of cases) {
      const d = { type, length, nullable: true };
      expect(definitionProblem('c', d)).toBeUndefined();
      expect(duckdbType(d)).toBe(duckdb);
      expect(baseTypeOf(d)).toBe(base);
    }
  });

  test('an unknown type, a length a type does not take, or a bad precision is described with the column', () => {
    expect(definitionProblem('a', { type: 'BLOB', nullable: true })).toMatch(/^column "a": type "BLOB" is not supported; use one of VARCHAR, /);
    expect(definitionProblem('a', { type: 'INTEGER', length: '5', nullable: true })).toBe('column "a": type INTEGER takes no length; got "5"');
    expect(definitionProblem('a', { type: 'NUMBER', length: '5,7', nullable: true })).toBe(
      'column "a": precision must be 1–38 and scale at most the precision; got "5,7"',
    );
    expect(definitionProblem('a', { type: 'NUMBER', length: 'x', nullable: true })).toBe(
      'column "a": length must be "precision" or "precision,scale", e.g. "10,2"; got "x"',
    );
    expect(definitionProblem('a', { type: 'VARCHAR', length: '0', nullable: true })).toBe('column "a": length must be an integer 1–16777216; got "0"');
  });

  test('CREATE TABLE column SQL carries NOT NULL and a typed default', () => {
    expect(columnSql('n', { type: 'NUMBER', length: '5,2', nullable: false, default: '0' })).toBe(
      `"n" DECIMAL(5,2) NOT NULL DEFAULT CAST('0' AS DECIMAL(5,2))`,
    );
    expect(columnSql('s', { type: 'VARCHAR', nullable: true })).toBe('"s" VARCHAR');
  });

  test('an empty CSV value is NULL in non-string columns and stays empty in string columns', () => {
    expect(castSql('d', { type: 'DATE', nullable: true })).toBe(`CAST(NULLIF("d", '') AS DATE)`);
    expect(castSql('s', { type: 'VARCHAR', nullable: true })).toBe('"s"');
  });

  test('the reason a value does not fit names the type and the value', () => {
    expect(misfitReason('abc', { type: 'integer', nullable: true })).toBe('value "abc" is not a valid INTEGER');
    expect(misfitReason('', { type: 'DATE', nullable: false })).toBe('column is not nullable (DATE) and the value is empty');
    expect(misfitReason('abcdef', { type: 'VARCHAR', length: '3', nullable: true })).toBe('value is 6 characters long, longer than VARCHAR(3) allows');
    expect(misfitReason('x'.repeat(150), { type: 'DATE', nullable: true })).toBe(`value "${'x'.repeat(100)}…" is not a valid DATE`);
  });

  test('KBC.datatype.* metadata lists type, nullable ("1" or ""), basetype, then length and default when given', () => {
    expect(datatypeMetadata({ type: 'number', length: '10,2', nullable: true, default: '1' })).toEqual([
      { key: 'KBC.datatype.type', value: 'NUMBER' },
      { key: 'KBC.datatype.nullable', value: '1' },
      { key: 'KBC.datatype.basetype', value: 'NUMERIC' },
      { key: 'KBC.datatype.length', value: '10,2' },
      { key: 'KBC.datatype.default', value: '1' },
    ]);
    expect(datatypeMetadata({ type: 'DATE', nullable: false })).toEqual([
      { key: 'KBC.datatype.type', value: 'DATE' },
      { key: 'KBC.datatype.nullable', value: '' },
      { key: 'KBC.datatype.basetype', value: 'DATE' },
    ]);
  });

  test('only the INT family has basetype INTEGER; NUMBER/NUMERIC/DECIMAL of any scale is NUMERIC, though Snowflake stores both as NUMBER (issue 39)', () => {
    for (const type of ['INT', 'INTEGER', 'BIGINT', 'SMALLINT', 'TINYINT', 'BYTEINT', 'INT64'])
      expect([type, givenBaseType({ type, nullable: true })]).toEqual([type, 'INTEGER']);
    for (const [type, length] of [
      ['NUMBER', '37'],
      ['NUMBER', '38,0'],
      ['NUMBER', undefined],
      ['DECIMAL', '4,3'],
      ['NUMERIC', '10'],
    ] as const) {
      expect([type, length, givenBaseType({ type, nullable: true, ...(length ? { length } : {}) })]).toEqual([type, length, 'NUMERIC']);
    }
    const int = { type: 'INT', nullable: false };
    const stored = backendDefinition(int, 'snowflake');
    expect(stored).toEqual({ type: 'NUMBER', length: '38,0', nullable: false });
    expect(datatypeMetadata(stored, givenBaseType(int))).toContainEqual({ key: 'KBC.datatype.basetype', value: 'INTEGER' });
    expect(datatypeMetadata(backendDefinition({ type: 'NUMBER', length: '37', nullable: true }, 'snowflake'))).toContainEqual({
      key: 'KBC.datatype.basetype',
      value: 'NUMERIC',
    });
  });
});
