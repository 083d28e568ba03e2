import { createBucket, createTable, expectSuccess, OTHER_TOKEN, useMemoryEmulator, waitForJob, type Json } from '../../../harness/emulator-api';

describe('development branches', () => {
  const env = useMemoryEmulator();

  test('dev-branches lists the default branch, and its detail is the same', async () => {
    const main = { id: 1, name: 'Main', description: '', created: '2020-01-01T00:00:00+0000', isDefault: true };
    expect((await env.api('GET', '/dev-branches')).body).toEqual([main]);
    const detail = await env.api('GET', '/dev-branches/1');
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(main);
  });

  test('POST dev-branches answers 202 with a job whose results are the new branch, then listed and served in detail', async () => {
    const res = await env.api('POST', '/dev-branches', { json: { name: 'feature-x', description: 'trying things' } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ operationName: 'devBranchCreate', status: 'waiting', tableId: null });
    const job = expectSuccess(await waitForJob(env.api, res.body.id));
    expect(job.results).toEqual({
      id: 2,
      name: 'feature-x',
      description: 'trying things',
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/),
      isDefault: false,
      creatorToken: { id: 101, name: 'test token' },
    });
    expect((await env.api('GET', '/dev-branches/2')).body).toEqual(job.results);
    expect((await env.api('GET', '/dev-branches')).body.map((b: Json) => [b.id, b.name, b.isDefault])).toEqual([
      [2, 'feature-x', false],
      [1, 'Main', true],
    ]);
  });

  test('branch-scoped paths work on a created branch: bucket, table creation through the branch and its detail', async () => {
    const created = await env.api('POST', '/branch/2/buckets', { json: { name: 'onbranch' } });
    expect(created.status).toBe(201);
    expect(created.body.id).toBe('in.c-onbranch');
    expect(expectSuccess(await createTable(env.api, 'in.c-onbranch', 't', 'a,b\n1,2\n')).results.rowsCount).toBe(1);
    const table = await env.api('GET', '/branch/2/tables/in.c-onbranch.t');
    expect(table.status).toBe(200);
    expect(table.body).toMatchObject({ id: 'in.c-onbranch.t', rowsCount: 1, columns: ['a', 'b'] });
  });

  test("a branch name used twice is refused with 400 and the service's text, an unknown branch answers 404 with its text", async () => {
    const again = await env.api('POST', '/dev-branches', { json: { name: 'feature-x' } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 'devBranch.duplicateName', error: 'There already is a branch with name "feature-x"' });
    const missing = await env.api('GET', '/dev-branches/99');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'storage.devBranches.notFound', error: 'Branch id:"99" was not found.' });
  });

  test("branches are listed newest first with the default branch last; PUT dev-branches/{id} changes name and description, refuses a taken name and the default branch's name", async () => {
    const job = expectSuccess(await waitForJob(env.api, (await env.api('POST', '/dev-branches', { json: { name: 'feature-y' } })).body.id));
    const id = job.results.id;
    expect((await env.api('GET', '/dev-branches')).body.map((b: Json) => b.name)).toEqual(['feature-y', 'feature-x', 'Main']);
    const res = await env.api('PUT', `/dev-branches/${id}`, { json: { name: 'feature-z', description: 'renamed' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...job.results, name: 'feature-z', description: 'renamed' });
    expect((await env.api('GET', `/dev-branches/${id}`)).body).toEqual(res.body);
    const described = await env.api('PUT', `/dev-branches/${id}`, { form: { description: 'only this' } });
    expect(described.body).toMatchObject({ name: 'feature-z', description: 'only this' });
    const taken = await env.api('PUT', `/dev-branches/${id}`, { json: { name: 'feature-x' } });
    expect(taken.status).toBe(400);
    expect(taken.body).toMatchObject({ code: 'devBranch.duplicateName', error: 'There already is a branch with name "feature-x"' });
    const main = await env.api('PUT', '/dev-branches/1', { json: { description: 'Updated description' } });
    expect(main.body).toEqual({ id: 1, name: 'Main', description: 'Updated description', created: '2020-01-01T00:00:00+0000', isDefault: true });
    const rename = await env.api('PUT', '/dev-branches/1', { json: { name: 'NewBranchName' } });
    expect(rename.status).toBe(400);
    expect(rename.body.error).toBe('You can not update default branch name.');
    expect((await env.api('PUT', `/dev-branches/${id}`, { json: { name: 'x' }, token: OTHER_TOKEN })).status).toBe(200);
    await env.api('PUT', '/dev-branches/1', { json: { description: '' } });
    expectSuccess(await waitForJob(env.api, (await env.api('DELETE', `/dev-branches/${id}`)).body.id));
  });

  test('only a master token creates or deletes branches (403 otherwise); any token reads them', async () => {
    await createBucket(env.api, 'for-limited');
    const limited = await env.api('POST', '/tokens', { json: { description: 'limited', bucketPermissions: { 'in.c-for-limited': 'write' } } });
    const denied = await env.api('POST', '/dev-branches', { json: { name: 'nope' }, token: limited.body.token });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('accessDenied');
    expect(denied.body.error).toContain('creating a development branch needs a master token');
    expect((await env.api('GET', '/dev-branches/2', { token: limited.body.token })).status).toBe(200);
    expect((await env.api('DELETE', '/dev-branches/2', { token: limited.body.token })).status).toBe(403);
    expect((await env.api('GET', '/dev-branches', { token: OTHER_TOKEN })).status).toBe(200);
  });

  test('DELETE dev-branches answers 202 with a job; the branch and its scoped paths are gone; the default branch cannot be deleted', async () => {
    const res = await env.api('DELETE', '/dev-branches/2');
    expect(res.status).toBe(202);
    expectSuccess(await waitForJob(env.api, res.body.id));
    expect((await env.api('GET', '/dev-branches/2')).status).toBe(404);
    expect((await env.api('GET', '/branch/2/buckets')).status).toBe(404);
    const main = await env.api('DELETE', '/dev-branches/1');
    expect(main.status).toBe(400);
    expect(main.body).toMatchObject({ code: 'storage.devBranches.cannotDeleteDefault', error: 'Cannot delete Main branch' });
  });

  test('branch metadata: POST (form-encoded, as the Go client sends it) answers 201 with all entries, GET lists them, DELETE removes one', async () => {
    const res = await env.api('POST', '/branch/default/metadata', {
      form: {
        'metadata[0][key]': 'KBC.projectDescription',
        'metadata[0][value]': 'Our project',
        'metadata[1][key]': 'owner',
        'metadata[1][value]': 'data team',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual([
      {
        id: expect.stringMatching(/^\d+$/),
        key: 'KBC.projectDescription',
        value: 'Our project',
        provider: 'user',
        timestamp: expect.stringMatching(/\+0000$/),
      },
      { id: expect.stringMatching(/^\d+$/), key: 'owner', value: 'data team', provider: 'user', timestamp: expect.stringMatching(/\+0000$/) },
    ]);
    expect((await env.api('GET', '/branch/1/metadata')).body).toEqual(res.body);
    expect((await env.api('DELETE', `/branch/default/metadata/${res.body[1].id}`)).status).toBe(204);
    expect((await env.api('GET', '/branch/default/metadata')).body.map((m: Json) => m.key)).toEqual(['KBC.projectDescription']);
    expect((await env.api('GET', '/branch/77/metadata')).status).toBe(404);
    const limited = (await env.api('POST', '/tokens', { json: { description: 'ro', bucketPermissions: {} } })).body.token;
    expect((await env.api('GET', '/branch/default/metadata', { token: limited })).status).toBe(200);
    expect((await env.api('POST', '/branch/default/metadata', { token: limited, json: { metadata: [{ key: 'a', value: 'b' }] } })).status).toBe(403);
  });
});
