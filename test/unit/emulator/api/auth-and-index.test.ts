import { FormData } from 'undici';
import { createEmulator } from '../../../../src/emulator';
import { client, memoryEmulatorOptions, useMemoryEmulator } from '../../../harness/emulator-api';

describe('authentication, index and routing', () => {
  const env = useMemoryEmulator();

  test('a request without a token is rejected with 401 "Access token must be set" and no code, like the service', async () => {
    const res = await env.api('GET', '/buckets', { token: null });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'Access token must be set', status: 'error' });
    expect(res.body.code).toBeUndefined();
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

  test("the index answers without a token, listing a stack's services (the importer at its own URL) and features", async () => {
    const res = await env.api('GET', '', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ api: 'storage', version: 'v2', host: new URL(env.emulator.url).host, components: [] });
    expect(res.body.services.map((s: { id: string }) => s.id)).toEqual([
      'docker-runner',
      'import',
      'oauth',
      'encryption',
      'billing',
      'scheduler',
      'sync-actions',
      'queue',
      'sandboxes',
      'data-science',
      'notification',
      'templates',
      'vault',
      'stream',
    ]);
    const urls = Object.fromEntries(res.body.services.map((s: { id: string; url: string }) => [s.id, s.url]));
    expect(urls.import).toBe(env.emulator.importUrl);
    expect(urls.encryption).toBe(`${env.emulator.url}/services/encryption`);
    expect(urls.scheduler).toBe(`${env.emulator.url}/services/scheduler`);
    expect(res.body.features).toEqual(['native-types', 'tables-definition', 'dev-branches']);
    expect(env.emulator.importUrl).not.toBe(env.emulator.url);
  });

  test('the index with exclude=components leaves components out, and answers the same with a token', async () => {
    const bare = await env.api('GET', '?exclude=components', { token: null });
    expect(bare.status).toBe(200);
    expect(bare.body.components).toBeUndefined();
    expect(bare.body.services).toHaveLength(14);
    const withToken = await env.api('GET', '?exclude=components');
    expect(withToken.body).toEqual(bare.body);
    // A wrong token does not matter on the index either, like the service.
    expect((await env.api('GET', '/', { token: 'nope' })).status).toBe(200);
  });

  test('a service the index lists but the emulator does not serve answers 501 naming it, without a token', async () => {
    const res = await env.api('POST', '/services/encryption/encrypt?componentId=x', { base: 'root', token: null, json: { '#a': 'b' } });
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({
      code: 'emulator.serviceNotServed',
      error:
        'the encryption service is listed in the index but not served by the emulator (it serves only Storage and import): POST /services/encryption/encrypt',
      status: 'error',
    });
  });

  test('tokens/verify describes the token that called it', async () => {
    const res = await env.api('GET', '/tokens/verify');
    expect(res.body).toMatchObject({ id: '101', description: 'test token', owner: { id: 1 } });
    const other = await env.api('GET', '/tokens/verify', { token: 'test-token-2' });
    expect(other.body).toMatchObject({ id: '102', description: 'token-102' });
  });

  test('a branch-scoped path of a branch that does not exist answers 404 storage.devBranches.notFound', async () => {
    const res = await env.api('GET', '/branch/123/buckets');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'storage.devBranches.notFound', error: 'Branch id:"123" was not found.' });
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

describe('index behind a public URL', () => {
  test('with publicUrl the index, reached where the emulator listens, names the importer and the services at the public address', async () => {
    const behind = await createEmulator(memoryEmulatorOptions({ publicUrl: 'http://emulator.example:8080/' }));
    try {
      expect(behind.url).toBe('http://emulator.example:8080');
      expect(behind.importUrl).toBe('http://emulator.example:8080/import');
      expect(behind.listenUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await client({ url: behind.listenUrl, importUrl: '' })('GET', '', { token: null });
      expect(res.status).toBe(200);
      expect(res.body.host).toBe('emulator.example:8080');
      expect(res.body.services.find((s: { id: string }) => s.id === 'import').url).toBe('http://emulator.example:8080/import');
      expect(res.body.services.find((s: { id: string }) => s.id === 'queue').url).toBe('http://emulator.example:8080/services/queue');
    } finally {
      await behind.close();
    }
  });
});
