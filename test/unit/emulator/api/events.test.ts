import { FormData } from 'undici';
import { createBucket, createTable, expectSuccess, importTable, OTHER_TOKEN, useMemoryEmulator, waitForJob, type Json } from '../../../harness/emulator-api';

describe('events', () => {
  const env = useMemoryEmulator();

  test("the operations the emulator runs leave events, newest first, with the service's fields", async () => {
    await createBucket(env.api, 'ev');
    expectSuccess(await createTable(env.api, 'in.c-ev', 't', 'a\n1\n2\n'));
    const res = await env.api('GET', '/events');
    expect(res.status).toBe(200);
    expect(res.body.map((e: Json) => e.event)).toEqual(['storage.tableCreated', 'storage.bucketCreated']);
    const [tableCreated] = res.body;
    expect(tableCreated).toEqual({
      id: expect.stringMatching(/^\d+$/),
      uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      event: 'storage.tableCreated',
      component: 'storage',
      message: 'Created table in.c-ev.t',
      description: '',
      type: 'info',
      runId: null,
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/),
      params: { jobId: expect.any(Number), operationName: 'tableCreate' },
      results: { importedRowsCount: 2 },
      performance: {},
      warnings: [],
      attachments: [],
      token: { id: '101', name: 'test token' },
      configurationId: null,
      objectId: 'in.c-ev.t',
      objectName: 't',
      objectType: 'table',
      idBranch: 1,
    });
  });

  test('runId filters the events of one run: an import done and a failed import', async () => {
    const headers = { 'x-kbc-runid': 'run-42' };
    const okFile = await env.api('POST', '/upload-file', { base: 'import', multipart: formOf('a\n3\n') });
    const ok = await env.api('POST', '/tables/in.c-ev.t/import-async', { json: { dataFileId: okFile.body.id, incremental: 1 }, headers });
    expectSuccess(await waitForJob(env.api, ok.body.id));
    const badFile = await env.api('POST', '/upload-file', { base: 'import', multipart: formOf('b\n1\n') });
    const bad = await env.api('POST', '/tables/in.c-ev.t/import-async', { json: { dataFileId: badFile.body.id }, headers });
    expect((await waitForJob(env.api, bad.body.id)).status).toBe('error');
    await importTable(env.api, 'in.c-ev.t', 'a\n9\n', { incremental: 1 }); // another run
    const res = await env.api('GET', '/events?runId=run-42');
    expect(res.body.map((e: Json) => [e.event, e.type, e.runId])).toEqual([
      ['storage.tableImportError', 'error', 'run-42'],
      ['storage.tableImportDone', 'success', 'run-42'],
    ]);
    expect(res.body[0].message).toContain('Import into table in.c-ev.t failed: some columns are missing in the csv file: a');
    expect(res.body[0].results.error.code).toBe('storage.tables.missingColumns');
    expect(res.body[1].results).toMatchObject({ importedRowsCount: 1, totalRowsCount: 3 });
  });

  test('limit and offset page through the events', async () => {
    const all = (await env.api('GET', '/events')).body.map((e: Json) => e.id);
    expect(all.length).toBeGreaterThanOrEqual(5);
    expect((await env.api('GET', '/events?limit=2')).body.map((e: Json) => e.id)).toEqual(all.slice(0, 2));
    expect((await env.api('GET', '/events?limit=2&offset=2')).body.map((e: Json) => e.id)).toEqual(all.slice(2, 4));
    const bad = await env.api('GET', '/events?limit=-1');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('limit must be a non-negative integer; got "-1"');
  });

  test('exports, table and bucket deletions leave events too', async () => {
    const exp = await env.api('POST', '/tables/in.c-ev.t/export-async', { json: {} });
    expectSuccess(await waitForJob(env.api, exp.body.id));
    expect((await env.api('DELETE', '/tables/in.c-ev.t')).status).toBe(204);
    expect((await env.api('DELETE', '/buckets/in.c-ev')).status).toBe(204);
    const events = (await env.api('GET', '/events?limit=3')).body;
    expect(events.map((e: Json) => [e.event, e.objectType, e.objectId])).toEqual([
      ['storage.bucketDeleted', 'bucket', 'in.c-ev'],
      ['storage.tableDeleted', 'table', 'in.c-ev.t'],
      ['storage.tableExported', 'table', 'in.c-ev.t'],
    ]);
    expect(events[2].results).toMatchObject({ exportedRowsCount: 4, file: { id: expect.any(Number) } });
  });

  test('POST events answers 201 {id, uuid}; the event is listed and served by id and uuid with the component, configuration, params, results and duration sent', async () => {
    const res = await env.api('POST', '/events', {
      json: {
        component: 'keboola.test-component',
        message: 'This is a word of warning',
        type: 'warn',
        description: 'longer',
        configurationId: 'cfg-1',
        duration: 200,
        runId: 'run-ext',
        params: { command: 'sync-test' },
        results: { projectId: '123' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^\d+$/), uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const expected = {
      id: res.body.id,
      uuid: res.body.uuid,
      event: 'ext.keboola.test-component.',
      component: 'keboola.test-component',
      message: 'This is a word of warning',
      description: 'longer',
      type: 'warn',
      runId: 'run-ext',
      created: expect.stringMatching(/\+0000$/),
      params: { command: 'sync-test' },
      results: { projectId: '123' },
      performance: { duration: 200 },
      warnings: [],
      attachments: [],
      token: { id: '101', name: 'test token' },
      configurationId: 'cfg-1',
      objectId: '',
      objectName: '',
      objectType: '',
      idBranch: 1,
    };
    expect((await env.api('GET', `/events/${res.body.id}`)).body).toEqual(expected);
    expect((await env.api('GET', `/events/${res.body.uuid}`)).body).toEqual(expected);
    expect((await env.api('GET', '/events?component=keboola.test-component')).body).toEqual([expected]);
    const branch = await env.api('POST', '/branch/default/events', { json: { component: 'c', message: 'm', params: '{"a":1}' } });
    expect(branch.status).toBe(201);
    expect((await env.api('GET', `/events/${branch.body.id}`)).body).toMatchObject({ type: 'info', params: { a: 1 }, idBranch: 1 });
    const missing = await env.api('POST', '/events', { json: { message: 'no component' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/^component is required/);
    expect((await env.api('POST', '/events', { json: { component: 'c', message: 'm', type: 'fatal' } })).status).toBe(400);
    expect((await env.api('GET', '/events/999999')).status).toBe(404);
  });

  test('a token that is not a master token sees only the events of buckets it can read and its own', async () => {
    await createBucket(env.api, 'visible');
    await createBucket(env.api, 'invisible');
    const reader = (await env.api('POST', '/tokens', { json: { description: 'reader', bucketPermissions: { 'in.c-visible': 'read' } } })).body.token;
    const seen = (await env.api('GET', '/events', { token: reader })).body.map((e: Json) => e.objectId);
    expect(seen).toContain('in.c-visible');
    expect(seen).not.toContain('in.c-invisible');
    expect(seen).not.toContain('in.c-ev');
    expect((await env.api('GET', '/events', { token: OTHER_TOKEN })).body.length).toBe((await env.api('GET', '/events')).body.length);
  });
});

function formOf(csv: string): FormData {
  const form = new FormData();
  form.append('data', new Blob([csv]), 'data.csv');
  return form;
}
