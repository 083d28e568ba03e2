import { createEmulator } from '../../../../src/emulator';
import {
  type Client,
  type Json,
  client,
  createBucket,
  memoryEmulatorOptions,
  expectSuccess,
  importTable,
  useMemoryEmulator,
  waitForJob,
} from '../../../harness/emulator-api';

/** Creates a table with `tables-definition` and returns its detail. */
async function define(api: Client, bucketId: string, body: Record<string, unknown>): Promise<Json> {
  const res = await api('POST', `/buckets/${bucketId}/tables-definition`, { json: body });
  expect(res.status).toBe(202);
  expectSuccess(await waitForJob(api, res.body.id));
  return (await api('GET', `/tables/${bucketId}.${body.name as string}`)).body;
}

const ALL_TYPES = {
  name: 'all_types',
  primaryKeysNames: ['i'],
  columns: [
    { name: 'i', definition: { type: 'INT', nullable: false } },
    { name: 's', definition: { type: 'STRING' } },
    { name: 'n37', definition: { type: 'NUMBER', length: '37' } },
    { name: 'd', definition: { type: 'DECIMAL', length: '4,3' } },
    { name: 'f', definition: { type: 'DOUBLE' } },
    { name: 'b', definition: { type: 'BOOLEAN' } },
    { name: 'dt', definition: { type: 'DATE' } },
    { name: 'ts', definition: { type: 'TIMESTAMP' } },
    { name: 'c', definition: { type: 'CHAR' } },
  ],
};

/** `[name, type, length, basetype]` of a table detail's definition. */
const typesOf = (detail: Json): unknown[][] => detail.definition.columns.map((c: Json) => [c.name, c.definition.type, c.definition.length, c.basetype]);

