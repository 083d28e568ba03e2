import { type Client, type Json, createBucket, createTable, expectSuccess, importTable, useMemoryEmulator, waitForJob } from '../../../harness/emulator-api';

/** Starts a job with `method path`, checks the 202 and its operation, and returns the finished job. */
async function runJob(api: Client, method: string, path: string, operationName: string, json?: unknown): Promise<Json> {
  const res = await api(method, path, json === undefined ? {} : { json });
  if (res.status !== 202) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body).toMatchObject({ status: 'waiting', operationName, results: null, error: null });
  return waitForJob(api, res.body.id);
}

/** Exports a table with export-async (one file with a header: slicedExports false) and returns its CSV text. */
async function exportCsv(api: Client, tableId: string): Promise<string> {
  const job = expectSuccess(await runJob(api, 'POST', `/tables/${tableId}/export-async`, 'tableExport', {}));
  const file = await api('GET', `/files/${job.results.file.id}`);
  return (await fetch(file.body.url)).text();
}

/** Issue 39: the operations clients use to change an existing table, with the service's jobs and end states. */
describe('changing tables', () => {
  const env = useMemoryEmulator({ slicedExports: false });

  beforeAll(async () => {
    await createBucket(env.api, 'change');
  });

  describe('asynchronous table delete', () => {
    test('DELETE tables/{id}?async=true answers 202 with a tableDrop job; once it succeeds the table, its data and its metadata are gone', async () => {
      expectSuccess(await createTable(env.api, 'in.c-change', 'gone', 'id,name\n1,a\n'));
      expect(
        (await env.api('POST', '/tables/in.c-change.gone/metadata', { json: { provider: 'user', metadata: [{ key: 'KBC.description', value: 'x' }] } })).status,
      ).toBe(201);
      const res = await env.api('DELETE', '/tables/in.c-change.gone?async=true');
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        id: expect.any(Number),
        status: 'waiting',
        url: `${env.emulator.url}/v2/storage/jobs/${res.body.id}`,
        tableId: 'in.c-change.gone',
        operationName: 'tableDrop',
        operationParams: { force: false },
        results: null,
        creatorToken: { id: 101, description: 'test token' },
      });
      const job = expectSuccess(await waitForJob(env.api, res.body.id));
      expect(job).toMatchObject({ operationName: 'tableDrop', tableId: 'in.c-change.gone', error: null });
      const detail = await env.api('GET', '/tables/in.c-change.gone');
      expect(detail.status).toBe(404);
      expect(detail.body.code).toBe('storage.tables.notFound');
      await expect(env.emulator.readTable('in.c-change.gone')).rejects.toThrow(/not found/);
      const events = (await env.api('GET', '/events?limit=1')).body;
      expect(events.map((e: Json) => [e.event, e.objectId, e.params.operationName])).toEqual([['storage.tableDeleted', 'in.c-change.gone', 'tableDrop']]);
      // a table of the same name starts empty, without the old metadata
      expectSuccess(await createTable(env.api, 'in.c-change', 'gone', 'id\n9\n'));
      expect((await env.api('GET', '/tables/in.c-change.gone')).body).toMatchObject({ columns: ['id'], rowsCount: 1, metadata: [] });
    });

    test('the branch-scoped path, async=1 and force answer the same; a table that is gone is 404 before any job; a bad flag is 400', async () => {
      expectSuccess(await createTable(env.api, 'in.c-change', 'gone2', 'id\n1\n'));
      const res = await env.api('DELETE', '/branch/default/tables/in.c-change.gone2?async=1&force=true');
      expect(res.status).toBe(202);
      expect(res.body.operationParams).toEqual({ force: true });
      expectSuccess(await waitForJob(env.api, res.body.id));
      const again = await env.api('DELETE', '/tables/in.c-change.gone2?async=1');
      expect(again.status).toBe(404);
      expect(again.body.code).toBe('storage.tables.notFound');
      expectSuccess(await createTable(env.api, 'in.c-change', 'kept', 'id\n1\n'));
      const bad = await env.api('DELETE', '/tables/in.c-change.kept?async=maybe');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('async must be a boolean (true, false, 1, 0); got "maybe"');
      expect((await env.api('GET', '/tables/in.c-change.kept')).status).toBe(200);
    });
  });

  describe('add a column', () => {
    test('POST tables/{id}/columns {name} answers 202 with a tableColumnAdd job; existing rows get an empty value and a load then fills the column', async () => {
      expectSuccess(await createTable(env.api, 'in.c-change', 'people', 'id,name\n1,Ann\n2,Bob\n', { primaryKey: 'id' }));
      const res = await env.api('POST', '/tables/in.c-change.people/columns', { json: { name: 'city' } });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        status: 'waiting',
        tableId: 'in.c-change.people',
        operationName: 'tableColumnAdd',
        operationParams: { name: 'city' },
        results: null,
      });
      const job = expectSuccess(await waitForJob(env.api, res.body.id));
      expect(job.results).toMatchObject({ id: 'in.c-change.people', columns: ['id', 'name', 'city'], rowsCount: 2 });
      expect((await env.api('GET', '/tables/in.c-change.people')).body).toMatchObject({
        columns: ['id', 'name', 'city'],
        primaryKey: ['id'],
        rowsCount: 2,
        isTyped: false,
      });
      expect(await env.emulator.readTable('in.c-change.people')).toEqual({
        columns: ['id', 'name', 'city'],
        rows: [
          ['1', 'Ann', ''],
          ['2', 'Bob', ''],
        ],
      });
      expectSuccess(await importTable(env.api, 'in.c-change.people', 'id,name,city\n2,Bob,Brno\n3,Cid,Olomouc\n', { incremental: 1 }));
      expect(await exportCsv(env.api, 'in.c-change.people')).toBe('"id","name","city"\n"1","Ann",""\n"2","Bob","Brno"\n"3","Cid","Olomouc"\n');
      const events = (await env.api('GET', '/events?limit=3')).body.map((e: Json) => e.event);
      expect(events).toContain('storage.tableColumnAdded');
    });

    test("definition.description on an untyped table becomes the column's KBC.description; the form-encoded body works too", async () => {
      expectSuccess(
        await runJob(env.api, 'POST', '/tables/in.c-change.people/columns', 'tableColumnAdd', { name: 'note', definition: { description: 'free text' } }),
      );
      const detail = (await env.api('GET', '/tables/in.c-change.people')).body;
      expect(detail.columns).toEqual(['id', 'name', 'city', 'note']);
      expect(detail.columnMetadata.note).toEqual([expect.objectContaining({ key: 'KBC.description', value: 'free text', provider: 'user' })]);
      const form = await env.api('POST', '/tables/in.c-change.people/columns', { form: { name: 'extra' } });
      expect(form.status).toBe(202);
      expectSuccess(await waitForJob(env.api, form.body.id));
      expect((await env.api('GET', '/tables/in.c-change.people')).body.columns).toEqual(['id', 'name', 'city', 'note', 'extra']);
    });

    test('an existing column (any case), a bad name and an unknown table are refused before any job; nothing changes', async () => {
      const dup = await env.api('POST', '/tables/in.c-change.people/columns', { json: { name: 'NAME' } });
      expect(dup.status).toBe(400);
      expect(dup.body).toMatchObject({ code: 'storage.tables.validation', error: 'Column "NAME" already exists in table "in.c-change.people".' });
      const bad = await env.api('POST', '/tables/in.c-change.people/columns', { json: { name: 'no spaces' } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('name must be 1-64 letters, digits or underscores (not "_timestamp"); got "no spaces"');
      expect((await env.api('POST', '/tables/in.c-change.nope/columns', { json: { name: 'x' } })).status).toBe(404);
      expect((await env.api('GET', '/tables/in.c-change.people')).body.columns).toEqual(['id', 'name', 'city', 'note', 'extra']);
    });

    test("a typed table takes a typed column (in the backend's type, with its KBC.datatype metadata) and refuses one without a type", async () => {
      const created = await env.api('POST', '/buckets/in.c-change/tables-definition', {
        json: { name: 'typed', primaryKeysNames: ['id'], columns: [{ name: 'id', definition: { type: 'INT', nullable: false } }] },
      });
      expectSuccess(await waitForJob(env.api, created.body.id));
      expectSuccess(await importTable(env.api, 'in.c-change.typed', 'id\n1\n2\n'));
      const untyped = await env.api('POST', '/tables/in.c-change.typed/columns', { json: { name: 'amount' } });
      expect(untyped.status).toBe(400);
      expect(untyped.body.error).toBe('table in.c-change.typed is typed: a new column needs definition.type or basetype');
      const job = expectSuccess(
        await runJob(env.api, 'POST', '/tables/in.c-change.typed/columns', 'tableColumnAdd', {
          name: 'amount',
          definition: { type: 'NUMBER', length: '10,2', default: '0' },
        }),
      );
      expect(job.operationParams).toEqual({
        name: 'amount',
        definition: { type: 'NUMBER', length: '10,2', nullable: true, default: '0' },
        basetype: 'NUMERIC',
      });
      const detail = (await env.api('GET', '/tables/in.c-change.typed')).body;
      expect(detail.definition.columns[1]).toEqual({
        name: 'amount',
        definition: { type: 'NUMBER', length: '10,2', nullable: true, default: '0' },
        basetype: 'NUMERIC',
        canBeFiltered: true,
      });
      expect(detail.columnMetadata.amount.map((m: Json) => [m.key, m.value, m.provider])).toEqual([
        ['KBC.datatype.type', 'NUMBER', 'storage'],
        ['KBC.datatype.nullable', '1', 'storage'],
        ['KBC.datatype.basetype', 'NUMERIC', 'storage'],
        ['KBC.datatype.length', '10,2', 'storage'],
        ['KBC.datatype.default', '0', 'storage'],
      ]);
      expect(await env.emulator.readTable('in.c-change.typed')).toEqual({
        columns: ['id', 'amount'],
        rows: [
          ['1', '0.00'],
          ['2', '0.00'],
        ],
      });
      expectSuccess(await importTable(env.api, 'in.c-change.typed', 'id,amount\n3,12.5\n', { incremental: 1 }));
      expect(await exportCsv(env.api, 'in.c-change.typed')).toBe('"id","amount"\n"1","0.00"\n"2","0.00"\n"3","12.50"\n');
    });
  });

  describe('delete a column', () => {
    test('DELETE tables/{id}/columns/{name} answers 202 with a tableColumnDelete job; the column, its values and its metadata go', async () => {
      const res = await env.api('DELETE', '/tables/in.c-change.people/columns/note');
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ tableId: 'in.c-change.people', operationName: 'tableColumnDelete', operationParams: { name: 'note', force: false } });
      const job = expectSuccess(await waitForJob(env.api, res.body.id));
      expect(job.results.columns).toEqual(['id', 'name', 'city', 'extra']);
      const detail = (await env.api('GET', '/tables/in.c-change.people')).body;
      expect(detail.columns).toEqual(['id', 'name', 'city', 'extra']);
      expect(detail.columnMetadata).toEqual({});
      expect((await env.emulator.readTable('in.c-change.people')).rows).toEqual([
        ['1', 'Ann', '', ''],
        ['2', 'Bob', 'Brno', ''],
        ['3', 'Cid', 'Olomouc', ''],
      ]);
      // a load after it takes the table's new columns
      expectSuccess(await importTable(env.api, 'in.c-change.people', 'id,name,city,extra\n4,Dan,Plzen,x\n', { incremental: 1 }));
      expect((await env.api('GET', '/tables/in.c-change.people')).body.rowsCount).toBe(4);
    });

    test("an unknown column is 404, a primary key column and a typed table's column keep their rules; a typed column can go", async () => {
      const unknown = await env.api('DELETE', '/tables/in.c-change.people/columns/nope');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({
        code: 'storage.tables.columnNotFound',
        error: 'Column "nope" not found in table "in.c-change.people" (columns: id, name, city, extra)',
      });
      const pk = await env.api('DELETE', '/tables/in.c-change.people/columns/id');
      expect(pk.status).toBe(400);
      expect(pk.body.code).toBe('storage.tables.cannotDeletePrimaryKeyColumn');
      expectSuccess(await runJob(env.api, 'DELETE', '/tables/in.c-change.typed/columns/amount', 'tableColumnDelete'));
      const typed = (await env.api('GET', '/tables/in.c-change.typed')).body;
      expect(typed.columns).toEqual(['id']);
      expect(typed.definition.columns.map((c: Json) => c.name)).toEqual(['id']);
      expect(Object.keys(typed.columnMetadata)).toEqual(['id']);
    });
  });

  describe('table update', () => {
    test('PUT tables/{id} {displayName} answers 200 with the table, or with async 202 and a tableUpdate job; a taken or bad display name is 400', async () => {
      const res = await env.api('PUT', '/tables/in.c-change.people', { json: { displayName: 'people-renamed' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: 'in.c-change.people', name: 'people', displayName: 'people-renamed' });
      const job = expectSuccess(await runJob(env.api, 'PUT', '/tables/in.c-change.people?async=1', 'tableUpdate', { displayName: 'people-again' }));
      expect(job.operationParams).toEqual({ displayName: 'people-again' });
      expect((await env.api('GET', '/tables/in.c-change.people')).body.displayName).toBe('people-again');
      const taken = await env.api('PUT', '/tables/in.c-change.people', { json: { displayName: 'typed' } });
      expect([taken.status, taken.body.code]).toEqual([400, 'storage.tables.validation']);
      expect((await env.api('PUT', '/tables/in.c-change.people', { json: { displayName: 'no spaces' } })).status).toBe(400);
      expect((await env.api('PUT', '/tables/in.c-change.people', { json: { displayName: 'people' } })).status).toBe(200);
    });
  });

  describe('primary key', () => {
    test('DELETE tables/{id}/primary-key (tablePrimaryKeyDelete) lets a key column go; POST primary-key (tablePrimaryKeyAdd) checks duplicates unless skipDuplicatesCheck', async () => {
      expectSuccess(await createTable(env.api, 'in.c-change', 'keyed', 'id,v,w\n1,a,x\n2,a,y\n', { primaryKey: 'id' }));
      const removed = await env.api('DELETE', '/tables/in.c-change.keyed/primary-key');
      expect(removed.status).toBe(202);
      expect(removed.body).toMatchObject({ tableId: 'in.c-change.keyed', operationName: 'tablePrimaryKeyDelete', operationParams: {} });
      expectSuccess(await waitForJob(env.api, removed.body.id));
      expect((await env.api('GET', '/tables/in.c-change.keyed')).body).toMatchObject({ primaryKey: [], definition: { primaryKeysNames: [] } });
      expectSuccess(await runJob(env.api, 'DELETE', '/tables/in.c-change.keyed/columns/id', 'tableColumnDelete'));
      const duplicated = await runJob(env.api, 'POST', '/tables/in.c-change.keyed/primary-key', 'tablePrimaryKeyAdd', { columns: ['v'] });
      expect(duplicated).toMatchObject({
        status: 'error',
        operationParams: { columns: ['v'], skipDuplicatesCheck: false },
        error: { code: 'storage.tables.primaryKeyDuplicates' },
      });
      expect((await env.api('GET', '/tables/in.c-change.keyed')).body.primaryKey).toEqual([]);
      expectSuccess(await runJob(env.api, 'POST', '/tables/in.c-change.keyed/primary-key', 'tablePrimaryKeyAdd', { columns: ['w'] }));
      expect((await env.api('GET', '/tables/in.c-change.keyed')).body).toMatchObject({ primaryKey: ['w'], definition: { primaryKeysNames: ['w'] } });
      const again = await runJob(env.api, 'POST', '/tables/in.c-change.keyed/primary-key', 'tablePrimaryKeyAdd', { columns: ['v'], skipDuplicatesCheck: true });
      expect(again).toMatchObject({ status: 'error', error: { code: 'storage.tables.primaryKeyAlreadyExists' } });
      const unknown = await env.api('POST', '/tables/in.c-change.keyed/primary-key', { json: { columns: ['nope'] } });
      expect([unknown.status, unknown.body.code]).toEqual([400, 'storage.tables.columnNotFound']);
      // an incremental load now upserts by the new key
      expectSuccess(await importTable(env.api, 'in.c-change.keyed', 'v,w\nb,y\n', { incremental: 1 }));
      expect((await env.emulator.readTable('in.c-change.keyed')).rows).toEqual([
        ['a', 'x'],
        ['b', 'y'],
      ]);
    });
  });

  describe('delete rows and truncate', () => {
    test('DELETE tables/{id}/rows without a filter is refused unless allowTruncate=1; the truncate job empties the table, which then reloads', async () => {
      expectSuccess(await createTable(env.api, 'in.c-change', 'trunc', 'id,v\n1,a\n2,b\n3,c\n'));
      const refused = await env.api('DELETE', '/tables/in.c-change.trunc/rows');
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('storage.tables.validation');
      expect((await env.api('GET', '/tables/in.c-change.trunc')).body.rowsCount).toBe(3);
      const res = await env.api('DELETE', '/tables/in.c-change.trunc/rows?allowTruncate=1');
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        tableId: 'in.c-change.trunc',
        operationName: 'tableRowsDelete',
        operationParams: { request: { changedSince: null, changedUntil: null, whereFilters: [] }, allowTruncate: true },
      });
      const job = expectSuccess(await waitForJob(env.api, res.body.id));
      expect(job.results).toEqual({ deletedRows: 3 });
      expect((await env.api('GET', '/tables/in.c-change.trunc')).body).toMatchObject({ columns: ['id', 'v'], rowsCount: 0, dataSizeBytes: 0 });
      expect(await env.emulator.readTable('in.c-change.trunc')).toEqual({ columns: ['id', 'v'], rows: [] });
      expectSuccess(await importTable(env.api, 'in.c-change.trunc', 'id,v\n7,x\n8,y\n', { incremental: 1 }));
      expect(await exportCsv(env.api, 'in.c-change.trunc')).toBe('"id","v"\n"7","x"\n"8","y"\n');
    });

    test('whereFilters (JSON body) and the deprecated whereColumn delete only the matching rows', async () => {
      const job = expectSuccess(
        await runJob(env.api, 'DELETE', '/tables/in.c-change.trunc/rows', 'tableRowsDelete', {
          whereFilters: [{ column: 'id', operator: 'eq', values: ['7'] }],
        }),
      );
      expect(job.results).toEqual({ deletedRows: 1 });
      expect((await env.emulator.readTable('in.c-change.trunc')).rows).toEqual([['8', 'y']]);
      // the service refuses `async` here (the delete is always a job)
      const withAsync = await env.api('DELETE', '/tables/in.c-change.trunc/rows?allowTruncate=1&async=true');
      expect([withAsync.status, withAsync.body.code]).toEqual([400, 'storage.validation']);
      const legacy = await env.api('DELETE', '/tables/in.c-change.trunc/rows?whereColumn=v&whereValues[]=nope');
      expect(expectSuccess(await waitForJob(env.api, legacy.body.id)).results).toEqual({ deletedRows: 0 });
      const badColumn = await env.api('DELETE', '/tables/in.c-change.trunc/rows', { json: { whereFilters: [{ column: 'x', values: ['1'] }] } });
      expect(badColumn.status).toBe(400);
      expect(badColumn.body.code).toBe('storage.tables.columnNotFound');
      expect((await env.api('GET', '/tables/in.c-change.trunc')).body.rowsCount).toBe(1);
    });
  });

  describe('definition: display name and descriptions', () => {
    test('PUT branch/default/tables/{id}/definition answers 202 with a tableDefinitionUpdate job; descriptions become KBC.description metadata, null clears them', async () => {
      const res = await env.api('PUT', '/branch/default/tables/in.c-change.people/definition', {
        json: {
          displayName: 'People',
          description: 'Who we know',
          columns: [
            { name: 'name', description: 'first name' },
            { name: 'city', description: 'where they live' },
          ],
        },
      });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        tableId: 'in.c-change.people',
        operationName: 'tableDefinitionUpdate',
        operationParams: {
          tableStringId: 'in.c-change.people',
          displayName: 'People',
          displayNameSet: true,
          description: 'Who we know',
          descriptionSet: true,
          columns: [
            { name: 'name', description: 'first name' },
            { name: 'city', description: 'where they live' },
          ],
        },
      });
      expectSuccess(await waitForJob(env.api, res.body.id));
      const detail = (await env.api('GET', '/tables/in.c-change.people')).body;
      expect(detail.displayName).toBe('People');
      expect(detail.metadata.map((m: Json) => [m.key, m.value, m.provider])).toEqual([['KBC.description', 'Who we know', 'user']]);
      expect(detail.columnMetadata.name.map((m: Json) => [m.key, m.value])).toEqual([['KBC.description', 'first name']]);
      expect(detail.columnMetadata.city.map((m: Json) => [m.key, m.value])).toEqual([['KBC.description', 'where they live']]);
      expectSuccess(
        await runJob(env.api, 'PUT', '/tables/in.c-change.people/definition', 'tableDefinitionUpdate', {
          description: null,
          columns: [{ name: 'city', description: '' }],
        }),
      );
      const cleared = (await env.api('GET', '/tables/in.c-change.people')).body;
      expect(cleared.metadata).toEqual([]);
      expect(Object.keys(cleared.columnMetadata)).toEqual(['name']);
      expect(cleared.displayName).toBe('People');
    });

    test("length, nullable and default only on typed tables (400 otherwise); a typed column's nullability and text length change; an unknown column fails the job", async () => {
      const untyped = await env.api('PUT', '/tables/in.c-change.people/definition', { json: { columns: [{ name: 'name', length: '10' }] } });
      expect(untyped.status).toBe(400);
      expect(untyped.body.code).toBe('storage.tables.validation');
      const created = await env.api('POST', '/buckets/in.c-change/tables-definition', {
        json: {
          name: 'typed2',
          columns: [
            { name: 'id', definition: { type: 'INT', nullable: false } },
            { name: 'label', definition: { type: 'VARCHAR', length: '5' } },
          ],
        },
      });
      expectSuccess(await waitForJob(env.api, created.body.id));
      expectSuccess(
        await runJob(env.api, 'PUT', '/tables/in.c-change.typed2/definition', 'tableDefinitionUpdate', {
          columns: [
            { name: 'id', nullable: true },
            { name: 'label', length: '20', description: 'a label' },
          ],
        }),
      );
      const detail = (await env.api('GET', '/tables/in.c-change.typed2')).body;
      expect(detail.definition.columns.map((c: Json) => [c.name, c.definition])).toEqual([
        ['id', { type: 'NUMBER', length: '38,0', nullable: true }],
        ['label', { type: 'VARCHAR', length: '20', nullable: true }],
      ]);
      expect(detail.columnMetadata.label.map((m: Json) => [m.key, m.value])).toEqual([
        ['KBC.datatype.type', 'VARCHAR'],
        ['KBC.datatype.nullable', '1'],
        ['KBC.datatype.basetype', 'STRING'],
        ['KBC.datatype.length', '20'],
        ['KBC.description', 'a label'],
      ]);
      // a value of the new length now loads
      expectSuccess(await importTable(env.api, 'in.c-change.typed2', 'id,label\n1,twelve chars\n'));
      const shrink = expect.objectContaining({ code: 'storage.tables.columnDefinitionUpdateNotSupported' });
      expect(
        (await runJob(env.api, 'PUT', '/tables/in.c-change.typed2/definition', 'tableDefinitionUpdate', { columns: [{ name: 'label', length: '3' }] })).error,
      ).toEqual(shrink);
      const unknown = await runJob(env.api, 'PUT', '/tables/in.c-change.typed2/definition', 'tableDefinitionUpdate', {
        columns: [{ name: 'nope', description: 'x' }],
      });
      expect(unknown).toMatchObject({ status: 'error', error: { code: 'storage.tables.columnNotFound' } });
      // a description alone leaves a typed column's KBC.datatype entries as they are (same ids)
      const before = (await env.api('GET', '/tables/in.c-change.typed2')).body.columnMetadata.id;
      expectSuccess(
        await runJob(env.api, 'PUT', '/tables/in.c-change.typed2/definition', 'tableDefinitionUpdate', { columns: [{ name: 'id', description: 'the key' }] }),
      );
      const after = (await env.api('GET', '/tables/in.c-change.typed2')).body.columnMetadata.id;
      expect(after).toEqual([...before, expect.objectContaining({ key: 'KBC.description', value: 'the key', provider: 'user' })]);
      // a filter value that is no number, on a NUMBER column, fails the delete job and deletes nothing
      const badValue = await runJob(env.api, 'DELETE', '/tables/in.c-change.typed2/rows', 'tableRowsDelete', {
        whereFilters: [{ column: 'id', values: ['abc'] }],
      });
      expect(badValue).toMatchObject({ status: 'error', error: { code: 'storage.tables.validation' } });
      expect((await env.api('GET', '/tables/in.c-change.typed2')).body.rowsCount).toBe(1);
    });
  });

  describe('column definition', () => {
    test("PUT tables/{id}/columns/{name}/definition answers 202 with a tableColumnDefinitionUpdate job as the service's; the typed column changes; untyped tables and unknown columns are refused", async () => {
      const res = await env.api('PUT', '/tables/in.c-change.typed2/columns/label/definition', { json: { length: '30', nullable: false, default: null } });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        tableId: 'in.c-change.typed2',
        operationName: 'tableColumnDefinitionUpdate',
        operationParams: { columnName: 'label', columnDefinition: { length: '30', nullable: false, removeDefault: true } },
      });
      expectSuccess(await waitForJob(env.api, res.body.id));
      const label = (await env.api('GET', '/tables/in.c-change.typed2')).body.definition.columns.find((c: Json) => c.name === 'label');
      expect(label.definition).toEqual({ type: 'VARCHAR', length: '30', nullable: false });
      const untyped = await env.api('PUT', '/tables/in.c-change.people/columns/name/definition', { json: { nullable: false } });
      expect(untyped.status).toBe(400);
      const unknown = await env.api('PUT', '/tables/in.c-change.typed2/columns/nope/definition', { json: { nullable: false } });
      expect([unknown.status, unknown.body.code]).toEqual([404, 'storage.tables.columnNotFound']);
    });
  });

  describe('snapshots', () => {
    test('POST tables/{id}/snapshots makes a tableSnapshotCreate job whose results are the snapshot; it is listed and shown; a table created from it has the rows, columns and key it had, exported row-identical', async () => {
      expectSuccess(await createTable(env.api, 'in.c-change', 'orders', 'id,amount\n1,10\n2,20\n3,30\n', { primaryKey: 'id' }));
      const before = await exportCsv(env.api, 'in.c-change.orders');
      const res = await env.api('POST', '/tables/in.c-change.orders/snapshots', { json: { description: 'before the cleanup' } });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        tableId: 'in.c-change.orders',
        operationName: 'tableSnapshotCreate',
        operationParams: { description: 'before the cleanup' },
      });
      const job = expectSuccess(await waitForJob(env.api, res.body.id));
      const snapshot = {
        id: expect.stringMatching(/^\d+$/),
        description: 'before the cleanup',
        createdTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/),
        type: 'table',
        creatorToken: { id: 101, description: 'test token' },
        uri: `${env.emulator.url}/v2/storage/snapshots/${job.results.id}`,
        dataFileId: null,
        table: { id: 'in.c-change.orders', name: 'orders', primaryKey: ['id'], columns: ['id', 'amount'] },
      };
      expect(job.results).toEqual(snapshot);
      expect((await env.api('GET', '/tables/in.c-change.orders/snapshots')).body).toEqual([snapshot]);
      expect((await env.api('GET', `/snapshots/${job.results.id}`)).body).toEqual(snapshot);
      // the table changes after the snapshot …
      expectSuccess(await runJob(env.api, 'DELETE', '/tables/in.c-change.orders/rows?allowTruncate=1', 'tableRowsDelete'));
      expectSuccess(await importTable(env.api, 'in.c-change.orders', 'id,amount\n9,99\n'));
      // … and the snapshot restores it under its own name in another bucket, and under a new name
      await createBucket(env.api, 'restored');
      // the service needs a name (its PHP client's docs say the snapshot's table's name is the default; it is not)
      const nameless = await env.api('POST', '/buckets/in.c-restored/tables-async', { json: { snapshotId: job.results.id } });
      expect([nameless.status, nameless.body.code, nameless.body.error]).toEqual([
        400,
        'storage.tables.validation',
        'Table create option "name" is required and cannot be empty',
      ]);
      const restored = await runJob(env.api, 'POST', '/buckets/in.c-restored/tables-async', 'tableCreate', { snapshotId: job.results.id, name: 'orders' });
      expect(expectSuccess(restored).operationParams).toEqual({
        bucketId: 'in.c-restored',
        name: 'orders',
        source: { type: 'snapshot', snapshotId: Number(job.results.id) },
      });
      expect(restored.results).toMatchObject({ id: 'in.c-restored.orders', columns: ['id', 'amount'], primaryKey: ['id'], rowsCount: 3 });
      expect(await exportCsv(env.api, 'in.c-restored.orders')).toBe(before);
      expectSuccess(await runJob(env.api, 'POST', '/buckets/in.c-change/tables-async', 'tableCreate', { snapshotId: job.results.id, name: 'orders_back' }));
      expect(await exportCsv(env.api, 'in.c-change.orders_back')).toBe(before);
      // the restored table behaves as a table: an incremental load upserts by the restored key
      expectSuccess(await importTable(env.api, 'in.c-change.orders_back', 'id,amount\n2,21\n', { incremental: 1 }));
      expect((await env.emulator.readTable('in.c-change.orders_back')).rows).toEqual([
        ['1', '10'],
        ['3', '30'],
        ['2', '21'],
      ]);
      const again = await runJob(env.api, 'POST', '/buckets/in.c-change/tables-async', 'tableCreate', { snapshotId: job.results.id, name: 'orders_back' });
      expect(again).toMatchObject({ status: 'error', error: { code: 'storage.tables.alreadyExists' } });
    });

    test('snapshots of a typed table restore its types; an unknown snapshot is 404; a deleted snapshot (204) is gone', async () => {
      const snap = expectSuccess(await runJob(env.api, 'POST', '/tables/in.c-change.typed2/snapshots', 'tableSnapshotCreate', {}));
      expect(snap.results.description).toBe('');
      const restored = expectSuccess(
        await runJob(env.api, 'POST', '/buckets/in.c-restored/tables-async', 'tableCreate', { snapshotId: snap.results.id, name: 'typed2' }),
      );
      expect(restored.results).toMatchObject({
        id: 'in.c-restored.typed2',
        isTyped: true,
        definition: {
          columns: [
            { name: 'id', basetype: 'INTEGER' },
            { name: 'label', definition: { type: 'VARCHAR', length: '30', nullable: false } },
          ],
        },
      });
      expect(await env.emulator.readTable('in.c-restored.typed2')).toEqual({ columns: ['id', 'label'], rows: [['1', 'twelve chars']] });
      const missing = await env.api('POST', '/buckets/in.c-restored/tables-async', { json: { snapshotId: 999999, name: 'x' } });
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('storage.snapshots.notFound');
      expect((await env.api('GET', '/snapshots/999999')).status).toBe(404);
      // a snapshot delete is synchronous (204) as the service answers it today
      expect((await env.api('DELETE', `/snapshots/${snap.results.id}`)).status).toBe(204);
      expect((await env.api('GET', `/snapshots/${snap.results.id}`)).status).toBe(404);
      expect((await env.api('GET', '/tables/in.c-change.typed2/snapshots')).body).toEqual([]);
    });
  });

  describe('pull a table into a development branch', () => {
    test('POST branch/{id}/tables/{table}/pull answers 202 with a devBranchTablePull job whose results are the table; the default branch refuses', async () => {
      const branch = expectSuccess(await runJob(env.api, 'POST', '/dev-branches', 'devBranchCreate', { name: 'pull-here' }));
      const res = await env.api('POST', `/branch/${branch.results.id}/tables/in.c-change.people/pull`);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        tableId: 'in.c-change.people',
        operationName: 'devBranchTablePull',
        operationParams: { sourceBranchId: 1, targetBranchId: branch.results.id },
      });
      const job = expectSuccess(await waitForJob(env.api, res.body.id));
      expect(job.results).toMatchObject({ id: 'in.c-change.people', rowsCount: 4 });
      expect((await env.api('GET', `/branch/${branch.results.id}/tables/in.c-change.people`)).body.rowsCount).toBe(4);
      const onDefault = await env.api('POST', '/branch/default/tables/in.c-change.people/pull');
      expect(onDefault.status).toBe(400);
      expect((await env.api('POST', `/branch/${branch.results.id}/tables/in.c-change.nope/pull`)).status).toBe(404);
    });
  });
});
