import { type Json, createBucket, createTable, expectSuccess, useEmulator, waitForJob } from './support';

/** Issue 39: the operations clients use to change an existing table, with the service's jobs and end states. */
describe('changing tables', () => {
  const env = useEmulator();

  beforeAll(async () => {
    await createBucket(env.api, 'change');
  });

  describe('asynchronous table delete', () => {
    test('DELETE tables/{id}?async=true answers 202 with a tableDrop job; once it succeeds the table, its data and its metadata are gone', async () => {
      expectSuccess(await createTable(env.api, 'in.c-change', 'gone', 'id,name\n1,a\n'));
      expect((await env.api('POST', '/tables/in.c-change.gone/metadata', { json: { provider: 'user', metadata: [{ key: 'KBC.description', value: 'x' }] } })).status).toBe(201);
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
});
