import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import type { ExtractInput, ExtractResult } from '../../../src/contracts/extract';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf } from '../../harness/workflow-failure';

const MASTER = 'least-privilege-master';
const WRITER = 'least-privilege-writer';

/**
 * Issue 11, item 4: the workflows work with a token that may write only its target bucket (no bucket management, no
 * other bucket, no other token's files), and fail cleanly, leaving nothing, where it may not act.
 */
describe('workflows with a least-privilege token', () => {
  let env: SapiTestEnv;
  let api: SampleApi;
  let n = 0;
  beforeAll(async () => {
    api = await createSampleApi({ records: 25, pageSize: 10 });
    env = await startSapiTestEnv('least-privilege', {
      emulator: {
        tokens: [
          { token: MASTER, description: 'admin' },
          { token: WRITER, description: 'worker', isMasterToken: false, bucketPermissions: { 'in.c-target': 'write' } },
        ],
      },
      env: { SAPI_TOKEN: WRITER },
      worker: false,
    });
    // the buckets exist before the worker starts (an administrator made them); the writer may write one of them
    for (const name of ['target', 'other']) {
      const res = await request(`${env.emulator.url}/v2/storage/buckets`, {
        method: 'POST',
        headers: { 'x-storageapi-token': MASTER, 'content-type': 'application/json' },
        body: JSON.stringify({ name, stage: 'in' }),
      });
      expect(res.statusCode).toBe(201);
      await res.body.dump();
    }
    await env.startWorker();
  });
  afterAll(async () => {
    await api?.close();
    await env?.stop();
  });

  const file = (name: string, content: string) => {
    const path = join(env.dataDir, name);
    writeFileSync(path, content);
    return path;
  };
  const run = <R>(type: string, input: object): Promise<R> =>
    env.client.workflow.execute(type, {
      taskQueue: env.taskQueue,
      workflowId: `least-privilege-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    });
  const bucketsSeenByMaster = async () => {
    const res = await request(`${env.emulator.url}/v2/storage/buckets`, { headers: { 'x-storageapi-token': MASTER } });
    return ((await res.body.json()) as Array<{ id: string }>).map((b) => b.id).sort();
  };
  const asMaster = async <T>(path: string): Promise<T> => {
    const res = await request(`${env.emulator.url}/v2/storage/${path}`, { headers: { 'x-storageapi-token': MASTER } });
    expect(res.statusCode).toBe(200);
    return (await res.body.json()) as T;
  };
  /** An extraction of the sample API's 25 users (3 cursor pages) into `bucketId`. */
  const extraction = (bucketId: string): ExtractInput => ({
    config: {
      parameters: {
        api: { baseUrl: api.url, pagination: { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' } },
        config: { outputBucket: 'target', jobs: [{ endpoint: 'cursor/items', dataType: 'users' }] },
      },
    },
    options: { bucketId, fetch: { baseDelayMs: 5, maxDelayMs: 20 }, polling: { initialMs: 200, maxMs: 1000 } },
  });
  const runExtract = (input: ExtractInput): Promise<ExtractResult> =>
    env.client.workflow.execute('extractWorkflow', { taskQueue: env.taskQueue, workflowId: `least-privilege-extract-${Date.now()}-${++n}`, args: [input] });

  it('imports (create, then an incremental load) and exports the target bucket with write on it only', async () => {
    const created = await run<ImportTableResult>('importTableWorkflow', {
      source: file('a.csv', 'id,v\n1,a\n2,b\n'),
      bucketId: 'in.c-target',
      table: 't',
      primaryKey: ['id'],
    } satisfies ImportTableInput);
    expect(created.importedRowsCount).toBe(2);
    const loaded = await run<ImportTableResult>('importTableWorkflow', {
      source: file('b.csv', 'id,v\n2,B\n3,c\n'),
      bucketId: 'in.c-target',
      table: 't',
      mode: 'load',
      incremental: true,
      via: 'importer',
    } satisfies ImportTableInput);
    expect(loaded.importedRowsCount).toBe(2);
    expect([...(await env.emulator.readTable('in.c-target.t')).rows].sort()).toEqual([
      ['1', 'a'],
      ['2', 'B'],
      ['3', 'c'],
    ]);
    const destination = join(env.dataDir, 'out.csv');
    await run<ExportTableResult>('exportTableWorkflow', { tableId: 'in.c-target.t', destination } satisfies ExportTableInput);
    expect(readFileSync(destination, 'utf8').trim().split('\n').slice(1).sort()).toEqual(['"1","a"', '"2","B"', '"3","c"']);
    // the default receipts bucket is not the writer's: its receipt is reported failed, the load stands
    expect(created.receipt).toMatchObject({ status: 'failed', error: expect.stringContaining('in.c-sapi-temporal') });
    // a receipts table in the bucket it may write takes the receipts
    const receipted = await run<ImportTableResult>('importTableWorkflow', {
      source: file('c.csv', 'id,v\n4,d\n'),
      bucketId: 'in.c-target',
      table: 't',
      mode: 'load',
      incremental: true,
      receipts: { table: 'in.c-target.receipts' },
    } satisfies ImportTableInput);
    expect(receipted.receipt).toMatchObject({ status: 'written', table: 'in.c-target.receipts' });
    expect((await env.emulator.readTable('in.c-target.receipts')).rows).toHaveLength(1);
  });

  it('is refused, before anything is created, where it may not write or manage buckets', async () => {
    const other = await failureOf(run('importTableWorkflow', { source: file('c.csv', 'id\n1\n'), bucketId: 'in.c-other', table: 't' }));
    expect(other.type).toBe('SAPI_UNAUTHORIZED');
    const newBucket = await failureOf(run('importTableWorkflow', { source: file('d.csv', 'id\n1\n'), bucketId: 'in.c-new', createBucket: true, table: 't' }));
    expect(newBucket.type).toBe('SAPI_UNAUTHORIZED');
    expect(await bucketsSeenByMaster()).toEqual(['in.c-other', 'in.c-target']);
    await expect(env.emulator.readTable('in.c-other.t')).rejects.toThrow();
  });

  it('extracts into its output bucket with write on that bucket only: every table created and loaded', async () => {
    const result = await runExtract(extraction('in.c-target'));
    expect(result).toMatchObject({ bucketId: 'in.c-target', pages: 3, records: 25, cancelled: false });
    expect(result.tables.map((t) => t.tableId).sort()).toEqual(['in.c-target.users', 'in.c-target.users_contacts', 'in.c-target.users_tags']);
    const users = await env.emulator.readTable('in.c-target.users');
    const id = users.columns.indexOf('id');
    expect(users.rows.map((row) => Number(row[id])).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(await bucketsSeenByMaster()).toEqual(['in.c-other', 'in.c-target']);
  });

  it('is refused with SAPI_UNAUTHORIZED when an extraction loads into another bucket or a new one, and creates nothing there', async () => {
    const filesBefore = (await asMaster<unknown[]>('files?limit=1000')).length;
    const other = await failureOf(runExtract(extraction('in.c-other')));
    expect(other.type).toBe('SAPI_UNAUTHORIZED');
    expect(other.message).toContain('in.c-other');
    const fresh = await failureOf(runExtract(extraction('in.c-fresh')));
    expect(fresh.type).toBe('SAPI_UNAUTHORIZED');
    expect(await bucketsSeenByMaster()).toEqual(['in.c-other', 'in.c-target']);
    expect(await asMaster<unknown[]>('buckets/in.c-other/tables')).toEqual([]);
    // not even a file resource: the refusal comes before any upload
    expect((await asMaster<unknown[]>('files?limit=1000')).length).toBe(filesBefore);
  });
});
