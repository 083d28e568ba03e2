import { rmSync } from 'node:fs';
import { request } from 'undici';
import { createEmulator } from '../../../../src/emulator';
import {
  type Json,
  TOKEN,
  client,
  createBucket,
  memoryEmulatorOptions,
  expectSuccess,
  uploadViaImporter,
  useMemoryEmulator,
  waitForJob,
} from '../../../harness/emulator-api';

const ADMIN_TOKEN = 'test-admin-secret';

describe('fault injection', () => {
  const env = useMemoryEmulator({ adminToken: ADMIN_TOKEN });

  afterEach(() => env.emulator.faults.clear());

  /** Calls an admin endpoint with the admin secret, another one (`secret`), or none (`secret: null`). */
  const admin = (method: string, path: string, json?: unknown, secret: string | null = ADMIN_TOKEN) =>
    request(`${env.emulator.url}/_emulator${path}`, {
      method: method as 'GET',
      headers: {
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        ...(secret === null ? {} : { authorization: `Bearer ${secret}` }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
    }).then(
      async (r) =>
        ({ status: r.statusCode, headers: r.headers, body: r.statusCode === 204 ? undefined : await r.body.json() }) as {
          status: number;
          headers: Record<string, unknown>;
          body: Json;
        },
    );

  test('the admin endpoints answer 401 without the admin secret and change nothing', async () => {
    for (const [method, path] of [
      ['GET', '/faults'],
      ['DELETE', '/faults'],
      ['GET', '/requests'],
      ['DELETE', '/requests'],
    ]) {
      const res = await admin(method!, path!, undefined, null);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'emulator.adminTokenInvalid', error: expect.stringMatching(/^missing admin token: .*Authorization: Bearer/) });
      expect(res.body.exceptionId).toMatch(/^exception-/);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    const added = await admin('POST', '/faults', { path: '/tokens/verify', action: { type: 'status', status: 418 } }, null);
    expect(added.status).toBe(401);
    expect(env.emulator.faults.list()).toEqual([]);
    expect((await env.api('GET', '/tokens/verify')).status).toBe(200);
  });

  test('the admin endpoints answer 401 to a wrong admin secret, and to a Storage token', async () => {
    expect(await admin('GET', '/requests', undefined, 'not-the-secret')).toMatchObject({
      status: 401,
      body: { error: expect.stringMatching(/^wrong admin token/) },
    });
    expect((await admin('GET', '/faults', undefined, TOKEN)).status).toBe(401);
    const storageHeader = await request(`${env.emulator.url}/_emulator/faults`, { headers: { 'x-storageapi-token': TOKEN } });
    await storageHeader.body.dump();
    expect(storageHeader.statusCode).toBe(401);
    expect((await admin('POST', '/faults', { failJob: { operationName: 'tableCreate' } }, 'not-the-secret')).status).toBe(401);
    expect(env.emulator.faults.list()).toEqual([]);
  });

  test('the admin endpoints work with the admin secret', async () => {
    expect((await admin('POST', '/faults', { path: '/tokens/verify', times: 1, action: { type: 'status', status: 418 } })).status).toBe(201);
    expect((await admin('GET', '/faults')).body).toHaveLength(1);
    expect((await env.api('GET', '/tokens/verify')).status).toBe(418);
    expect((await admin('GET', '/requests')).status).toBe(200);
  });

  test('a status fault answers without performing the operation, with Retry-After when asked', async () => {
    env.emulator.faults.add({ method: 'POST', path: '/buckets$', times: 1, action: { type: 'status', status: 503, retryAfter: 2 } });
    const res = await env.api('POST', '/buckets', { json: { name: 'faulty' } });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body).toMatchObject({ status: 'maintenance' });
    expect((await env.api('GET', '/buckets/in.c-faulty')).status).toBe(404);
    expect((await env.api('POST', '/buckets', { json: { name: 'faulty' } })).status).toBe(201);
  });

  test('a status fault can carry its own body and only hits the matching method', async () => {
    env.emulator.faults.add({ method: 'GET', path: '^/v2/storage/buckets', action: { type: 'status', status: 429, body: { slow: 'down' } } });
    const res = await env.api('GET', '/buckets');
    expect(res).toMatchObject({ status: 429, body: { slow: 'down' } });
    expect((await env.api('POST', '/buckets', { json: { name: 'methodok' } })).status).toBe(201);
  });

  test('times limits how many requests a rule hits, untilMs how long it lives', async () => {
    env.emulator.faults.add({ path: '/tokens/verify', times: 2, action: { type: 'status', status: 500 } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await env.api('GET', '/tokens/verify')).status);
    expect(statuses).toEqual([500, 500, 200]);
    env.emulator.faults.add({ path: '/tokens/verify', untilMs: 300, action: { type: 'status', status: 502 } });
    expect((await env.api('GET', '/tokens/verify')).status).toBe(502);
    await new Promise((r) => setTimeout(r, 350));
    expect((await env.api('GET', '/tokens/verify')).status).toBe(200);
  });

  test('a reset fault breaks the connection before anything happens', async () => {
    env.emulator.faults.add({ method: 'POST', path: '/buckets$', times: 1, action: { type: 'reset' } });
    await expect(env.api('POST', '/buckets', { json: { name: 'reset' } })).rejects.toThrow();
    expect((await env.api('GET', '/buckets/in.c-reset')).status).toBe(404);
  });

  test('a delay fault slows the answer down', async () => {
    env.emulator.faults.add({ path: '/tokens/verify', times: 1, action: { type: 'delay', ms: 400 } });
    const before = env.emulator.requests.length;
    expect((await env.api('GET', '/tokens/verify')).status).toBe(200);
    // the emulator's own record of the request: the delay fault held it (not the test's clock)
    const [held] = env.emulator.requests.slice(before).filter((r) => r.path.endsWith('/tokens/verify'));
    expect(held).toMatchObject({ status: 200, fault: 'delay' });
    expect(held!.durationMs).toBeGreaterThanOrEqual(400);
  });

  test('dropResponse on tables-async creates the job but the client sees a socket error; the job list shows exactly one', async () => {
    await createBucket(env.api, 'drop');
    const fileId = await uploadViaImporter(env.api, 'a\n1\n');
    env.emulator.faults.add({ method: 'POST', path: '/tables-async$', times: 1, action: { type: 'dropResponse' } });
    await expect(env.api('POST', '/buckets/in.c-drop/tables-async', { json: { name: 't', dataFileId: fileId } })).rejects.toThrow();
    const jobs = (await env.api('GET', '/jobs')).body.filter(
      (j: { operationName: string; operationParams: { source?: { fileId: number } } }) =>
        j.operationName === 'tableCreate' && j.operationParams.source?.fileId === fileId,
    );
    expect(jobs).toHaveLength(1);
    expectSuccess(await waitForJob(env.api, jobs[0].id));
    expect((await env.emulator.readTable('in.c-drop.t')).rows).toEqual([['1']]);
    const logged = env.emulator.requests.filter((r) => r.path === '/v2/storage/buckets/in.c-drop/tables-async');
    expect(logged).toEqual([expect.objectContaining({ method: 'POST', status: 0, fault: 'dropResponse' })]);
  });

  test('status-after-success performs the operation and then answers 500', async () => {
    env.emulator.faults.add({ method: 'POST', path: '/buckets$', times: 1, action: { type: 'status-after-success', status: 500 } });
    const res = await env.api('POST', '/buckets', { json: { name: 'performed' } });
    expect(res.status).toBe(500);
    expect(res.body.exceptionId).toMatch(/^exception-/);
    expect((await env.api('GET', '/buckets/in.c-performed')).status).toBe(200);
  });

  test('faults reach the importer too', async () => {
    env.emulator.faults.add({ path: '^/import/upload-file', times: 1, action: { type: 'status', status: 502 } });
    await expect(uploadViaImporter(env.api, 'a\n1\n')).rejects.toThrow(/502/);
    expect(await uploadViaImporter(env.api, 'a\n1\n')).toBeGreaterThan(0);
  });

  test('the admin endpoint adds, lists and clears rules without a Storage token, and rejects bad ones', async () => {
    const added = await admin('POST', '/faults', { path: '/tokens/verify', times: 1, action: { type: 'status', status: 418 } });
    expect(added.status).toBe(201);
    expect((await admin('GET', '/faults')).body).toEqual([expect.objectContaining({ path: '/tokens/verify' })]);
    expect((await env.api('GET', '/tokens/verify')).status).toBe(418);
    await admin('POST', '/faults', { rules: [{ path: '/tokens/verify', action: { type: 'status', status: 500 } }] });
    expect((await admin('DELETE', '/faults')).status).toBe(204);
    expect((await env.api('GET', '/tokens/verify')).status).toBe(200);
    expect((await admin('POST', '/faults', { path: '/x', action: { type: 'explode' } })).status).toBe(400);
    expect((await admin('POST', '/faults', { failJob: { operationName: 'tableCreate', message: 'via admin' } })).status).toBe(201);
    const fileId = await uploadViaImporter(env.api, 'a\n1\n');
    const job = await waitForJob(
      env.api,
      (await env.api('POST', '/buckets/in.c-drop/tables-async', { json: { name: 'adminfail', dataFileId: fileId } })).body.id,
    );
    expect(job.error.message).toBe('via admin');
  });

  test('the request log counts what the emulator saw, on the handle and over HTTP', async () => {
    expect((await admin('DELETE', '/requests')).status).toBe(204);
    await env.api('GET', '/tokens/verify');
    await env.api('GET', '/files?limit=2');
    await env.api('GET', '/buckets', { token: 'bad' });
    expect(env.emulator.requests.map((r) => [r.method, r.path, r.query, r.status])).toEqual([
      ['GET', '/v2/storage/tokens/verify', '', 200],
      ['GET', '/v2/storage/files', 'limit=2', 200],
      ['GET', '/v2/storage/buckets', '', 401],
    ]);
    const over = (await admin('GET', '/requests')).body as { path: string }[];
    expect(over.map((r) => r.path)).toEqual(['/v2/storage/tokens/verify', '/v2/storage/files', '/v2/storage/buckets']);
    expect(typeof env.emulator.requests[0]!.time).toBe('number');
  });

  test('the request log keeps request bodies, secrets redacted and long ones cut (issue 26)', async () => {
    expect((await admin('DELETE', '/requests')).status).toBe(204);
    await env.api('POST', '/buckets', { json: { name: 'logged', stage: 'in', description: 'kept' } });
    await env.api('POST', '/branch/default/components/x.y/configs', {
      json: { name: 'c', configuration: { parameters: { user: 'u', '#password': 'p', api_key: 'k', nested: [{ token: 't' }] } } },
    });
    await env.api('POST', '/events', { form: { component: 'c', message: 'm'.repeat(5000) } });
    await env.api('GET', '/tokens/verify');
    const [bucket, config, event, verify] = env.emulator.requests;
    expect(bucket!.body).toEqual({ name: 'logged', stage: 'in', description: 'kept' });
    expect(config!.body).toEqual({
      name: 'c',
      configuration: { parameters: { user: 'u', '#password': '[redacted]', api_key: '[redacted]', nested: [{ token: '[redacted]' }] } },
    });
    expect(typeof event!.body).toBe('string');
    expect((event!.body as string).length).toBe(4097);
    expect((event!.body as string).endsWith('…')).toBe(true);
    expect(verify!.body).toBeUndefined();
    expect(JSON.stringify((await admin('GET', '/requests')).body)).not.toContain('"p"');
  });
});

describe('admin endpoints switched off', () => {
  test('answer 404 when adminEnabled is false', async () => {
    const options = memoryEmulatorOptions({ adminEnabled: false });
    const emulator = await createEmulator(options);
    try {
      const res = await request(`${emulator.url}/_emulator/faults`, { method: 'DELETE' });
      await res.body.dump();
      expect(res.statusCode).toBe(404);
      expect((await client(emulator)('GET', '/tokens/verify', { token: TOKEN })).status).toBe(200);
    } finally {
      await emulator.close();
      rmSync(options.dataDir, { recursive: true, force: true });
    }
  });
});
