import { createStorageClient, type StorageClient } from '../../../src/storage-api/client';
import { findJobForExport, findJobForImport, startExportOnce, startImportOnce } from '../../../src/storage-api/reconcile';
import { json, reset, ScriptedServer } from './scripted-server';

const now = new Date();
const iso = (msAgo: number): string => new Date(now.getTime() - msAgo).toISOString();

function importJob(id: number, fileId: number, tableId: string | null, operationName = 'tableImport', msAgo = 1000): Record<string, unknown> {
  return {
    id,
    status: 'processing',
    url: `http://x/v2/storage/jobs/${id}`,
    operationName,
    tableId,
    operationParams: { source: { fileId } },
    createdTime: iso(msAgo),
  };
}

describe('reconciling async POSTs', () => {
  let server: ScriptedServer;
  let client: StorageClient;

  beforeEach(async () => {
    server = await new ScriptedServer().start();
    client = createStorageClient({ url: server.url, token: 't', retry: { baseDelayMs: 1, maxDelayMs: 2 } });
  });
  afterEach(async () => {
    await client.close();
    await server.stop();
  });

  describe('findJobForImport', () => {
    it('finds the job by operation, source file id and table, scanning pages newest first', async () => {
      const page1 = Array.from({ length: 3 }, (_, i) => importJob(100 - i, 1, 'in.c-a.t'));
      const page2 = [importJob(90, 7, 'in.c-a.other'), importJob(89, 7, 'in.c-a.t'), importJob(88, 7, 'in.c-a.t')];
      server.on('GET', '/v2/storage/jobs', (req, res) => json(200, new URL(req.url, 'http://x').searchParams.get('offset') === '0' ? page1 : page2)(req, res));
      const job = await findJobForImport({ client, operationName: 'tableImport', fileId: 7, tableId: 'in.c-a.t', pageSize: 3 });
      expect(job?.id).toBe(89);
      expect(server.requests.map((r) => r.url)).toEqual(['/v2/storage/jobs?limit=3&offset=0', '/v2/storage/jobs?limit=3&offset=3']);
    });

    it('matches a tableCreate by bucket and name while its tableId is still null', async () => {
      server.on(
        'GET',
        '/v2/storage/jobs',
        json(200, [
          { ...importJob(3, 7, null, 'tableCreate'), operationParams: { name: 'other', source: { fileId: 7 } } },
          { ...importJob(2, 7, null, 'tableCreate'), operationParams: { name: 't', source: { fileId: '7' } } },
        ]),
      );
      const job = await findJobForImport({ client, operationName: 'tableCreate', fileId: 7, bucketId: 'in.c-a', name: 't' });
      expect(job?.id).toBe(2);
    });

    /** A project's job list, newest first, paged by `limit`/`offset` as the service pages it. */
    function jobList(jobs: Record<string, unknown>[]) {
      return (req: { url: string }, res: Parameters<ReturnType<typeof json>>[1]) => {
        const q = new URL(req.url, 'http://x').searchParams;
        const offset = Number(q.get('offset') ?? 0);
        json(200, jobs.slice(offset, offset + Number(q.get('limit') ?? 100)))(req as never, res);
      };
    }

    it('walks back past thousands of newer jobs of a busy project to the one it looks for', async () => {
      // 2,500 jobs created after ours (another load's, the same table's other files): more than any fixed page budget
      const newer = Array.from({ length: 2_500 }, (_, i) => importJob(10_000 - i, 1_000 + i, 'in.c-a.t', 'tableImport', 500));
      server.on(
        'GET',
        '/v2/storage/jobs',
        jobList([...newer, importJob(7_000, 7, 'in.c-a.t', 'tableImport', 60_000), importJob(6_999, 6, 'in.c-a.t', 'tableImport', 7_200_000)]),
      );
      const job = await findJobForImport({ client, operationName: 'tableImport', fileId: 7, tableId: 'in.c-a.t', since: now.getTime() - 120_000 });
      expect(job?.id).toBe(7_000);
      expect(server.count('GET', '/v2/storage/jobs')).toBe(26); // 25 full pages of newer jobs, ours on the 26th
    });

    it('walks back as far as since reaches, and no further, when the job is not there', async () => {
      const recent = Array.from({ length: 1_500 }, (_, i) => importJob(10_000 - i, 1_000 + i, 'in.c-a.t', 'tableImport', 500));
      const old = Array.from({ length: 1_000 }, (_, i) => importJob(8_000 - i, 7, 'in.c-a.t', 'tableImport', 3_600_000));
      server.on('GET', '/v2/storage/jobs', jobList([...recent, ...old]));
      expect(await findJobForImport({ client, operationName: 'tableImport', fileId: 7, tableId: 'in.c-a.t', since: now.getTime() - 600_000 })).toBeUndefined();
      expect(server.count('GET', '/v2/storage/jobs')).toBe(16); // the 16th page starts with a job older than since
    });

    it('fails with SAPI_INVALID_RESPONSE rather than walking forever on a service that ignores offset', async () => {
      server.on(
        'GET',
        '/v2/storage/jobs',
        json(
          200,
          Array.from({ length: 100 }, (_, i) => importJob(100 - i, 1, 'in.c-a.t')),
        ),
      );
      await expect(findJobForImport({ client, operationName: 'tableImport', fileId: 7, tableId: 'in.c-a.t' })).rejects.toMatchObject({
        code: 'SAPI_INVALID_RESPONSE',
      });
      expect(server.count('GET', '/v2/storage/jobs')).toBe(21); // the first page, then 20 that brought nothing older
    });

    it('stops at jobs older than since', async () => {
      server.on(
        'GET',
        '/v2/storage/jobs',
        json(200, [importJob(3, 1, 'in.c-a.t', 'tableImport', 1000), importJob(2, 7, 'in.c-a.t', 'tableImport', 3_600_000)]),
      );
      expect(
        await findJobForImport({ client, operationName: 'tableImport', fileId: 7, tableId: 'in.c-a.t', since: new Date(now.getTime() - 600_000) }),
      ).toBeUndefined();
    });
  });

  it('findJobForExport returns the newest export of the table', async () => {
    server.on(
      'GET',
      '/v2/storage/jobs',
      json(200, [
        { id: 5, status: 'waiting', operationName: 'tableExport', tableId: 'in.c-a.other', createdTime: iso(10) },
        { id: 4, status: 'waiting', operationName: 'tableExport', tableId: 'in.c-a.t', createdTime: iso(20) },
      ]),
    );
    expect((await findJobForExport({ client, tableId: 'in.c-a.t', since: now.getTime() - 60_000 }))?.id).toBe(4);
  });

  describe('findJobForExport adopts only a job that is provably this export', () => {
    const exportJob = (id: number, runId: string | null, operationParams: Record<string, unknown>) => ({
      id,
      status: 'waiting',
      operationName: 'tableExport',
      tableId: 'in.c-a.t',
      runId,
      operationParams,
      createdTime: iso(10),
    });
    const since = now.getTime() - 60_000;

    it('takes the job carrying our marker, whatever else is newer', async () => {
      server.on('GET', '/v2/storage/jobs', json(200, [exportJob(9, 'someone-else', {}), exportJob(8, 'ours', { columns: ['id'] })]));
      expect((await findJobForExport({ client, tableId: 'in.c-a.t', runId: 'ours', params: { columns: ['id'] }, since }))?.id).toBe(8);
    });

    it('never takes a job with another run id, even with the same parameters', async () => {
      server.on('GET', '/v2/storage/jobs', json(200, [exportJob(9, 'someone-else', {})]));
      expect(await findJobForExport({ client, tableId: 'in.c-a.t', runId: 'ours', params: {}, since })).toBeUndefined();
    });

    it('without run ids on the service, takes a job only when columns, limit and gzip match', async () => {
      server.on(
        'GET',
        '/v2/storage/jobs',
        json(200, [exportJob(9, null, { columns: ['id'], limit: 3, gzip: false }), exportJob(8, null, { columns: ['id', 'name'], gzip: true })]),
      );
      expect(await findJobForExport({ client, tableId: 'in.c-a.t', runId: 'ours', params: {}, since })).toBeUndefined();
      expect((await findJobForExport({ client, tableId: 'in.c-a.t', runId: 'ours', params: { columns: ['id', 'name'], gzip: true }, since }))?.id).toBe(8);
      expect((await findJobForExport({ client, tableId: 'in.c-a.t', runId: 'ours', params: { columns: ['id'], limit: 3 }, since }))?.id).toBe(9);
    });

    it('without run ids, never takes an export with filters, order or time bounds by its parameters', async () => {
      server.on('GET', '/v2/storage/jobs', json(200, [exportJob(9, null, { whereFilters: [{ column: 'id', operator: 'eq', values: ['1'] }] })]));
      expect(await findJobForExport({ client, tableId: 'in.c-a.t', runId: 'ours', params: {}, since })).toBeUndefined();
      expect(
        await findJobForExport({
          client,
          tableId: 'in.c-a.t',
          runId: 'ours',
          params: { whereFilters: [{ column: 'id', operator: 'eq', values: ['1'] }] },
          since,
        }),
      ).toBeUndefined();
    });
  });

  it('findJobForImport skips a job of the same file that records another run id', async () => {
    server.on(
      'GET',
      '/v2/storage/jobs',
      json(200, [
        { ...importJob(3, 7, 'in.c-a.t'), runId: 'other' },
        { ...importJob(2, 7, 'in.c-a.t'), runId: 'ours' },
      ]),
    );
    expect((await findJobForImport({ client, operationName: 'tableImport', fileId: 7, tableId: 'in.c-a.t', runId: 'ours' }))?.id).toBe(2);
  });

  describe('startImportOnce', () => {
    const load = { tableId: 'in.c-a.t', dataFileId: 7, incremental: true } as const;

    it('returns the posted job when the POST answers', async () => {
      server.on('POST', '/v2/storage/tables/in.c-a.t/import-async', json(202, importJob(11, 7, 'in.c-a.t')));
      const r = await startImportOnce(client, { operation: 'load', load });
      expect(r).toMatchObject({ via: 'posted', posts: 1, job: { id: 11 } });
    });

    it('finds the job created by a POST whose response was lost, without posting again', async () => {
      server.on('POST', '/v2/storage/tables/in.c-a.t/import-async', reset);
      server.on('GET', '/v2/storage/jobs', json(200, [importJob(12, 7, 'in.c-a.t')]));
      const r = await startImportOnce(client, { operation: 'load', load, reconcileDelaysMs: [0] });
      expect(r).toMatchObject({ via: 'found', posts: 1, job: { id: 12 } });
      expect(server.count('POST', '/v2/storage/tables/in.c-a.t/import-async')).toBe(1);
    });

    it('posts once more when the lost POST created nothing', async () => {
      server.on('POST', '/v2/storage/tables/in.c-a.t/import-async', reset, json(202, importJob(13, 7, 'in.c-a.t')));
      server.on('GET', '/v2/storage/jobs', json(200, [importJob(1, 99, 'in.c-a.t')]));
      const r = await startImportOnce(client, { operation: 'load', load, reconcileDelaysMs: [0, 1] });
      expect(r).toMatchObject({ via: 'posted', posts: 2, job: { id: 13 } });
      expect(server.count('GET', '/v2/storage/jobs')).toBe(2);
    });

    it('after a lost POST walks back to the POST, not to an operation start long before it (a long upload)', async () => {
      const others = [
        ...Array.from({ length: 150 }, (_, i) => importJob(5_000 - i, 1_000 + i, 'in.c-a.other', 'tableImport', 1_000)),
        ...Array.from({ length: 1_000 }, (_, i) => importJob(4_000 - i, 2_000 + i, 'in.c-a.other', 'tableImport', 30 * 60_000)),
      ];
      server.on('GET', '/v2/storage/jobs', (req, res) => {
        const q = new URL(req.url, 'http://x').searchParams;
        const offset = Number(q.get('offset') ?? 0);
        json(200, others.slice(offset, offset + Number(q.get('limit') ?? 100)))(req, res);
      });
      server.on('POST', '/v2/storage/tables/in.c-a.t/import-async', reset, json(202, importJob(13, 7, 'in.c-a.t')));
      const r = await startImportOnce(client, { operation: 'load', load, since: now.getTime() - 3_600_000, reconcileDelaysMs: [0] });
      expect(r).toMatchObject({ via: 'posted', posts: 2, job: { id: 13 } });
      expect(server.count('GET', '/v2/storage/jobs')).toBe(2); // the 150 jobs since the POST, then the first older one
    });

    it('gives up after two ambiguous failures with a retryable error', async () => {
      server.on('POST', '/v2/storage/tables/in.c-a.t/import-async', json(500, { error: 'boom' }));
      server.on('GET', '/v2/storage/jobs', json(200, []));
      await expect(startImportOnce(client, { operation: 'load', load, reconcileDelaysMs: [0] })).rejects.toMatchObject({
        code: 'SAPI_SERVER_ERROR',
        retryable: true,
        mayHaveReachedService: true,
      });
      expect(server.count('POST', '/v2/storage/tables/in.c-a.t/import-async')).toBe(2);
    });

    it('with lookupFirst, reuses the job of a previous attempt and posts nothing', async () => {
      server.on('GET', '/v2/storage/jobs', json(200, [importJob(14, 7, 'in.c-a.t')]));
      const r = await startImportOnce(client, { operation: 'load', load, lookupFirst: true });
      expect(r).toMatchObject({ via: 'found', posts: 0, job: { id: 14 } });
      expect(server.count('POST', '/v2/storage/tables/in.c-a.t/import-async')).toBe(0);
    });

    it('does not re-create a table that exists without a job of ours', async () => {
      server.on('POST', '/v2/storage/buckets/in.c-a/tables-async', reset);
      server.on('GET', '/v2/storage/jobs', json(200, []));
      server.on('GET', '/v2/storage/tables/in.c-a.t', json(200, { id: 'in.c-a.t', name: 't' }));
      await expect(
        startImportOnce(client, { operation: 'create', create: { bucketId: 'in.c-a', name: 't', dataFileId: 7 }, reconcileDelaysMs: [0] }),
      ).rejects.toMatchObject({ code: 'SAPI_ALREADY_EXISTS', retryable: false });
      expect(server.count('POST', '/v2/storage/buckets/in.c-a/tables-async')).toBe(1);
    });

    it('re-creates a table once when neither the job nor the table exists', async () => {
      server.on('POST', '/v2/storage/buckets/in.c-a/tables-async', reset, json(202, importJob(15, 7, null, 'tableCreate')));
      server.on('GET', '/v2/storage/jobs', json(200, []));
      server.on('GET', '/v2/storage/tables/in.c-a.t', json(404, { error: 'not found', code: 'storage.tables.notFound' }));
      const r = await startImportOnce(client, { operation: 'create', create: { bucketId: 'in.c-a', name: 't', dataFileId: 7 }, reconcileDelaysMs: [0] });
      expect(r).toMatchObject({ via: 'posted', posts: 2, job: { id: 15 } });
    });

    it('passes non-ambiguous errors through without looking up', async () => {
      server.on('POST', '/v2/storage/tables/in.c-a.t/import-async', json(404, { error: 'Table not found', code: 'storage.tables.notFound' }));
      await expect(startImportOnce(client, { operation: 'load', load })).rejects.toMatchObject({ code: 'SAPI_NOT_FOUND' });
      expect(server.count('GET', '/v2/storage/jobs')).toBe(0);
    });
  });

  it('startExportOnce finds an export whose response was lost', async () => {
    server.on('POST', '/v2/storage/tables/in.c-a.t/export-async', reset);
    server.on(
      'GET',
      '/v2/storage/jobs',
      json(200, [{ id: 21, status: 'waiting', operationName: 'tableExport', tableId: 'in.c-a.t', createdTime: new Date().toISOString() }]),
    );
    const r = await startExportOnce(client, { export: { tableId: 'in.c-a.t' }, reconcileDelaysMs: [0] });
    expect(r).toMatchObject({ via: 'found', posts: 1, job: { id: 21 } });
  });
});
