import { FormData } from 'undici';
import { useEmulator } from './support';

describe('authentication, index and routing', () => {
  const env = useEmulator();

  test('a request without a token is rejected with 401 storage.tokenInvalid', async () => {
    const res = await env.api('GET', '/buckets', { token: null });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'Invalid access token', code: 'storage.tokenInvalid' });
    expect(res.body.exceptionId).toMatch(/^exception-/);
  });

  test('an unknown token is rejected with 401 on the service and on the importer', async () => {
    expect((await env.api('GET', '/files', { token: 'nope' })).status).toBe(401);
    const form = new FormData();
    form.append('data', new Blob(['a\n1\n']), 'a.csv');
    const res = await env.api('POST', '/upload-file', { multipart: form, base: 'import', token: 'nope' });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ message: 'Invalid access token', status: 'error' });
  });

  test('the index lists the importer service under its own URL', async () => {
    const res = await env.api('GET', '');
    expect(res.status).toBe(200);
    expect(res.body.services).toEqual([{ id: 'import', url: env.emulator.importUrl }]);
    expect(env.emulator.importUrl).not.toBe(env.emulator.url);
  });

  test('tokens/verify describes the token that called it', async () => {
    const res = await env.api('GET', '/tokens/verify');
    expect(res.body).toMatchObject({ id: 101, description: 'test token', owner: { id: 1 } });
    const other = await env.api('GET', '/tokens/verify', { token: 'test-token-2' });
    expect(other.body).toMatchObject({ id: 102, description: 'token-102' });
  });

  test('branch-scoped paths reach the same files, buckets and tables', async () => {
    const created = await env.api('POST', '/branch/default/buckets', { json: { name: 'branched' } });
    expect(created.status).toBe(201);
    expect((await env.api('GET', '/buckets/in.c-branched')).status).toBe(200);
    expect((await env.api('GET', '/branch/123/buckets/in.c-branched')).status).toBe(200);
    const prepared = await env.api('POST', '/branch/default/files/prepare', { json: { name: 'b.csv' } });
    expect(prepared.status).toBe(201);
    expect((await env.api('GET', `/branch/default/files/${prepared.body.id}`)).body.id).toBe(prepared.body.id);
  });

  test('jobs are not branch-scoped', async () => {
    expect((await env.api('GET', '/branch/default/jobs')).status).toBe(404);
  });

  test('an unknown route answers 404 in the service error shape', async () => {
    const res = await env.api('GET', '/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.code).toBeDefined();
    expect(res.body.exceptionId).toMatch(/^exception-/);
  });
});
