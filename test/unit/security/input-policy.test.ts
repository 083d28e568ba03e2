import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SapiInputForbiddenError, SapiInvalidInputError } from '../../../src/errors';
import { loadSettings } from '../../../src/config';
import { checkObjectUri, CLOSED_POLICY, hostMatches, urlAllowed, type InputPolicy } from '../../../src/security/policy';
import { addressProblem, checkUrl, normalizeAddress } from '../../../src/security/network';
import { confineLocalDestination, confineLocalSource } from '../../../src/security/local-paths';
import { assertRedirectKeepsSecrets, assertSecretsBound, unboundSecrets } from '../../../src/extractor/secret-hosts';

// the real realpath, counted (the roots' real paths are kept between checks)
jest.mock('node:fs/promises', () => {
  const actual = jest.requireActual<typeof fsPromises>('node:fs/promises');
  return { ...actual, realpath: jest.fn(actual.realpath) };
});

const policy = (over: Partial<InputPolicy> = {}): InputPolicy => ({ ...CLOSED_POLICY, ...over });

describe('the input policy settings', () => {
  it("are closed by default: no local roots, no object prefixes, the worker's own services refused by name", () => {
    const settings = loadSettings({
      SAPI_URL: 'http://127.0.0.1:8080',
      SAPI_TOKEN: 't',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000',
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
    });
    expect(settings.policy).toEqual({
      localRoots: [],
      allowedNetworks: [],
      internalOrigins: ['127.0.0.1:8080', '127.0.0.1:9000', '127.0.0.1:7233'],
      objectPrefixes: [],
    });
  });

  it('refuse a relative root, a malformed allow-list entry or prefix, naming the variable', () => {
    expect(() => loadSettings({ SAPI_LOCAL_ROOTS: 'data' })).toThrow(/SAPI_LOCAL_ROOTS: "data" is not an absolute path/);
    expect(() => loadSettings({ SAPI_ALLOWED_URLS: 'ftp stuff' })).toThrow(/SAPI_ALLOWED_URLS/);
    expect(() => loadSettings({ SAPI_ALLOWED_OBJECT_PREFIXES: 'bucket/x' })).toThrow(/SAPI_ALLOWED_OBJECT_PREFIXES/);
  });
});

describe('URLs and addresses', () => {
  it('refuse loopback, private, link-local and mapped forms of them unless a network is allowed', () => {
    const closed = policy();
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
    ]) {
      expect([address, addressProblem(closed, address, '80')]).toEqual([address, expect.any(String)]);
    }
    expect(addressProblem(closed, '93.184.216.34', '80')).toBeUndefined();
    expect(addressProblem(policy({ allowedNetworks: ['127.0.0.0/8'] }), '127.0.0.1', '8080')).toBeUndefined();
    expect(normalizeAddress('::ffff:7f00:1')).toBe('127.0.0.1');
  });

  it("refuse the worker's own services even where loopback is allowed", () => {
    const dev = policy({ allowedNetworks: ['127.0.0.0/8'], internalOrigins: ['127.0.0.1:7243', 'localhost:9000'] });
    expect(addressProblem(dev, '127.0.0.1', '7243')).toMatch(/own services/);
    expect(addressProblem(dev, '127.0.0.2', '9000')).toMatch(/own services/);
    expect(addressProblem(dev, '127.0.0.1', '8099')).toBeUndefined();
    expect(() => checkUrl(dev, 'source', 'http://127.0.0.1:7243/api/v1/namespaces')).toThrow(SapiInputForbiddenError);
  });

  it('match allow-list prefixes by scheme, host, port and path, and host patterns by name', () => {
    const listed = policy({ allowedUrls: ['https://api.crm.example/v1/', '*.files.example', 'data.example:8443'] });
    expect(urlAllowed(listed, new URL('https://api.crm.example/v1/items'))).toBe(true);
    expect(urlAllowed(listed, new URL('https://api.crm.example/v2/items'))).toBe(false);
    expect(urlAllowed(listed, new URL('http://api.crm.example/v1/items'))).toBe(false);
    expect(urlAllowed(listed, new URL('https://a.files.example/x.csv'))).toBe(true);
    expect(urlAllowed(listed, new URL('https://files.example/x.csv'))).toBe(false);
    expect(urlAllowed(listed, new URL('https://data.example:8443/x'))).toBe(true);
    expect(urlAllowed(listed, new URL('https://data.example/x'))).toBe(false);
    expect(hostMatches('[::1]:8080', '[::1]', '8080')).toBe(true);
  });

  it('allow the address an allow-list entry names as an IP literal', () => {
    const listed = policy({ allowedUrls: ['http://10.0.0.5:8080/'] });
    expect(() => checkUrl(listed, 'source', 'http://10.0.0.5:8080/a.csv')).not.toThrow();
    expect(() => checkUrl(listed, 'source', 'http://10.0.0.6:8080/a.csv')).toThrow(/allow-list/);
  });

  it('refuse other schemes', () => {
    expect(() => checkUrl(policy(), 'source', 'gopher://example.com/')).toThrow(/only http/);
  });
});

