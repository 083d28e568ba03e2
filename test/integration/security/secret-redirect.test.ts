/**
 * A secret bound to one API host must not follow that host's redirect elsewhere (issue 35): `X-Api-Key:
 * ${env:SAPI_SECRET_…}` (or the secret in a query parameter) bound to host A, and A answering 301/302/307/308 to host
 * B (allow-listed, so only the binding stands in the way). The worker refuses the redirect before following it, with
 * `SAPI_INPUT_FORBIDDEN` naming the reference and both hosts: B receives nothing, the run fails without retries. A
 * redirect on the bound host is still followed, and the allow-list is checked on every hop's whole URL (extraction
 * requests and an import's HTTP source).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import type { ExtractInput } from '../../../src/contracts/extract';
import type { ImportTableInput } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf } from '../../harness/workflow-failure';

/** A local API that records every request it gets (path with query, headers). */
interface Host {
  url: string;
  host: string;
  seen: Array<{ url: string; headers: IncomingHttpHeaders }>;
  server: Server;
}

async function host(answer: (url: string, self: Host) => { status: number; location?: string }): Promise<Host> {
  const self: Host = { url: '', host: '', seen: [], server: undefined as unknown as Server };
  self.server = createServer((req, res) => {
    self.seen.push({ url: req.url ?? '/', headers: req.headers });
    const { status, location } = answer(req.url ?? '/', self);
    if (location) {
      res.writeHead(status, { location });
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        items: [
          { id: 1, from: self.host },
          { id: 2, from: self.host },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => self.server.listen(0, '127.0.0.1', resolve));
  const port = (self.server.address() as AddressInfo).port;
  self.host = `127.0.0.1:${port}`;
  self.url = `http://${self.host}`;
  return self;
}

const SECRET = 'redirect-secret-value-7c2e41';
const SECRET_NAME = 'SAPI_SECRET_REDIRECT_CRM';
const REF = `\${env:${SECRET_NAME}}`;

describe('a secret bound to one host and that host redirecting elsewhere', () => {
  let env: SapiTestEnv;
  let a: Host;
  let b: Host;
  /** The status A answers its redirecting paths with (set per case). */
  let status = 302;
  let n = 0;

  beforeAll(async () => {
    b = await host(() => ({ status: 200 }));
    a = await host((url) => {
      const [path, query] = url.split('?');
      const keep = query ? `?${query}` : '';
      // /away/…: to B, keeping the query (as a redirecting proxy would); /here/…: to A's own /api/…
      if (path!.startsWith('/away/')) return { status, location: `${b.url}/api/items${keep}` };
      if (path!.startsWith('/private/')) return { status, location: `${b.url}/private/items` };
      if (path!.startsWith('/here/')) return { status, location: `/api/items${keep}` };
      return { status: 200 };
    });
    process.env[SECRET_NAME] = SECRET;
    process.env[`${SECRET_NAME}_HOSTS`] = a.host;
    env = await startSapiTestEnv('secret-redirect', {
      env: {
        SAPI_ALLOWED_NETWORKS: '',
        // both hosts are allowed: only the secret's binding stands between B and the secret
        SAPI_ALLOWED_URLS: `${a.url}/,${b.url}/api/`,
      },
    });
  });
  afterAll(async () => {
    delete process.env[SECRET_NAME];
    delete process.env[`${SECRET_NAME}_HOSTS`];
    await Promise.all([a, b].map((h) => h && new Promise((resolve) => h.server.close(resolve))));
    await env?.stop();
  });
  beforeEach(() => {
    a.seen.length = 0;
    b.seen.length = 0;
  });

  const extract = (endpoint: string, opts: { headers?: Record<string, string>; params?: Record<string, string>; baseUrl?: string } = {}) =>
    env.client.workflow.execute('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `secret-redirect-${Date.now()}-${++n}`,
      args: [
        {
          config: {
            parameters: {
              api: { baseUrl: opts.baseUrl ?? `${a.url}/`, http: { headers: opts.headers ?? {} } },
              config: {
                outputBucket: `redirect-${n}`,
                jobs: [{ endpoint, dataField: 'items', dataType: 'items', ...(opts.params ? { params: opts.params } : {}) }],
              },
            },
          },
          options: { polling: { initialMs: 200, maxMs: 1000 }, mode: 'page' },
        } as ExtractInput,
      ],
    });

  /** Every header value and URL B saw, as one string to search for the secret. */
  const whatBSaw = () => JSON.stringify(b.seen);

  describe.each([301, 302, 307, 308])('HTTP %i', (code) => {
    beforeEach(() => {
      status = code;
    });

    it('refuses to follow the redirect of a request carrying the secret in a header: B receives nothing', async () => {
      const failure = await failureOf(extract('away/items', { headers: { 'X-Api-Key': REF } }));
      expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toContain(REF);
      expect(failure.message).toContain(`${a.host} answered HTTP ${code}`);
      expect(failure.message).toContain(`to ${b.host}`);
      expect(failure.message).toContain(`${SECRET_NAME}_HOSTS (${a.host})`);
      expect(failure.message).not.toContain(SECRET);
      expect(a.seen.map((s) => s.headers['x-api-key'])).toEqual([SECRET]);
      expect(b.seen).toEqual([]);
      expect(whatBSaw()).not.toContain(SECRET);
    });

    it('refuses to follow the redirect of a request carrying the secret in its query (the Location keeps it): B receives nothing', async () => {
      const failure = await failureOf(extract('away/items', { params: { apiKey: REF } }));
      expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
      expect(failure.message).toContain(REF);
      expect(failure.message).toContain(`to ${b.host}`);
      expect(failure.message).not.toContain(SECRET);
      expect(a.seen.map((s) => s.url)).toEqual([`/away/items?apiKey=${SECRET}`]);
      expect(b.seen).toEqual([]);
    });
  });

  it('refuses a secret in a query parameter sent straight to a host it is not bound to (the URL carries the reference encoded)', async () => {
    const failure = await failureOf(extract('items', { baseUrl: `${b.url}/api/`, params: { apiKey: REF } }));
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(failure.message).toContain(REF);
    expect(failure.message).not.toContain(SECRET);
    expect(b.seen).toEqual([]);
  });

  it('follows a redirect on the bound host with the secret, and rows come from there', async () => {
    status = 307;
    const result = (await extract('here/items', { headers: { 'X-Api-Key': REF } })) as { tables: Array<{ rows: number }> };
    expect(result.tables.map((t) => t.rows)).toEqual([2]);
    expect(a.seen.map((s) => [s.url, s.headers['x-api-key']])).toEqual([
      ['/here/items', SECRET],
      ['/api/items', SECRET],
    ]);
    expect(b.seen).toEqual([]);
  });

  it('follows a redirect to another allowed host when the request carries no secret', async () => {
    status = 302;
    const result = (await extract('away/items', { headers: { 'X-Plain': 'not-a-secret' } })) as { tables: Array<{ rows: number }> };
    expect(result.tables.map((t) => t.rows)).toEqual([2]);
    expect(b.seen.map((s) => [s.url, s.headers['x-plain']])).toEqual([['/api/items', 'not-a-secret']]);
  });

  it("checks each hop's whole URL against the allow-list: a redirect to an allowed host outside the allowed prefix is not followed", async () => {
    status = 302;
    const failure = await failureOf(extract('private/items'));
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(failure.message).toContain("not on the worker's allow-list");
    expect(failure.message).toContain(`${b.url}/private/items`);
    expect(b.seen).toEqual([]);
  });

  it("checks each hop of an import's HTTP source the same way: a redirect outside the allowed prefix is not followed", async () => {
    status = 302;
    const failure = await failureOf(
      env.client.workflow.execute('importTableWorkflow', {
        taskQueue: env.taskQueue,
        workflowId: `secret-redirect-import-${Date.now()}`,
        args: [
          {
            source: `${a.url}/private/data.csv`,
            bucketId: 'in.c-redirect',
            createBucket: true,
            table: 'hop',
            polling: { initialMs: 200, maxMs: 1000 },
          } as ImportTableInput,
        ],
      }),
    );
    expect(failure.type).toBe('SAPI_INPUT_FORBIDDEN');
    expect(failure.message).toContain(`${a.host} redirected the source to ${b.url}/private/items`);
    expect(a.seen.length).toBeGreaterThan(0);
    expect(b.seen).toEqual([]);
  });
});
