import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf } from '../../harness/workflow-failure';

/** Issue 9: faults at the edges of imports and exports end exactly right, and a failed import leaves nothing behind. */
describe('imports and exports under faults end exactly right', () => {
  let env: SapiTestEnv;
  let n = 0;
  beforeAll(async () => (env = await startSapiTestEnv('exactly-once')));
  afterAll(() => env?.stop());
  afterEach(() => env.emulator.faults.clear());

  function csvFile(name: string, content: string | Buffer): string {
    const path = join(env.dataDir, name);
    writeFileSync(path, content);
    return path;
  }

  function importTable(input: ImportTableInput): Promise<ImportTableResult> {
    return env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `exactly-once-import-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    });
  }

  function exportTable(input: ExportTableInput): Promise<ExportTableResult> {
    return env.client.workflow.execute('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `exactly-once-export-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    });
  }

  async function api<T>(path: string): Promise<{ status: number; body: T }> {
    const res = await request(`${env.emulator.url}/v2/storage/${path}`, { headers: { 'x-storageapi-token': env.emulator.token } });
    return { status: res.statusCode, body: (await res.body.json()) as T };
  }
  const bucketExists = async (bucketId: string) => (await api(`buckets/${bucketId}`)).status === 200;
  const filesNamed = async (name: string) => (await api<Array<{ name: string }>>('files?limit=1000')).body.filter((f) => f.name === name);
  const requestsTo = (method: string, pattern: RegExp) => env.emulator.requests.filter((r) => r.method === method && pattern.test(r.path));

  describe('a retried export never returns another export of the same table', () => {
    it('starts a new export after a 500 on export-async, although a narrower export of the table was just made', async () => {
      const rows = Array.from({ length: 20 }, (_, i) => `${i},name${i},${i * 10}`);
      await importTable({ source: csvFile('wide.csv', `id,name,qty\n${rows.join('\n')}\n`), bucketId: 'in.c-ctl', createBucket: true, table: 't1' });
      const narrow = await exportTable({ tableId: 'in.c-ctl.t1', destination: join(env.dataDir, 'narrow.csv'), columns: ['id'], limit: 3 });
      env.emulator.faults.add({ method: 'POST', path: 'export-async$', times: 1, action: { type: 'status', status: 500 } });
      const full = await exportTable({ tableId: 'in.c-ctl.t1', destination: join(env.dataDir, 'full.csv') });
      expect(full.jobId).not.toBe(narrow.jobId);
      expect(full.fileId).not.toBe(narrow.fileId);
      const lines = readFileSync(join(env.dataDir, 'full.csv'), 'utf8').trim().split('\n');
      expect(lines[0]).toBe('"id","name","qty"');
      expect(lines).toHaveLength(21);
      // the 500 did not start a job: one export-async answered, one failed
      expect(
        requestsTo('POST', /export-async$/)
          .map((r) => r.status)
          .slice(-2),
      ).toEqual([500, 202]);
    });

    it('adopts its own export when export-async committed but the answer was a 500 (one job, not two)', async () => {
      const before = requestsTo('POST', /export-async$/).length;
      env.emulator.faults.add({ method: 'POST', path: 'export-async$', times: 1, action: { type: 'status-after-success', status: 500 } });
      const result = await exportTable({ tableId: 'in.c-ctl.t1', destination: join(env.dataDir, 'committed.csv'), columns: ['id', 'qty'] });
      expect(requestsTo('POST', /export-async$/).length - before).toBe(1); // the job was found, not started again
      const lines = readFileSync(join(env.dataDir, 'committed.csv'), 'utf8').trim().split('\n');
      expect(lines[0]).toBe('"id","qty"');
      expect(lines).toHaveLength(21);
      const job = await api<{ runId: unknown; operationName: string }>(`jobs/${result.jobId}`);
      expect(job.body.operationName).toBe('tableExport');
    });
  });

  describe('bucket creation rides out transient errors', () => {
    it.each([
      ['a 502 that did not create the bucket', { type: 'status' as const, status: 502 }],
      ['a 500 after the bucket was created', { type: 'status-after-success' as const, status: 500 }],
      ['a connection reset', { type: 'reset' as const }],
    ])('imports with createBucket after %s on POST buckets', async (_name, action) => {
      const bucketId = `in.c-flaky${++n}`;
      env.emulator.faults.add({ method: 'POST', path: '/v2/storage/buckets$', times: 1, action });
      const result = await importTable({ source: csvFile(`flaky${n}.csv`, 'id\n1\n2\n'), bucketId, createBucket: true, table: 't' });
      expect(result.importedRowsCount).toBe(2);
      expect((await env.emulator.readTable(`${bucketId}.t`)).rows).toEqual([['1'], ['2']]);
    });
  });

  describe('a failed import leaves the project as it found it', () => {
    const bad: Array<[string, string | Buffer, Partial<ImportTableInput>, string, RegExp]> = [
      ['an empty file', '', {}, 'SAPI_INVALID_INPUT', /is empty/],
      ['duplicate column names', 'id,ID\n1,2\n', {}, 'SAPI_INVALID_INPUT', /duplicate column name/],
      ['invalid column names', 'id,first name\n1,a\n', {}, 'SAPI_INVALID_INPUT', /invalid column name.*"first name"/],
      ['the wrong delimiter', 'id;name\n1;a\n', {}, 'SAPI_INVALID_INPUT', /delimiter/],
    ];
    it.each(bad)('rejects %s before creating anything', async (name, content, extra, code, message) => {
      const bucketId = `in.c-bad${++n}`;
      const fileName = `bad-${n}.csv`;
      const prepares = requestsTo('POST', /files\/prepare$/).length;
      const failure = await failureOf(importTable({ source: csvFile(fileName, content), bucketId, createBucket: true, table: 't', ...extra }));
      expect(failure.type).toBe(code);
      expect(failure.message).toMatch(message);
      expect(await bucketExists(bucketId)).toBe(false);
      expect(requestsTo('POST', /files\/prepare$/).length).toBe(prepares);
      expect(name).toBeTruthy();
    });

    it('rejects a missing source file before creating the bucket', async () => {
      const bucketId = `in.c-missing${++n}`;
      const failure = await failureOf(importTable({ source: join(env.dataDir, 'no-such.csv'), bucketId, createBucket: true, table: 't' }));
      expect(failure.type).toBe('SAPI_INVALID_INPUT');
      expect(failure.message).toContain('no-such.csv');
      expect(await bucketExists(bucketId)).toBe(false);
    });

    it('rejects mode load into a missing table before uploading anything', async () => {
      await importTable({ source: csvFile('exists.csv', 'id\n1\n'), bucketId: 'in.c-loadcheck', createBucket: true, table: 'present' });
      const prepares = requestsTo('POST', /files\/prepare$/).length;
      const failure = await failureOf(importTable({ source: csvFile('load.csv', 'id\n2\n'), bucketId: 'in.c-loadcheck', table: 'absent', mode: 'load' }));
      expect(failure.type).toBe('SAPI_NOT_FOUND');
      expect(failure.message).toMatch(/in\.c-loadcheck\.absent does not exist.*mode create/);
      expect(requestsTo('POST', /files\/prepare$/).length).toBe(prepares);
    });

    it.each([
      ['direct', 'direct' as const],
      ['importer', 'importer' as const],
    ])('removes the bucket and the file it created when the job fails (wrong column count, %s upload)', async (_name, via) => {
      const bucketId = `in.c-jobfail${++n}`;
      const fileName = `ragged-${n}.csv`;
      const failure = await failureOf(importTable({ source: csvFile(fileName, 'id,name\n1,a\n2,b,extra\n'), bucketId, createBucket: true, table: 't', via }));
      expect(failure.type).toBe('SAPI_JOB_FAILED');
      expect(await bucketExists(bucketId)).toBe(false);
      expect(await filesNamed(fileName)).toEqual([]);
    });

    it('keeps a bucket it did not create when the job fails, and removes only its file', async () => {
      await importTable({ source: csvFile('keep.csv', 'id\n1\n'), bucketId: 'in.c-keep', createBucket: true, table: 'first' });
      const fileName = `keep-ragged-${++n}.csv`;
      const failure = await failureOf(importTable({ source: csvFile(fileName, 'a,b\n1\n'), bucketId: 'in.c-keep', createBucket: true, table: 'second' }));
      expect(failure.type).toBe('SAPI_JOB_FAILED');
      expect(await bucketExists('in.c-keep')).toBe(true);
      expect((await env.emulator.readTable('in.c-keep.first')).rows).toEqual([['1']]);
      expect(await filesNamed(fileName)).toEqual([]);
    });
  });

  describe('a lost importer answer does not upload the file twice', () => {
    it('finds the file an earlier attempt stored when the importer answered 500 after storing it', async () => {
      const fileName = `importer-once-${++n}.csv`;
      const content = 'id\n1\n2\n3\n';
      env.emulator.faults.add({ method: 'POST', path: 'upload-file$', times: 1, action: { type: 'status-after-success', status: 500 } });
      // without a receipt: its own load also goes through the importer, and this counts the import's uploads
      const result = await importTable({
        source: csvFile(fileName, content),
        bucketId: 'in.c-importer-once',
        createBucket: true,
        table: 't',
        via: 'importer',
        receipts: false,
      });
      expect(result.importedRowsCount).toBe(3);
      expect(result.sha256).toBe(createHash('sha256').update(content).digest('hex'));
      expect(await filesNamed(fileName)).toHaveLength(1);
      expect(requestsTo('POST', /upload-file$/).slice(-1)[0]?.status).toBe(500); // no second upload
    });
  });
});