describe('s3:// objects', () => {
  const prefixed = policy({ objectPrefixes: ['s3://exchange/incoming/'] });
  it('are allowed under a configured prefix only, without dot segments', () => {
    expect(() => checkObjectUri(prefixed, 'source', 's3://exchange/incoming/a.csv')).not.toThrow();
    expect(() => checkObjectUri(prefixed, 'source', 's3://exchange/other/a.csv')).toThrow(SapiInputForbiddenError);
    expect(() => checkObjectUri(prefixed, 'source', 's3://exchange/incoming/../other/a.csv')).toThrow(/segments/);
    expect(() => checkObjectUri(policy(), 'source', 's3://exchange/incoming/a.csv')).toThrow(/SAPI_ALLOWED_OBJECT_PREFIXES is empty/);
  });
});

describe('local paths', () => {
  const base = mkdtempSync(join(tmpdir(), 'confine-'));
  const root = join(base, 'root');
  mkdirSync(root);
  writeFileSync(join(root, 'in.csv'), 'a\n');
  writeFileSync(join(base, 'secret.env'), 'TOKEN=x\n');
  symlinkSync(join(base, 'secret.env'), join(root, 'link.csv'));
  const rooted = policy({ localRoots: [root] });

  it('are read under a root only, after symlinks and .. are resolved, and must be regular files', async () => {
    await expect(confineLocalSource(rooted, 'source', join(root, 'in.csv'))).resolves.toMatch(/in\.csv$/);
    await expect(confineLocalSource(rooted, 'source', join(root, 'link.csv'))).rejects.toThrow(/outside the worker's allowed roots/);
    await expect(confineLocalSource(rooted, 'source', `${root}/../secret.env`)).rejects.toThrow(SapiInputForbiddenError);
    await expect(confineLocalSource(rooted, 'source', root)).rejects.toThrow(/regular file/);
    await expect(confineLocalSource(policy({ localRoots: ['/'] }), 'source', '/proc/self/environ')).rejects.toThrow(/\/proc/);
    await expect(confineLocalSource(policy(), 'source', join(root, 'in.csv'))).rejects.toThrow(/SAPI_LOCAL_ROOTS is empty/);
  });

  it('say a missing file under a root is missing, and outside a root only that it is refused', async () => {
    await expect(confineLocalSource(rooted, 'source', join(root, 'nope.csv'))).rejects.toThrow(SapiInvalidInputError);
    await expect(confineLocalSource(rooted, 'source', join(base, 'nope.csv'))).rejects.toThrow(SapiInputForbiddenError);
  });

  it('are written under a root, into new folders too, and replace a file only with overwrite', async () => {
    await expect(confineLocalDestination(rooted, 'destination', join(root, 'new', 'deep', 'out.csv'), false)).resolves.toMatch(/new\/deep\/out\.csv$/);
    await expect(confineLocalDestination(rooted, 'destination', join(root, 'in.csv'), false)).rejects.toThrow(/overwrite/);
    await expect(confineLocalDestination(rooted, 'destination', join(root, 'in.csv'), true)).resolves.toMatch(/in\.csv$/);
    await expect(confineLocalDestination(rooted, 'destination', join(base, 'out.csv'), true)).rejects.toThrow(SapiInputForbiddenError);
    await expect(confineLocalDestination(rooted, 'destination', join(root, 'link.csv'), true)).rejects.toThrow(SapiInputForbiddenError);
  });
});

describe('the real paths of the local roots', () => {
  const base = mkdtempSync(join(tmpdir(), 'confine-roots-'));
  for (const dir of ['a', 'b', 'other1', 'other2']) mkdirSync(join(base, dir));
  writeFileSync(join(base, 'a', 'in.csv'), 'a\n');
  writeFileSync(join(base, 'b', 'in.csv'), 'b\n');
  const link = join(base, 'root');
  symlinkSync(join(base, 'a'), link);
  const rooted = policy({ localRoots: [join(base, 'other1'), join(base, 'other2'), link] });

  it('are resolved once, not on every check (one realpath per checked file)', async () => {
    const calls = fsPromises.realpath as unknown as jest.Mock;
    calls.mockClear();
    for (let i = 0; i < 10; i++) await expect(confineLocalSource(rooted, 'source', join(link, 'in.csv'))).resolves.toBe(join(base, 'a', 'in.csv'));
    // 10 files + at most the 3 roots once (before: 10 × (1 + 3) = 40)
    expect(calls.mock.calls.length).toBeLessThanOrEqual(10 + 3);
  });

  it('are resolved again before a path is refused: a root that moved is followed at once', async () => {
    await expect(confineLocalSource(rooted, 'source', join(link, 'in.csv'))).resolves.toBe(join(base, 'a', 'in.csv'));
    rmSync(link);
    symlinkSync(join(base, 'b'), link);
    await expect(confineLocalSource(rooted, 'source', join(link, 'in.csv'))).resolves.toBe(join(base, 'b', 'in.csv'));
    await expect(confineLocalDestination(rooted, 'destination', join(link, 'out.csv'), false)).resolves.toBe(join(base, 'b', 'out.csv'));
    await expect(confineLocalSource(rooted, 'source', join(base, 'a', 'in.csv'))).rejects.toThrow(SapiInputForbiddenError);
  });
});

describe('secrets bound to their hosts', () => {
  const source = { env: { SAPI_SECRET_CRM: 'v', SAPI_SECRET_CRM_HOSTS: 'api.crm.example', SAPI_SECRET_FREE: 'w' }, prefix: 'SAPI_SECRET_', bindHosts: true };
  const request = (url: string, name = 'SAPI_SECRET_CRM') => ({ method: 'GET', url, headers: { 'X-Api-Key': `\${env:${name}}` } });

  it('go only to the hosts of their _HOSTS variable', () => {
    expect(() => assertSecretsBound(request('https://api.crm.example/items'), 'https://api.crm.example/items', source)).not.toThrow();
    expect(() => assertSecretsBound(request('https://attacker.example/'), 'https://attacker.example/', source)).toThrow(/SAPI_SECRET_CRM_HOSTS/);
  });

  it('go nowhere without a _HOSTS variable, which validation reports before any request', () => {
    expect(() => assertSecretsBound(request('https://api.crm.example/', 'SAPI_SECRET_FREE'), 'https://api.crm.example/', source)).toThrow(/names no host/);
    expect(unboundSecrets(request('x', 'SAPI_SECRET_FREE'), source)).toEqual([
      { path: '${env:SAPI_SECRET_FREE}', message: expect.stringContaining('SAPI_SECRET_FREE_HOSTS') },
    ]);
  });

  it('are not checked for library callers that do not ask for it', () => {
    expect(() => assertSecretsBound(request('https://x/', 'SAPI_SECRET_FREE'), 'https://x/', { ...source, bindHosts: false })).not.toThrow();
  });

  it('are seen percent-encoded in a query parameter too (as the request URL carries them)', () => {
    const inQuery = { method: 'GET', url: 'https://attacker.example/items?apiKey=%24%7Benv%3ASAPI_SECRET_CRM%7D', headers: {} };
    expect(() => assertSecretsBound(inQuery, inQuery.url, source)).toThrow(/SAPI_SECRET_CRM_HOSTS/);
  });

  it('do not follow a redirect to a host they are not bound to; unbound (library use) they stay on their origin', () => {
    const from = new URL('https://api.crm.example/items');
    const hop =
      (to: string, s = source) =>
      () =>
        assertRedirectKeepsSecrets(request(from.href), from, new URL(to), 302, s);
    expect(hop('https://api.crm.example/v2/items')).not.toThrow();
    expect(hop('https://other.example/items')).toThrow(
      /api\.crm\.example answered HTTP 302 redirecting a request that carries this secret to other\.example; the secret may only be sent to the hosts of SAPI_SECRET_CRM_HOSTS \(api\.crm\.example\)/,
    );
    expect(hop('https://api.crm.example/x', { ...source, bindHosts: false })).not.toThrow();
    expect(hop('https://cdn.crm.example/x', { ...source, bindHosts: false })).toThrow(/its own origin \(api\.crm\.example\)/);
    expect(() =>
      assertRedirectKeepsSecrets({ method: 'GET', url: from.href, headers: {} }, from, new URL('https://other.example/'), 307, source),
    ).not.toThrow();
  });
});
