import { createBucket, createTable, expectSuccess, importTable, useMemoryEmulator, waitForJob } from '../../../harness/emulator-api';

describe('table data preview', () => {
  const env = useMemoryEmulator();
  const tableId = 'in.c-preview.cities';

  beforeAll(async () => {
    await createBucket(env.api, 'preview');
    expectSuccess(await createTable(env.api, 'in.c-preview', 'cities', 'id,name,country\n1,Prague,CZ\n2,"Brno, South",CZ\n3,Vienna,AT\n4,"Say ""hi""",SK\n'));
  });

  test('data-preview answers the table as CSV, header first, every value enclosed, in table order', async () => {
    const res = await env.api('GET', `/tables/${tableId}/data-preview`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.body).toBe('"id","name","country"\n"1","Prague","CZ"\n"2","Brno, South","CZ"\n"3","Vienna","AT"\n"4","Say ""hi""","SK"\n');
  });

  test('limit, columns and whereFilters select the rows and columns', async () => {
    expect((await env.api('GET', `/tables/${tableId}/data-preview?limit=2&columns=name,id`)).body).toBe('"name","id"\n"Prague","1"\n"Brno, South","2"\n');
    const filtered = await env.api(
      'GET',
      `/tables/${tableId}/data-preview?whereFilters[0][column]=country&whereFilters[0][operator]=eq&whereFilters[0][values][0]=CZ&whereFilters[0][values][1]=SK&columns=id`,
    );
    expect(filtered.body).toBe('"id"\n"1"\n"2"\n"4"\n');
    const numeric = await env.api(
      'GET',
      `/tables/${tableId}/data-preview?whereFilters[0][column]=id&whereFilters[0][operator]=ge&whereFilters[0][values][0]=3&whereFilters[0][dataType]=INTEGER&columns=name`,
    );
    expect(numeric.body).toBe('"name"\n"Vienna"\n"Say ""hi"""\n');
    expect((await env.api('GET', `/tables/${tableId}/data-preview?whereColumn=country&whereValues[]=AT&columns=name`)).body).toBe('"name"\n"Vienna"\n');
  });

  test('format=json answers columns and rows of {columnName, value, isTruncated}', async () => {
    const res = await env.api('GET', `/tables/${tableId}/data-preview?format=json&limit=1`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      columns: ['id', 'name', 'country'],
      rows: [
        [
          { columnName: 'id', value: '1', isTruncated: false },
          { columnName: 'name', value: 'Prague', isTruncated: false },
          { columnName: 'country', value: 'CZ', isTruncated: false },
        ],
      ],
    });
  });

  test('a typed table previews its values as text', async () => {
    const created = await env.api('POST', '/buckets/in.c-preview/tables-definition', {
      json: {
        name: 'typed',
        columns: [
          { name: 'n', definition: { type: 'NUMBER', length: '6,2' } },
          { name: 'd', definition: { type: 'DATE' } },
        ],
      },
    });
    expectSuccess(await waitForJob(env.api, created.body.id));
    expectSuccess(await importTable(env.api, 'in.c-preview.typed', 'n,d\n1.5,2024-02-29\n,\n'));
    expect((await env.api('GET', '/tables/in.c-preview.typed/data-preview')).body).toBe('"n","d"\n"1.50","2024-02-29"\n"",""\n');
  });

  test('an unknown column, a limit above 1000 or an unknown format is refused with 400 naming it', async () => {
    const column = await env.api('GET', `/tables/${tableId}/data-preview?columns=nope`);
    expect(column.status).toBe(400);
    expect(column.body).toMatchObject({
      code: 'storage.tables.columnNotFound',
      error: 'columns: column "nope" is not in table in.c-preview.cities (columns: id, name, country)',
    });
    const limit = await env.api('GET', `/tables/${tableId}/data-preview?limit=1001`);
    expect(limit.status).toBe(400);
    expect(limit.body.error).toBe('limit must be an integer 0–1000; got "1001"');
    expect((await env.api('GET', `/tables/${tableId}/data-preview?format=xml`)).status).toBe(400);
  });

  test('previewing needs read on the bucket (403 without it) and an existing table (404)', async () => {
    await createBucket(env.api, 'other');
    const stranger = (await env.api('POST', '/tokens', { json: { description: 'stranger', bucketPermissions: { 'in.c-other': 'read' } } })).body.token;
    const denied = await env.api('GET', `/tables/${tableId}/data-preview`, { token: stranger });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toContain('previewing a table needs read permission on bucket in.c-preview');
    expect((await env.api('GET', '/tables/in.c-preview.none/data-preview')).status).toBe(404);
  });
});
