import { createBucket, createTable, expectSuccess, useMemoryEmulator, type Json } from '../../../harness/emulator-api';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/;

describe('bucket, table and column metadata', () => {
  const env = useMemoryEmulator();
  const tableId = 'in.c-meta.people';

  beforeAll(async () => {
    await createBucket(env.api, 'meta');
    expectSuccess(await createTable(env.api, 'in.c-meta', 'people', 'id,name\n1,Ann\n'));
  });

  test("POST tables/{id}/metadata answers 201 with the table's entries and the columns' entries, each with id, key, value, provider, timestamp", async () => {
    const res = await env.api('POST', `/tables/${tableId}/metadata`, {
      json: {
        provider: 'user',
        metadata: [{ key: 'KBC.description', value: 'People we know' }],
        columnsMetadata: { name: [{ key: 'KBC.description', value: 'first name' }] },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      metadata: [
        { id: expect.stringMatching(/^\d+$/), key: 'KBC.description', value: 'People we know', provider: 'user', timestamp: expect.stringMatching(TIMESTAMP) },
      ],
      columnsMetadata: {
        name: [
          { id: expect.stringMatching(/^\d+$/), key: 'KBC.description', value: 'first name', provider: 'user', timestamp: expect.stringMatching(TIMESTAMP) },
        ],
      },
    });
  });

  test('columnsMetadata also comes as a list of {columnName, key, value} (Python client) or under any key (Go client\'s "all")', async () => {
    await env.api('POST', `/tables/${tableId}/metadata`, {
      json: { provider: 'py', metadata: [], columnsMetadata: [{ columnName: 'id', key: 'role', value: 'key' }] },
    });
    await env.api('POST', `/tables/${tableId}/metadata`, {
      json: { provider: 'go', columnsMetadata: { all: [{ columnName: 'id', key: 'role', value: 'identifier' }] } },
    });
    const column = await env.api('GET', `/columns/${tableId}.id/metadata`);
    expect(column.status).toBe(200);
    expect(column.body.map((m: Json) => [m.provider, m.key, m.value])).toEqual([
      ['py', 'role', 'key'],
      ['go', 'role', 'identifier'],
    ]);
  });

  test('columnsMetadata as a list of lists of {columnName, key, value} (the Python client, the documented form) and indexed by number in a form body', async () => {
    const res = await env.api('POST', `/tables/${tableId}/metadata`, {
      json: {
        provider: 'lists',
        metadata: [],
        columnsMetadata: [[{ key: 'role', value: 'identifier', columnName: 'id' }], [{ key: 'role', value: 'label', columnName: 'name' }]],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.columnsMetadata.id).toContainEqual({
      id: expect.stringMatching(/^\d+$/),
      key: 'role',
      value: 'identifier',
      provider: 'lists',
      timestamp: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.columnsMetadata.name).toContainEqual({
      id: expect.stringMatching(/^\d+$/),
      key: 'role',
      value: 'label',
      provider: 'lists',
      timestamp: expect.stringMatching(TIMESTAMP),
    });
    const form = await env.api('POST', `/tables/${tableId}/metadata`, {
      form: { provider: 'form', 'columnsMetadata[0][0][columnName]': 'name', 'columnsMetadata[0][0][key]': 'k', 'columnsMetadata[0][0][value]': 'v' },
    });
    expect(form.status).toBe(201);
    expect(form.body.columnsMetadata.name).toContainEqual(expect.objectContaining({ provider: 'form', key: 'k', value: 'v' }));
    const noColumn = await env.api('POST', `/tables/${tableId}/metadata`, { json: { provider: 'lists', columnsMetadata: [[{ key: 'role', value: 'x' }]] } });
    expect(noColumn.status).toBe(400);
    expect(noColumn.body).toMatchObject({
      code: 'storage.metadata.validation',
      error: 'columnsMetadata[0][0].columnName is required when columnsMetadata is indexed by number (key role)',
    });
    for (const [provider] of [['lists'], ['form']]) {
      const list = (await env.api('GET', `/columns/${tableId}.name/metadata`)).body.filter((m: Json) => m.provider === provider);
      for (const m of list) expect((await env.api('DELETE', `/tables/${tableId}/metadata/${m.id}`)).status).toBe(204);
    }
    const ids = (await env.api('GET', `/columns/${tableId}.id/metadata`)).body.filter((m: Json) => m.provider === 'lists');
    for (const m of ids) expect((await env.api('DELETE', `/tables/${tableId}/metadata/${m.id}`)).status).toBe(204);
  });

  test('setting a key again for the same provider changes its value and keeps its id; another provider gets its own entry', async () => {
    const first = (await env.api('GET', `/tables/${tableId}/metadata`)).body[0];
    const res = await env.api('POST', `/tables/${tableId}/metadata`, {
      form: { provider: 'user', 'metadata[0][key]': 'KBC.description', 'metadata[0][value]': 'Everyone' },
    });
    expect(res.status).toBe(201);
    expect(res.body.metadata).toEqual([{ ...first, value: 'Everyone', timestamp: expect.stringMatching(TIMESTAMP) }]);
    await env.api('POST', `/tables/${tableId}/metadata`, { json: { provider: 'other', metadata: [{ key: 'KBC.description', value: 'theirs' }] } });
    const list = await env.api('GET', `/tables/${tableId}/metadata`);
    expect(list.body.map((m: Json) => [m.provider, m.value])).toEqual([
      ['user', 'Everyone'],
      ['other', 'theirs'],
    ]);
  });

  test('table detail carries metadata and columnMetadata from these entries', async () => {
    const detail = (await env.api('GET', `/tables/${tableId}`)).body;
    expect(detail.metadata.map((m: Json) => [m.provider, m.key, m.value])).toEqual([
      ['user', 'KBC.description', 'Everyone'],
      ['other', 'KBC.description', 'theirs'],
    ]);
    expect(Object.keys(detail.columnMetadata)).toEqual(['id', 'name']);
    expect(detail.columnMetadata.name[0]).toMatchObject({ key: 'KBC.description', value: 'first name', provider: 'user' });
  });

  test('DELETE tables/{id}/metadata/{metadataId} answers 204 and removes the entry; an unknown id answers 404', async () => {
    const [, other] = (await env.api('GET', `/tables/${tableId}/metadata`)).body;
    const res = await env.api('DELETE', `/tables/${tableId}/metadata/${other.id}`);
    expect(res.status).toBe(204);
    expect((await env.api('GET', `/tables/${tableId}/metadata`)).body.map((m: Json) => m.provider)).toEqual(['user']);
    const again = await env.api('DELETE', `/tables/${tableId}/metadata/${other.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ code: 'storage.metadata.notFound', error: `metadata ${other.id} not found on table ${tableId}` });
  });

  test("bucket metadata: POST answers 201 with all the bucket's entries, GET and bucket detail list them", async () => {
    const res = await env.api('POST', '/buckets/in.c-meta/metadata', {
      json: {
        provider: 'user',
        metadata: [
          { key: 'KBC.description', value: 'Bucket of people' },
          { key: 'owner', value: 'data team' },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.map((m: Json) => [m.key, m.value, m.provider])).toEqual([
      ['KBC.description', 'Bucket of people', 'user'],
      ['owner', 'data team', 'user'],
    ]);
    expect(res.body[0]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      key: 'KBC.description',
      value: 'Bucket of people',
      provider: 'user',
      timestamp: expect.stringMatching(TIMESTAMP),
    });
    expect((await env.api('GET', '/buckets/in.c-meta/metadata')).body).toEqual(res.body);
    expect((await env.api('GET', '/buckets/in.c-meta')).body.metadata).toEqual(res.body);
  });

  test('invalid metadata is refused with 400 naming the field: no provider, the reserved storage provider, a bad key, an unknown column', async () => {
    const cases: [string, Json, string][] = [
      [`/tables/${tableId}/metadata`, { metadata: [{ key: 'a', value: 'b' }] }, 'provider is required'],
      [`/tables/${tableId}/metadata`, { provider: 'storage', metadata: [{ key: 'a', value: 'b' }] }, 'provider "storage" is reserved'],
      [`/tables/${tableId}/metadata`, { provider: 'user', metadata: [{ key: 'bad key!', value: 'b' }] }, 'metadata[0].key must be 1-255 letters'],
      [
        `/tables/${tableId}/metadata`,
        { provider: 'user', columnsMetadata: { nope: [{ key: 'a', value: 'b' }] } },
        'columnsMetadata: column "nope" is not in table in.c-meta.people',
      ],
      ['/buckets/in.c-meta/metadata', { provider: 'user', metadata: [] }, 'metadata must list at least one'],
    ];
    for (const [path, body, message] of cases) {
      const res = await env.api('POST', path, { json: body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('storage.metadata.validation');
      expect(res.body.error).toContain(message);
    }
  });

  test("metadata follows the token's permissions: read lists it, write is needed to set or delete it (403)", async () => {
    const reader = (await env.api('POST', '/tokens', { json: { description: 'reader', bucketPermissions: { 'in.c-meta': 'read' } } })).body.token;
    expect((await env.api('GET', `/tables/${tableId}/metadata`, { token: reader })).status).toBe(200);
    expect((await env.api('GET', `/columns/${tableId}.id/metadata`, { token: reader })).status).toBe(200);
    const denied = await env.api('POST', `/tables/${tableId}/metadata`, { token: reader, json: { provider: 'user', metadata: [{ key: 'a', value: 'b' }] } });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toContain('setting table metadata needs write permission on bucket in.c-meta');
    expect(
      (await env.api('POST', '/buckets/in.c-meta/metadata', { token: reader, json: { provider: 'user', metadata: [{ key: 'a', value: 'b' }] } })).status,
    ).toBe(403);
    await createBucket(env.api, 'hidden');
    expect((await env.api('GET', '/buckets/in.c-hidden/metadata', { token: reader })).status).toBe(403);
  });

  test('a dropped table takes its metadata along: a new table of the same name starts with none', async () => {
    expect((await env.api('DELETE', `/tables/${tableId}`)).status).toBe(204);
    expectSuccess(await createTable(env.api, 'in.c-meta', 'people', 'id,name\n1,Ann\n'));
    const detail = (await env.api('GET', `/tables/${tableId}`)).body;
    expect(detail.metadata).toEqual([]);
    expect(detail.columnMetadata).toEqual({});
    expect((await env.api('GET', `/columns/${tableId}.missing/metadata`)).status).toBe(404);
  });
});