describe('tables-definition types as the stack answers them', () => {
  const env = useMemoryEmulator();
  let bucketId: string;
  beforeAll(async () => {
    bucketId = await createBucket(env.api, 'deftypes');
  });

  test('a Snowflake stack (the default) answers its own types: INT is NUMBER "38,0", STRING VARCHAR "16777216", NUMBER "37" is "37,0", TIMESTAMP TIMESTAMP_NTZ "9"; only the INT family has basetype INTEGER, a NUMBER is NUMERIC (issue 39)', async () => {
    const detail = await define(env.api, bucketId, ALL_TYPES);
    expect(typesOf(detail)).toEqual([
      ['i', 'NUMBER', '38,0', 'INTEGER'],
      ['s', 'VARCHAR', '16777216', 'STRING'],
      ['n37', 'NUMBER', '37,0', 'NUMERIC'],
      ['d', 'NUMBER', '4,3', 'NUMERIC'],
      ['f', 'FLOAT', undefined, 'FLOAT'],
      ['b', 'BOOLEAN', undefined, 'BOOLEAN'],
      ['dt', 'DATE', undefined, 'DATE'],
      ['ts', 'TIMESTAMP_NTZ', '9', 'TIMESTAMP'],
      ['c', 'VARCHAR', '1', 'STRING'],
    ]);
    expect(detail.definition.columns[0]).toEqual({
      name: 'i',
      definition: { type: 'NUMBER', nullable: false, length: '38,0' },
      basetype: 'INTEGER',
      canBeFiltered: true,
    });
    const metadata = Object.fromEntries(detail.columnMetadata.n37.map((m: Json) => [m.key, m.value]));
    expect(metadata).toEqual({
      'KBC.datatype.type': 'NUMBER',
      'KBC.datatype.nullable': '1',
      'KBC.datatype.basetype': 'NUMERIC',
      'KBC.datatype.length': '37,0',
    });
    expect(Object.fromEntries(detail.columnMetadata.i.map((m: Json) => [m.key, m.value]))['KBC.datatype.basetype']).toBe('INTEGER');
    const job = expectSuccess(
      await importTable(env.api, `${bucketId}.all_types`, 'i,s,n37,d,f,b,dt,ts,c\n1,x,5,1.5,2.5,true,2024-01-02,2024-01-02 03:04:05,y\n'),
    );
    expect(job.results.importedRowsCount).toBe(1);
    expect((await env.emulator.readTable(`${bucketId}.all_types`)).rows[0]!.slice(0, 4)).toEqual(['1', 'x', '5', '1.500']);
  });

  test('NUMBER of any precision and scale is NUMERIC, also "38,0" and without a length; the INT family (and basetype INTEGER) is INTEGER', async () => {
    const detail = await define(env.api, bucketId, {
      name: 'numbers',
      columns: [
        { name: 'n', definition: { type: 'NUMBER' } },
        { name: 'n380', definition: { type: 'NUMBER', length: '38,0' } },
        { name: 'num', definition: { type: 'NUMERIC', length: '10' } },
        { name: 'big', definition: { type: 'BIGINT' } },
        { name: 'small', definition: { type: 'SMALLINT' } },
        { name: 'byte', definition: { type: 'BYTEINT' } },
        { name: 'viaBase', basetype: 'INTEGER' },
        { name: 'numBase', basetype: 'NUMERIC' },
      ],
    });
    expect(typesOf(detail)).toEqual([
      ['n', 'NUMBER', '38,0', 'NUMERIC'],
      ['n380', 'NUMBER', '38,0', 'NUMERIC'],
      ['num', 'NUMBER', '10,0', 'NUMERIC'],
      ['big', 'NUMBER', '38,0', 'INTEGER'],
      ['small', 'NUMBER', '38,0', 'INTEGER'],
      ['byte', 'NUMBER', '38,0', 'INTEGER'],
      ['viaBase', 'NUMBER', '38,0', 'INTEGER'],
      ['numBase', 'NUMBER', '38,9', 'NUMERIC'],
    ]);
  });

  test('columns without a type are accepted: with none typed the table is not typed, among typed ones such a column is a VARCHAR', async () => {
    const untyped = await define(env.api, bucketId, {
      name: 'untyped',
      columns: [{ name: 'a' }, { name: 'b', definition: { nullable: true } }],
      primaryKeysNames: ['a'],
    });
    expect(untyped).toMatchObject({ isTyped: false, columns: ['a', 'b'] });
    // the definition of an untyped table, as the service now sends it: the key, and each column with an empty definition
    expect(untyped.definition).toEqual({
      primaryKeysNames: ['a'],
      columns: [
        { name: 'a', definition: {} },
        { name: 'b', definition: {} },
      ],
    });
    expectSuccess(await importTable(env.api, `${bucketId}.untyped`, 'a,b\nx,y\n'));
    expect((await env.emulator.readTable(`${bucketId}.untyped`)).rows).toEqual([['x', 'y']]);
    const mixed = await define(env.api, bucketId, { name: 'mixed', columns: [{ name: 'id', definition: { type: 'INT' } }, { name: 'note' }] });
    expect(typesOf(mixed)).toEqual([
      ['id', 'NUMBER', '38,0', 'INTEGER'],
      ['note', 'VARCHAR', '16777216', 'STRING'],
    ]);
  });

  test("a BigQuery stack answers BigQuery's types: INT64 is INTEGER, BOOLEAN BOOL, FLOAT FLOAT64, no lengths unless given", async () => {
    const emulator = await createEmulator(memoryEmulatorOptions({ tableBackend: 'bigquery' }));
    try {
      const api = client(emulator);
      const bucket = await createBucket(api, 'bq');
      const detail = await define(api, bucket, {
        name: 'bq',
        primaryKeysNames: ['id'],
        columns: [
          { name: 'id', definition: { type: 'INT64', nullable: false } },
          { name: 'name', definition: { type: 'STRING' } },
          { name: 'flag', basetype: 'BOOLEAN' },
          { name: 'ratio', basetype: 'FLOAT' },
          { name: 'amount', definition: { type: 'NUMERIC', length: '10,2' } },
          { name: 'at', basetype: 'TIMESTAMP' },
        ],
      });
      expect(typesOf(detail)).toEqual([
        ['id', 'INTEGER', undefined, 'INTEGER'],
        ['name', 'STRING', undefined, 'STRING'],
        ['flag', 'BOOL', undefined, 'BOOLEAN'],
        ['ratio', 'FLOAT64', undefined, 'FLOAT'],
        ['amount', 'NUMERIC', '10,2', 'NUMERIC'],
        ['at', 'TIMESTAMP', undefined, 'TIMESTAMP'],
      ]);
      expect(detail.definition.columns[0]).toEqual({ name: 'id', definition: { type: 'INTEGER', nullable: false }, basetype: 'INTEGER', canBeFiltered: true });
    } finally {
      await emulator.close();
    }
  });
});
