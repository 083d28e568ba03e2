import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { SapiError } from '../../../src/errors';
import { createStorageClient, type StorageClient, type StorageClientOptions } from '../../../src/storage-api/client';
import { hang, json, reset, ScriptedServer, text } from './scripted-server';
import { preparedSample } from './fixtures';

const job = (id: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  status: 'waiting',
  url: `http://x/v2/storage/jobs/${id}`,
  operationName: 'tableCreate',
  ...extra,
});

describe('Storage API client against a real HTTP server', () => {
  let server: ScriptedServer;
  let client: StorageClient;
  const retries: string[] = [];

  function make(extra: Partial<StorageClientOptions> = {}): StorageClient {
    return createStorageClient({
      url: server.url,
      token: 'secret-token',
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      timeouts: { headersMs: 2000 },
      onRetry: (i) => retries.push(i.reason),
      ...extra,
    });
  }

  beforeEach(async () => {
    retries.length = 0;
    server = await new ScriptedServer().start();
    client = make();
  });

  afterEach(async () => {
    await client.close();
    await server.stop();
  });

  it('retries a GET that answered 500 and returns the second answer', async () => {
    server.on(
      'GET',
      '/v2/storage/tables/in.c-main.t',
      json(500, { error: 'oops', code: 'internal' }),
      json(200, { id: 'in.c-main.t', name: 't', columns: ['a'] }),
    );
    const table = await client.getTable({ tableId: 'in.c-main.t' });
    expect(table.columns).toEqual(['a']);
    expect(server.count('GET', '/v2/storage/tables/in.c-main.t')).toBe(2);
  });

  it('waits Retry-After on 429 before the next attempt', async () => {
    server.on('GET', '/v2/storage/buckets', json(429, { error: 'slow down' }, { 'retry-after': '1' }), json(200, [{ id: 'in.c-a', name: 'c-a', stage: 'in' }]));
    const delays: number[] = [];
    await client.close();
    client = make({ onRetry: (i) => delays.push(i.delayMs) });
    const buckets = await client.listBuckets();
    // the wait it decided on (and slept) is the server's Retry-After, not its own 1–5 ms backoff
    expect(delays).toEqual([1000]);
    expect(buckets.map((b) => b.id)).toEqual(['in.c-a']);
    expect(server.count('GET', '/v2/storage/buckets')).toBe(2);
  });

  it('reports HTML instead of JSON with the request and the start of the body', async () => {
    server.on('GET', '/v2/storage/buckets/in.c-a', text(200, '<html><head><title>Proxy login</title></head><body>please sign in</body></html>'));
    const err = await client.getBucket({ bucketId: 'in.c-a' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SapiError);
    expect(err).toMatchObject({ code: 'SAPI_INVALID_RESPONSE', retryable: true });
    expect((err as Error).message).toContain('GET /v2/storage/buckets/in.c-a returned an invalid response (200): expected JSON, got HTML');
    expect((err as Error).message).toContain('<html><head><title>Proxy login');
    expect(server.count('GET', '/v2/storage/buckets/in.c-a')).toBe(1);
  });

  it('reports a response that does not match the schema', async () => {
    server.on('GET', '/v2/storage/tables/in.c-a.t', json(200, { name: 't' }));
    await expect(client.getTable({ tableId: 'in.c-a.t' })).rejects.toMatchObject({
      code: 'SAPI_INVALID_RESPONSE',
      retryable: false,
      message: expect.stringContaining('id:'),
    });
  });

  it('retries a GET after a connection reset', async () => {
    server.on('GET', '/v2/storage/jobs/5', reset, json(200, job(5, { status: 'success' })));
    expect((await client.getJob({ jobId: 5 })).status).toBe('success');
    expect(server.count('GET', '/v2/storage/jobs/5')).toBe(2);
  });

  it('does not replay tables-async after a connection reset and flags mayHaveReachedService', async () => {
    server.on('POST', '/v2/storage/buckets/in.c-x/tables-async', reset, json(202, job(1)));
    const err = await client.createTableAsync({ bucketId: 'in.c-x', name: 't', dataFileId: 10 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_NETWORK', mayHaveReachedService: true, retryable: true });
    expect(server.count('POST', '/v2/storage/buckets/in.c-x/tables-async')).toBe(1);
  });

  it('does not replay import-async after a 500', async () => {
    server.on(
      'POST',
      '/v2/storage/tables/in.c-x.t/import-async',
      json(500, { error: 'Internal error', code: 'internal', exceptionId: 'exc-5' }),
      json(202, job(2)),
    );
    const err = await client.loadTableAsync({ tableId: 'in.c-x.t', dataFileId: 10, incremental: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SAPI_SERVER_ERROR', status: 500, exceptionId: 'exc-5', mayHaveReachedService: true });
    expect(server.count('POST', '/v2/storage/tables/in.c-x.t/import-async')).toBe(1);
  });

  it('replays export-async after 503 maintenance, which was not performed', async () => {
    server.on(
      'POST',
      '/v2/storage/tables/in.c-x.t/export-async',
      json(503, { status: 'maintenance', reason: 'upgrade', estimatedEndTime: null }, { 'retry-after': '0' }),
      json(202, job(3, { operationName: 'tableExport' })),
    );
    const j = await client.exportTableAsync({ tableId: 'in.c-x.t', columns: ['a', 'b'], gzip: true });
    expect(j.id).toBe(3);
    expect(server.count('POST', '/v2/storage/tables/in.c-x.t/export-async')).toBe(2);
    expect(JSON.parse(server.requests.at(-1)!.body.toString())).toEqual({ columns: 'a,b', gzip: true });
  });

  it('names the request, status, service code, message and exceptionId in a 404', async () => {
    server.on(
      'POST',
      '/v2/storage/buckets/in.c-x/tables-async',
      json(404, { error: 'Bucket in.c-x not found', code: 'storage.buckets.notFound', exceptionId: 'exception-123' }),
    );
    const err = await client.createTableAsync({ bucketId: 'in.c-x', name: 't', dataFileId: 1 }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      'POST /v2/storage/buckets/in.c-x/tables-async failed: 404 storage.buckets.notFound "Bucket in.c-x not found" [exceptionId=exception-123]',
    );
    expect(err).toMatchObject({ code: 'SAPI_NOT_FOUND', retryable: false, mayHaveReachedService: false });
  });

  it('gives up after maxAttempts of 502 and says how many requests were made', async () => {
    server.on('GET', '/v2/storage/buckets', text(502, '<html>Bad Gateway</html>'));
    await expect(client.listBuckets()).rejects.toMatchObject({ code: 'SAPI_SERVER_ERROR', status: 502, message: expect.stringContaining('Bad Gateway') });
    expect(server.count('GET', '/v2/storage/buckets')).toBe(5);
  });

  it('never retries 401 and hints at the token', async () => {
    server.on('GET', '/v2/storage/tokens/verify', json(401, { error: 'Invalid access token', code: 'storage.tokenInvalid', exceptionId: 'e' }));
    await expect(client.verifyToken()).rejects.toMatchObject({ code: 'SAPI_UNAUTHORIZED', message: expect.stringContaining('check the Storage token') });
    expect(server.count('GET', '/v2/storage/tokens/verify')).toBe(1);
  });

  it('times out a GET that never answers, and retries it', async () => {
    await client.close();
    client = make({ timeouts: { headersMs: 200 }, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 } });
    server.on('GET', '/v2/storage/jobs/9', hang);
    await expect(client.getJob({ jobId: 9 })).rejects.toMatchObject({ code: 'SAPI_TIMEOUT', message: expect.stringContaining('headers timeout after 200 ms') });
    expect(server.count('GET', '/v2/storage/jobs/9')).toBe(2);
  });

  it('does not replay a prepare that timed out', async () => {
    await client.close();
    client = make({ timeouts: { headersMs: 200 } });
    server.on('POST', '/v2/storage/files/prepare', hang);
    await expect(client.prepareFile({ name: 'a.csv' })).rejects.toMatchObject({ code: 'SAPI_TIMEOUT', mayHaveReachedService: true });
    expect(server.count('POST', '/v2/storage/files/prepare')).toBe(1);
  });

  it('retries a non-idempotent POST when the connection is refused, then reports a network error', async () => {
    const url = server.url;
    await server.stop();
    await client.close();
    client = createStorageClient({ url, token: 't', retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 }, onRetry: (i) => retries.push(i.reason) });
    await expect(client.prepareFile({ name: 'a.csv' })).rejects.toMatchObject({ code: 'SAPI_NETWORK', mayHaveReachedService: false });
    expect(retries).toEqual(['request did not reach the service', 'request did not reach the service']);
  });

  it('sends the token, the run id and JSON; prepares with federationToken', async () => {
    await client.close();
    client = make({ runId: 'run-1' });
    server.on('POST', '/v2/storage/files/prepare', json(201, preparedSample));
    const f = await client.prepareFile({ name: 'data.csv', sizeBytes: 1024, tags: ['a'], isSliced: false });
    expect(f.uploadParams!.bucket).toBe('kbc-sapi-files');
    const seen = server.requests[0]!;
    expect(seen.headers['x-storageapi-token']).toBe('secret-token');
    expect(seen.headers['x-kbc-runid']).toBe('run-1');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen.body.toString())).toEqual({ name: 'data.csv', sizeBytes: 1024, tags: ['a'], isSliced: false, federationToken: true });
  });

  it('uses branch paths for files, buckets and tables but not for jobs', async () => {
    await client.close();
    client = make({ branchId: 123 });
    server.on('GET', '/v2/storage/branch/123/files/7', json(200, { id: 7, name: 'f' }));
    server.on('GET', '/v2/storage/branch/123/buckets/in.c-a/tables', json(200, []));
    server.on('POST', '/v2/storage/branch/123/tables/in.c-a.t/import-async', json(202, job(8, { operationName: 'tableImport' })));
    server.on('GET', '/v2/storage/jobs/8', json(200, job(8, { status: 'success' })));
    await client.getFile({ fileId: 7, federationToken: true });
    await client.listTables({ bucketId: 'in.c-a' });
    const j = await client.loadTableAsync({ tableId: 'in.c-a.t', dataFileId: 5, incremental: false, columns: ['a', 'b'], withoutHeaders: true });
    await client.getJob({ jobId: j.id });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v2/storage/branch/123/files/7?federationToken=1',
      'GET /v2/storage/branch/123/buckets/in.c-a/tables',
      'POST /v2/storage/branch/123/tables/in.c-a.t/import-async',
      'GET /v2/storage/jobs/8',
    ]);
    expect(JSON.parse(server.requests[2]!.body.toString())).toEqual({ dataFileId: 5, incremental: false, columns: ['a', 'b'], withoutHeaders: true });
  });

  it('accepts a terminal 202 whose error is a string', async () => {
    server.on('POST', '/v2/storage/buckets/in.c-a/tables-async', json(202, job(4, { status: 'error', error: 'File 1 not found' })));
    const j = await client.createTableAsync({ bucketId: 'in.c-a', name: 't', dataFileId: 1, primaryKey: ['id', 'ts'] });
    expect(j.error).toBe('File 1 not found');
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ name: 't', dataFileId: 1, primaryKey: 'id,ts' });
  });

  it('lists jobs with limit and offset', async () => {
    server.on('GET', '/v2/storage/jobs', json(200, [job(2), job(1)]));
    const jobs = await client.listJobs({ limit: 2, offset: 4 });
    expect(jobs.map((j) => j.id)).toEqual([2, 1]);
    expect(server.requests[0]!.url).toBe('/v2/storage/jobs?limit=2&offset=4');
  });

  it('rejects invalid input before sending anything', async () => {
    await expect(client.createTableAsync({ bucketId: '', name: 't', dataFileId: 1 })).rejects.toMatchObject({ code: 'SAPI_INVALID_INPUT', retryable: false });
    await expect(client.loadTableAsync({ tableId: 'a.b.c', dataFileId: 0, incremental: true })).rejects.toMatchObject({ code: 'SAPI_INVALID_INPUT' });
    expect(server.requests).toHaveLength(0);
  });

  describe('importer upload', () => {
    const csv = 'id,name\n1,a\n2,b\n';

    function multipartPart(body: Buffer, contentType: string, name: string): string | undefined {
      const boundary = /boundary=(.+)$/.exec(contentType)![1]!;
      for (const part of body.toString('latin1').split(`--${boundary}`)) {
        if (part.includes(`name="${name}"`)) return part.slice(part.indexOf('\r\n\r\n') + 4, part.lastIndexOf('\r\n'));
      }
      return undefined;
    }

    it('discovers the importer from the index once and streams the file as multipart field data', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sapi-imp-'));
      const file = path.join(dir, 'rows.csv');
      fs.writeFileSync(file, csv);
      server.on(
        'GET',
        '/v2/storage',
        json(200, {
          services: [
            { id: 'syrup', url: 'http://nope' },
            { id: 'import', url: `${server.url}/importer/` },
          ],
        }),
      );
      server.on('POST', '/importer/upload-file', json(200, { id: 55, name: 'rows.csv', isSliced: false, tags: ['x'] }));
      const f1 = await client.uploadViaImporter({ path: file, tags: ['x', 'y'] });
      await client.uploadViaImporter({ stream: Readable.from([Buffer.from(csv)]), name: 'rows.csv' });
      expect(f1.id).toBe(55);
      expect(server.count('GET', '/v2/storage')).toBe(1);
      const up = server.requests.find((r) => r.url === '/importer/upload-file')!;
      expect(up.headers['content-length']).toBe(String(up.body.length));
      expect(up.headers['x-storageapi-token']).toBe('secret-token');
      const ct = String(up.headers['content-type']);
      expect(multipartPart(up.body, ct, 'data')).toBe(csv);
      expect(multipartPart(up.body, ct, 'name')).toBe('rows.csv');
      expect(up.body.toString()).toContain('name="tags[]"\r\n\r\ny\r\n');
      const streamed = server.requests.filter((r) => r.url === '/importer/upload-file')[1]!;
      expect(streamed.headers['transfer-encoding']).toBe('chunked');
      expect(multipartPart(streamed.body, String(streamed.headers['content-type']), 'data')).toBe(csv);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('reports the importer error body', async () => {
      await client.close();
      client = make({ importUrl: `${server.url}/imp` });
      server.on('POST', '/imp/upload-file', json(400, { message: 'File is too big', status: 'error' }));
      await expect(client.uploadViaImporter({ stream: Readable.from([Buffer.from(csv)]), name: 'a.csv' })).rejects.toMatchObject({
        code: 'SAPI_VALIDATION',
        message: expect.stringContaining('"File is too big"'),
      });
    });
  });
});
