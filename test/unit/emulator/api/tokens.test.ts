import { DEFAULT_STACK_REGION } from '../../../../src/emulator';
import { type Client, type Json, TOKEN, client, createBucket, useMemoryEmulator } from '../../../harness/emulator-api';

/**
 * Tokens as the service answers them (its API documentation `apiary.apib`, its Go SDK's `Token`, its PHP client's
 * `TokensTest`): string ids, the secret, `bucketPermissions` an empty list when none, verify and detail with
 * `organization` and `owner`.
 */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/;
const LIMITED = 'test-token-limited';

describe('tokens as the service answers them', () => {
  const env = useMemoryEmulator({
    tokens: [
      { token: TOKEN, id: 101, description: 'test token' },
      { token: LIMITED, id: 102, description: 'limited', isMasterToken: false },
    ],
  });
  const as = (token: string | null): Client => {
    const call = client(env.emulator);
    return ((method, path, options = {}) => call(method, path, { token, ...options })) as Client;
  };

  beforeAll(async () => {
    await createBucket(env.api, 'tok');
  });

  test('tokens/verify without a token answers 401 "Access token must be set" without a code; a wrong token 401 storage.tokenInvalid', async () => {
    for (const token of [null, '']) {
      const res = await as(token)('GET', '/tokens/verify');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Access token must be set', exceptionId: expect.stringMatching(/^exception-/), status: 'error' });
    }
    const wrong = await as('nope')('GET', '/tokens/verify');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({
      error: 'Invalid access token',
      code: 'storage.tokenInvalid',
      exceptionId: expect.stringMatching(/^exception-/),
      status: 'error',
    });
  });

  test('tokens/verify of a master token: string id, its secret, admin, organization and owner', async () => {
    const res = await env.api('GET', '/tokens/verify');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: '101',
      token: TOKEN,
      description: 'test token',
      created: expect.stringMatching(TIMESTAMP),
      refreshed: expect.stringMatching(TIMESTAMP),
      uri: `${env.emulator.url}/v2/storage/tokens/101`,
      isMasterToken: true,
      canManageBuckets: true,
      canManageTokens: true,
      canReadAllFileUploads: true,
      canPurgeTrash: true,
      canManageProtectedDefaultBranch: false,
      canCreateJobs: false,
      expires: null,
      isExpired: false,
      isDisabled: false,
      dailyCapacity: 0,
      bucketPermissions: { 'in.c-tok': 'manage' },
      admin: { id: 101, name: 'test token', features: [], isOrganizationMember: false, role: 'admin', isActivated: false },
      organization: { id: '1' },
      // a project on the service always has features: the emulator claims the ones it serves as such (issue 39)
      owner: expect.objectContaining({
        id: 1,
        name: 'Storage API emulator',
        fileStorageProvider: 'aws',
        region: DEFAULT_STACK_REGION,
        features: ['queuev2', 'storage-types'],
      }),
    });
  });

  test('POST tokens answers 201 with a string id, the secret, an empty bucketPermissions list, creatorToken and no admin, organization or owner', async () => {
    const res = await env.api('POST', '/tokens', { json: { description: 'made', expiresIn: 600, componentAccess: ['keboola.ex-db-mysql'] } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      token: expect.stringMatching(new RegExp(`^1-${res.body.id}-[0-9a-f]{40}$`)),
      description: 'made',
      created: expect.stringMatching(TIMESTAMP),
      refreshed: res.body.created,
      uri: `${env.emulator.url}/v2/storage/tokens/${res.body.id}`,
      isMasterToken: false,
      canManageBuckets: false,
      canManageTokens: false,
      canReadAllFileUploads: false,
      canPurgeTrash: false,
      canManageProtectedDefaultBranch: false,
      canCreateJobs: false,
      expires: expect.stringMatching(TIMESTAMP),
      isExpired: false,
      isDisabled: false,
      dailyCapacity: 0,
      bucketPermissions: [],
      creatorToken: { id: 101, description: 'test token' },
      componentAccess: ['keboola.ex-db-mysql'],
    });
    const verified = (await as(res.body.token)('GET', '/tokens/verify')).body;
    expect(verified).toMatchObject({ id: res.body.id, token: res.body.token, bucketPermissions: [], organization: { id: '1' }, owner: { id: 1 } });
    expect(verified.admin).toBeUndefined();
  });

  test('GET tokens lists every token for a master token (ids as strings, oldest first) and only itself for a token without canManageTokens', async () => {
    const created = (await env.api('POST', '/tokens', { json: { description: 'listed' } })).body;
    const all = await env.api('GET', '/tokens');
    expect(all.status).toBe(200);
    const ids = all.body.map((t: Json) => t.id);
    expect(ids.slice(0, 2)).toEqual(['101', '102']);
    expect(ids).toContain(created.id);
    expect(all.body.every((t: Json) => typeof t.id === 'string' && t.owner === undefined && t.organization === undefined)).toBe(true);
    expect(all.body.find((t: Json) => t.id === created.id)).toMatchObject({ token: created.token, description: 'listed', creatorToken: { id: 101 } });
    const own = await as(LIMITED)('GET', '/tokens');
    expect(own.body.map((t: Json) => t.id)).toEqual(['102']);
    const branch = await env.api('GET', '/branch/default/tokens');
    expect(branch.body.map((t: Json) => t.id)).toEqual(ids);
  });

  test("GET tokens/{id} answers the detail with organization and owner {id, name}; another token's detail is 403 without canManageTokens, an unknown id 404", async () => {
    const created = (await env.api('POST', '/tokens', { json: { description: 'detailed' } })).body;
    const res = await env.api('GET', `/tokens/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created, organization: { id: '1' }, owner: { id: 1, name: 'Storage API emulator' } });
    expect((await as(LIMITED)('GET', '/tokens/102')).body).toMatchObject({ id: '102', description: 'limited' });
    const denied = await as(LIMITED)('GET', `/tokens/${created.id}`);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('accessDenied');
    for (const id of ['9999', 'foo']) {
      const missing = await env.api('GET', `/tokens/${id}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ code: 'storage.tokens.notFound', error: `token ${id} not found` });
    }
  });

  test('POST tokens/{id}/refresh gives a new secret and refreshed time, the old secret stops working; a configured token keeps its secret', async () => {
    const created = (await env.api('POST', '/tokens', { json: { description: 'refreshing' } })).body;
    await new Promise((r) => setTimeout(r, 1100));
    const res = await env.api('POST', `/tokens/${created.id}/refresh`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created, token: expect.stringMatching(/^1-\d+-[0-9a-f]{40}$/), refreshed: expect.stringMatching(TIMESTAMP) });
    expect(res.body.token).not.toBe(created.token);
    expect(res.body.refreshed > created.created).toBe(true);
    expect((await as(created.token)('GET', '/tokens/verify')).status).toBe(401);
    expect((await as(res.body.token)('GET', '/tokens/verify')).body).toMatchObject({ id: created.id, refreshed: res.body.refreshed });
    // A token refreshes itself; another token's refresh needs canManageTokens.
    const self = await as(res.body.token)('POST', `/tokens/${created.id}/refresh`);
    expect(self.status).toBe(200);
    expect((await as(self.body.token)('POST', '/tokens/101/refresh')).status).toBe(403);
    const configured = await env.api('POST', '/tokens/102/refresh');
    expect(configured.status).toBe(400);
    expect(configured.body.code).toBe('storage.tokens.cannotRefresh');
  });
});
