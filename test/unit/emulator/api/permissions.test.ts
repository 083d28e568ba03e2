import {
  type Client,
  type Json,
  TOKEN,
  client,
  createBucket,
  createTable,
  expectSuccess,
  uploadViaImporter,
  useMemoryEmulator,
  waitForJob,
} from '../../../harness/emulator-api';

/** A token from the options that is not a master token: read on `in.c-shared` only. */
const READER = 'test-token-reader';

/** The service's 403: `{error, code: "accessDenied", exceptionId}`. */
function expectDenied(res: { status: number; body: Json }): void {
  expect(res.status).toBe(403);
  expect(res.body).toMatchObject({ code: 'accessDenied', error: expect.stringMatching(/^You don't have access to the resource/) });
  expect(res.body.exceptionId).toMatch(/^exception-/);
}

describe('token permissions', () => {
  const env = useMemoryEmulator({
    tokens: [
      { token: TOKEN, id: 101, description: 'test token' },
      { token: READER, id: 103, description: 'reader', isMasterToken: false, bucketPermissions: { 'in.c-shared': 'read' } },
    ],
  });
  const as = (token: string): Client => {
    const call = client(env.emulator);
    return ((method, path, options = {}) => call(method, path, { token, ...options })) as Client;
  };

  /** Creates a token with the master token and returns the created resource (with its secret). */
  async function newToken(body: Record<string, unknown>): Promise<Json> {
    const res = await env.api('POST', '/tokens', { json: body });
    expect(res.status).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    await createBucket(env.api, 'shared');
    await createBucket(env.api, 'private');
    expectSuccess(await createTable(env.api, 'in.c-shared', 't', 'id,v\n1,a\n'));
    expectSuccess(await createTable(env.api, 'in.c-private', 't', 'id,v\n1,secret\n'));
  });

  test('tokens/verify reports the permission model of a master token and of a limited one', async () => {
    const master = (await env.api('GET', '/tokens/verify')).body;
    expect(master).toMatchObject({
      id: '101',
      description: 'test token',
      isMasterToken: true,
      canManageBuckets: true,
      canReadAllFileUploads: true,
      owner: { id: 1 },
    });
    expect(master.bucketPermissions).toMatchObject({ 'in.c-shared': 'manage', 'in.c-private': 'manage' });
    const reader = (await as(READER)('GET', '/tokens/verify')).body;
    expect(reader).toMatchObject({
      id: '103',
      description: 'reader',
      isMasterToken: false,
      canManageBuckets: false,
      canManageTokens: false,
      canReadAllFileUploads: false,
      bucketPermissions: { 'in.c-shared': 'read' },
      owner: { id: 1 },
    });
    expect(reader.token).toBe(READER);
  });

  test('a read token lists and reads only its buckets and tables, and can export but not change them', async () => {
    const api = as(READER);
    expect((await api('GET', '/buckets')).body.map((b: Json) => b.id)).toEqual(['in.c-shared']);
    expect((await api('GET', '/tables')).body.map((t: Json) => t.id)).toEqual(['in.c-shared.t']);
    expect((await api('GET', '/buckets/in.c-shared/tables')).body.map((t: Json) => t.id)).toEqual(['in.c-shared.t']);
    expect((await api('GET', '/tables/in.c-shared.t')).status).toBe(200);
    expectDenied(await api('GET', '/buckets/in.c-private'));
    expectDenied(await api('GET', '/buckets/in.c-private/tables'));
    expectDenied(await api('GET', '/tables/in.c-private.t'));
    expectDenied(await api('POST', '/tables/in.c-private.t/export-async', { json: {} }));
    expect((await api('GET', '/tables/in.c-shared.nothing')).status).toBe(404);

    const exported = await api('POST', '/tables/in.c-shared.t/export-async', { json: {} });
    expect(exported.status).toBe(202);
    const job = expectSuccess(await waitForJob(api, exported.body.id));
    expect((await api('GET', `/files/${job.results.file.id}`)).status).toBe(200);

    const fileId = await uploadViaImporter(api, 'id,v\n2,b\n');
    expectDenied(await api('POST', '/tables/in.c-shared.t/import-async', { json: { dataFileId: fileId } }));
    expectDenied(await api('POST', '/buckets/in.c-shared/tables-async', { json: { name: 'new', dataFileId: fileId } }));
    expectDenied(await api('DELETE', '/tables/in.c-shared.t'));
    expectDenied(await api('DELETE', '/buckets/in.c-private?force=1'));
    expectDenied(await api('POST', '/buckets', { json: { name: 'mine' } }));
    expect(await env.emulator.readTable('in.c-shared.t')).toEqual({ columns: ['id', 'v'], rows: [['1', 'a']] });
    expect((await env.api('GET', '/buckets/in.c-private')).status).toBe(200);
  });

  test('a token created with write on a bucket loads, creates and deletes its tables but cannot delete the bucket', async () => {
    const created = await newToken({ description: 'writer', bucketPermissions: { 'in.c-shared': 'write' } });
    expect(created).toMatchObject({
      description: 'writer',
      isMasterToken: false,
      canManageBuckets: false,
      canReadAllFileUploads: false,
      bucketPermissions: { 'in.c-shared': 'write' },
      creatorToken: { id: 101, description: 'test token' },
      expires: null,
    });
    expect(created.token).toMatch(/^1-\d+-[0-9a-f]{40}$/);
    const api = as(created.token);
    expectSuccess(await createTable(api, 'in.c-shared', 'written', 'id\n1\n'));
    const fileId = await uploadViaImporter(api, 'id\n2\n');
    expectSuccess(
      await waitForJob(api, (await api('POST', '/tables/in.c-shared.written/import-async', { json: { dataFileId: fileId, incremental: true } })).body.id),
    );
    expect((await env.emulator.readTable('in.c-shared.written')).rows).toEqual([['1'], ['2']]);
    expect((await api('DELETE', '/tables/in.c-shared.written')).status).toBe(204);
    expectDenied(await api('DELETE', '/buckets/in.c-shared?force=1'));
    expectDenied(await api('POST', '/buckets/in.c-private/tables-async', { json: { name: 'x', dataFileId: fileId } }));
  });

  test('canManageBuckets creates and deletes buckets, and is reported as manage on every bucket', async () => {
    const created = await newToken({ canManageBuckets: true });
    expect(created.description).toBe('Created by test token');
    const api = as(created.token);
    expect((await api('POST', '/buckets', { json: { name: 'managed' } })).status).toBe(201);
    const verified = (await api('GET', '/tokens/verify')).body;
    expect(verified).toMatchObject({ isMasterToken: false, canManageBuckets: true });
    expect(verified.bucketPermissions).toMatchObject({ 'in.c-shared': 'manage', 'in.c-private': 'manage', 'in.c-managed': 'manage' });
    expect((await api('GET', '/buckets')).body.map((b: Json) => b.id)).toEqual(expect.arrayContaining(['in.c-managed', 'in.c-private', 'in.c-shared']));
    expect((await api('DELETE', '/buckets/in.c-managed')).status).toBe(204);
  });

  test('without canReadAllFileUploads a token sees only the files it created', async () => {
    const masterFile = await uploadViaImporter(env.api, 'id\n1\n');
    const own = await newToken({ description: 'own files', bucketPermissions: { 'in.c-shared': 'write' } });
    const api = as(own.token);
    const ownFile = await uploadViaImporter(api, 'id\n2\n', 'own.csv');
    expect((await api('GET', '/files')).body.map((f: Json) => f.id)).toEqual([ownFile]);
    expect((await api('GET', `/files/${ownFile}`)).status).toBe(200);
    expectDenied(await api('GET', `/files/${masterFile}?federationToken=1`));
    expectDenied(await api('DELETE', `/files/${masterFile}`));
    expectDenied(await api('POST', '/tables/in.c-shared.t/import-async', { json: { dataFileId: masterFile, incremental: true } }));
    expect((await env.api('GET', '/files')).body.map((f: Json) => f.id)).toEqual(expect.arrayContaining([masterFile, ownFile]));

    const all = await newToken({ canReadAllFileUploads: true });
    expect((await as(all.token)('GET', `/files/${masterFile}`)).status).toBe(200);
    expect((await as(all.token)('GET', '/files')).body.map((f: Json) => f.id)).toEqual(expect.arrayContaining([masterFile, ownFile]));
  });

  test('a token sees the jobs it created; a master token sees all', async () => {
    const reader = as(READER);
    const readerJob = (await reader('POST', '/tables/in.c-shared.t/export-async', { json: {} })).body.id;
    const masterJob = (await env.api('POST', '/tables/in.c-private.t/export-async', { json: {} })).body.id;
    await waitForJob(env.api, masterJob);
    const listed = (await reader('GET', '/jobs')).body.map((j: Json) => j.id);
    expect(listed).toContain(readerJob);
    expect(listed).not.toContain(masterJob);
    expect((await reader('GET', `/jobs/${readerJob}`)).status).toBe(200);
    expectDenied(await reader('GET', `/jobs/${masterJob}`));
    expect((await env.api('GET', '/jobs')).body.map((j: Json) => j.id)).toEqual(expect.arrayContaining([readerJob, masterJob]));
  });

  test('only a master token creates and deletes tokens; manage grants and unknown buckets are rejected', async () => {
    expectDenied(await as(READER)('POST', '/tokens', { json: { description: 'nope' } }));
    const manage = await env.api('POST', '/tokens', { json: { bucketPermissions: { 'in.c-shared': 'manage' } } });
    expect(manage.status).toBe(400);
    expect(manage.body.code).toBe('storage.tokens.invalidPermissions');
    const unknown = await env.api('POST', '/tokens', { json: { bucketPermissions: { 'in.c-nothing': 'read' } } });
    expect(unknown).toMatchObject({ status: 400, body: { code: 'storage.tokens.invalidPermissions' } });

    const form = await env.api('POST', '/tokens', { form: 'description=formed&bucketPermissions%5Bin.c-shared%5D=read&canReadAllFileUploads=0' });
    expect(form).toMatchObject({ status: 201, body: { description: 'formed', bucketPermissions: { 'in.c-shared': 'read' }, canReadAllFileUploads: false } });
    expect((await as(form.body.token)('GET', '/buckets')).body.map((b: Json) => b.id)).toEqual(['in.c-shared']);
    expectDenied(await as(form.body.token)('DELETE', `/tokens/${form.body.id}`));
    expect((await env.api('DELETE', `/tokens/${form.body.id}`)).status).toBe(204);
    expect((await as(form.body.token)('GET', '/tokens/verify')).status).toBe(401);
    expect((await env.api('DELETE', `/tokens/${form.body.id}`)).status).toBe(404);
    expect((await env.api('DELETE', '/tokens/103')).status).toBe(400);
  });

  test('a deleted bucket takes its grants along: a new bucket of the same id is not readable by the old grantee', async () => {
    await createBucket(env.api, 'gone');
    const created = await newToken({ bucketPermissions: { 'in.c-gone': 'read' } });
    expect((await as(created.token)('GET', '/buckets/in.c-gone')).status).toBe(200);
    expect((await env.api('DELETE', '/buckets/in.c-gone')).status).toBe(204);
    await createBucket(env.api, 'gone');
    expectDenied(await as(created.token)('GET', '/buckets/in.c-gone'));
    expect((await as(created.token)('GET', '/tokens/verify')).body.bucketPermissions).toEqual([]);
  });

  test('a token with expiresIn stops working when it expires', async () => {
    const created = await newToken({ expiresIn: 1 });
    const at = (t: string) => Date.parse(t.replace(/(\d\d)(\d\d)$/, '$1:$2'));
    // one second after its creation, by the token's own times (not the test's clock)
    expect(at(created.expires) - at(created.created)).toBe(1000);
    expect((await as(created.token)('GET', '/tokens/verify')).body).toMatchObject({ isExpired: false });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await as(created.token)('GET', '/tokens/verify')).status).toBe(401);
  });
});
