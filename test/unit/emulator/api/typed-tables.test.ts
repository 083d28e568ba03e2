import { createBucket, createTable, expectSuccess, importTable, useMemoryEmulator, waitForJob, type Client, type Json } from '../../../harness/emulator-api';

/** Exports a table through export-async and returns the CSV text of its (unsliced) file. */
async function exportCsv(api: Client, tableId: string): Promise<string> {
  const started = await api('POST', `/tables/${tableId}/export-async`, { json: {} });
  const job = expectSuccess(await waitForJob(api, started.body.id));
  const file = await api('GET', `/files/${job.results.file.id}`);
  const res = await fetch(file.body.url);
  return res.text();
}

const PEOPLE = {
  name: 'people',
  primaryKeysNames: ['id'],
  columns: [
    { name: 'id', definition: { type: 'INTEGER', nullable: false } },
    { name: 'name', definition: { type: 'VARCHAR', length: '10', nullable: true } },
    { name: 'score', definition: { type: 'NUMBER', length: '5,2', nullable: true, default: '0' } },
    { name: 'born', definition: { type: 'DATE', nullable: true } },
    { name: 'active', definition: { type: 'BOOLEAN', nullable: true } },
  ],
};

describe('typed tables (tables-definition)', () => {
  // Exports read back as one file with a header (slicedExports: false); slicing is tested in sliced-exports.test.ts.
  const env = useMemoryEmulator({ slicedExports: false });
  let bucketId: string;
  let created: Json;

  beforeAll(async () => {
    bucketId = await createBucket(env.api, 'typed');
    const res = await env.api('POST', `/buckets/${bucketId}/tables-definition`, { json: PEOPLE });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'waiting', operationName: 'tableDefinitionCreate', tableId: `${bucketId}.people` });
    created = expectSuccess(await waitForJob(env.api, res.body.id));
  });

  test('tables-definition answers 202 with a job whose results are the new typed, empty table', () => {
    expect(created.results).toMatchObject({
      id: 'in.c-typed.people',
      name: 'people',
      isTyped: true,
      rowsCount: 0,
      primaryKey: ['id'],
      columns: ['id', 'name', 'score', 'born', 'active'],
    });
  });

  test('table detail reports isTyped, the definition with base types and KBC.datatype.* column metadata of provider storage', async () => {
    const res = await env.api('GET', `/tables/${bucketId}.people`);
    expect(res.status).toBe(200);
    expect(res.body.isTyped).toBe(true);
    expect(res.body.definition).toEqual({
      primaryKeysNames: ['id'],
      columns: [
        // As a Snowflake stack reports them: INTEGER is NUMBER "38,0".
        { name: 'id', definition: { type: 'NUMBER', length: '38,0', nullable: false }, basetype: 'INTEGER', canBeFiltered: true },
        { name: 'name', definition: { type: 'VARCHAR', length: '10', nullable: true }, basetype: 'STRING', canBeFiltered: true },
        { name: 'score', definition: { type: 'NUMBER', length: '5,2', nullable: true, default: '0' }, basetype: 'NUMERIC', canBeFiltered: true },
        { name: 'born', definition: { type: 'DATE', nullable: true }, basetype: 'DATE', canBeFiltered: true },
        { name: 'active', definition: { type: 'BOOLEAN', nullable: true }, basetype: 'BOOLEAN', canBeFiltered: true },
      ],
    });
    const score = res.body.columnMetadata.score as Json[];
    expect(score.map((m: Json) => [m.key, m.value, m.provider])).toEqual([
      ['KBC.datatype.type', 'NUMBER', 'storage'],
      ['KBC.datatype.nullable', '1', 'storage'],
      ['KBC.datatype.basetype', 'NUMERIC', 'storage'],
      ['KBC.datatype.length', '5,2', 'storage'],
      ['KBC.datatype.default', '0', 'storage'],
    ]);
    expect(score[0]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      key: 'KBC.datatype.type',
      value: 'NUMBER',
      provider: 'storage',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/),
    });
    expect(res.body.columnMetadata.id.find((m: Json) => m.key === 'KBC.datatype.nullable').value).toBe('');
    const column = await env.api('GET', `/columns/${bucketId}.people.born/metadata`);
    expect(column.body.map((m: Json) => m.key)).toEqual(['KBC.datatype.type', 'KBC.datatype.nullable', 'KBC.datatype.basetype']);
  });

  test('a load that fits the types is stored typed and exported back as text', async () => {
    const job = expectSuccess(
      await importTable(env.api, `${bucketId}.people`, 'id,name,score,born,active\n1,Ann,12.5,1990-05-01,true\n2,Bob,,,false\n3,,-3.25,2001-12-31,\n'),
    );
    expect(job.results).toMatchObject({ importedRowsCount: 3, totalRowsCount: 3 });
    expect(await env.emulator.readTable(`${bucketId}.people`)).toEqual({
      columns: ['id', 'name', 'score', 'born', 'active'],
      rows: [
        ['1', 'Ann', '12.50', '1990-05-01', 'true'],
        ['2', 'Bob', '', '', 'false'],
        ['3', '', '-3.25', '2001-12-31', ''],
      ],
    });
    expect(await exportCsv(env.api, `${bucketId}.people`)).toBe(
      '"id","name","score","born","active"\n"1","Ann","12.50","1990-05-01","true"\n"2","Bob","","","false"\n"3","","-3.25","2001-12-31",""\n',
    );
  });

  test('an incremental load into a typed table replaces rows by primary key', async () => {
    expectSuccess(await importTable(env.api, `${bucketId}.people`, 'id,name,score,born,active\n2,Bobby,1,,true\n4,Dan,0.5,,\n', { incremental: 1 }));
    const data = await env.emulator.readTable(`${bucketId}.people`);
    expect(data.rows.map((r) => r.slice(0, 2))).toEqual([
      ['1', 'Ann'],
      ['3', ''],
      ['2', 'Bobby'],
      ['4', 'Dan'],
    ]);
    expect((await env.api('GET', `/tables/${bucketId}.people`)).body.rowsCount).toBe(4);
  });

  test.each([
    [
      'a value that is not a number',
      'id,name,score,born,active\n5,Eve,1,,\n6,Fay,abc,,\n',
      'column "score", row 2 of file',
      'value "abc" is not a valid NUMBER(5,2)',
    ],
    [
      'a number too large for the precision',
      'id,name,score,born,active\n5,Eve,12345.6,,\n',
      'column "score", row 1 of file',
      'value "12345.6" is not a valid NUMBER(5,2)',
    ],
    [
      'a string longer than the length',
      'id,name,score,born,active\n5,Evangeline Smith,1,,\n',
      'column "name", row 1 of file',
      'value is 16 characters long, longer than VARCHAR(10) allows',
    ],
    [
      'an empty value in a column that is not nullable',
      'id,name,score,born,active\n,Eve,1,,\n',
      'column "id", row 1 of file',
      'column is not nullable (NUMBER(38,0)) and the value is empty',
    ],
    ['a date that is not a date', 'id,name,score,born,active\n5,Eve,1,1990-02-30,\n', 'column "born", row 1 of file', 'value "1990-02-30" is not a valid DATE'],
  ])('a load with %s fails the job with the column, row and value, and loads nothing', async (_what, csv, where, reason) => {
    const before = await env.emulator.readTable(`${bucketId}.people`);
    const job = await importTable(env.api, `${bucketId}.people`, csv, { incremental: 1 });
    expect(job.status).toBe('error');
    expect(job.error.code).toBe('storage.tables.invalidValue');
    expect(job.error.message).toContain(`Load error: ${where}`);
    expect(job.error.message).toContain(`${reason}; nothing was loaded`);
    expect(await env.emulator.readTable(`${bucketId}.people`)).toEqual(before);
  });

  test('a load with a column the typed table does not have fails and loads nothing', async () => {
    const job = await importTable(env.api, `${bucketId}.people`, 'id,name,score,born,active,extra\n9,Ivy,1,,,x\n', { incremental: 1 });
    expect(job.status).toBe('error');
    expect(job.error).toMatchObject({ code: 'storage.tables.columnsNotMatch' });
    expect(job.error.message).toContain('has no column(s) extra');
    expect((await env.api('GET', `/tables/${bucketId}.people`)).body.columns).toEqual(['id', 'name', 'score', 'born', 'active']);
  });

  test('a definition with an unknown type, a bad length or an unknown primary key column is refused with 400 and creates nothing', async () => {
    const cases: [Json, string][] = [
      [{ name: 'bad', columns: [{ name: 'a', definition: { type: 'BLOB' } }] }, 'columns[0]: column "a": type "BLOB" is not supported'],
      [{ name: 'bad', columns: [{ name: 'a', definition: { type: 'NUMBER', length: '50,2' } }] }, 'precision must be 1–38'],
      [{ name: 'bad', columns: [{ name: 'a', definition: { type: 'DATE', length: '3' } }] }, 'type DATE takes no length'],
      [{ name: 'bad', primaryKeysNames: ['b'], columns: [{ name: 'a', definition: { type: 'INTEGER' } }] }, 'primaryKeysNames: b is not among the columns (a)'],
      [{ name: 'bad', columns: [] }, 'columns must list at least one column'],
    ];
    for (const [body, message] of cases) {
      const res = await env.api('POST', `/buckets/${bucketId}/tables-definition`, { json: body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('storage.tables.validation');
      expect(res.body.error).toContain(message);
    }
    expect((await env.api('GET', `/tables/${bucketId}.bad`)).status).toBe(404);
  });

  test('a column given by basetype alone gets the matching type', async () => {
    const res = await env.api('POST', `/buckets/${bucketId}/tables-definition`, {
      json: {
        name: 'bybase',
        columns: [
          { name: 'n', basetype: 'NUMERIC' },
          { name: 's', basetype: 'STRING' },
        ],
      },
    });
    const job = expectSuccess(await waitForJob(env.api, res.body.id));
    expect(job.results.definition.columns).toEqual([
      { name: 'n', definition: { type: 'NUMBER', length: '38,9', nullable: true }, basetype: 'NUMERIC', canBeFiltered: true },
      { name: 's', definition: { type: 'VARCHAR', length: '16777216', nullable: true }, basetype: 'STRING', canBeFiltered: true },
    ]);
  });

  test('a second definition of an existing table is refused with 400 storage.tables.alreadyExists', async () => {
    const res = await env.api('POST', `/buckets/${bucketId}/tables-definition`, { json: PEOPLE });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'storage.tables.alreadyExists', error: 'table in.c-typed.people already exists' });
  });

  test('a token with only read on the bucket cannot create a typed table (403) and an untyped table reports isTyped false', async () => {
    const created2 = await env.api('POST', '/tokens', { json: { description: 'reader', bucketPermissions: { [bucketId]: 'read' } } });
    const res = await env.api('POST', `/buckets/${bucketId}/tables-definition`, { json: { ...PEOPLE, name: 'other' }, token: created2.body.token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('accessDenied');
    const plain = expectSuccess(await createTable(env.api, bucketId, 'plain', 'a\n1\n'));
    expect(plain.results.isTyped).toBe(false);
    expect(plain.results.definition).toEqual({ primaryKeysNames: [], columns: [{ name: 'a', definition: {} }] });
    expect((await env.api('GET', `/tables/${bucketId}.plain`)).body.definition).toEqual(plain.results.definition);
    expect(plain.results.columnMetadata).toEqual({});
  });
});
