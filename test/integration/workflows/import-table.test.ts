import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { type ApplicationFailure } from '@temporalio/common';
import { request } from 'undici';
import type { ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { failureOf as workflowFailure } from '../../harness/workflow-failure';
import { continuedRuns } from '../../harness/continued-run';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';
import { loadSettings } from '../../../src/config';
import { MAX_TABLE_COLUMNS } from '../../../src/storage-api/columns';
import { startWorker } from '../../../src/worker';
import { historyShape } from '../../harness/history';
import { bucketExists, receiptsWhere } from '../../harness/matrix/checks';

describe('importTableWorkflow against the emulator', () => {
  let env: SapiTestEnv;
  let n = 0;
  beforeAll(async () => (env = await startSapiTestEnv('import')));
  afterAll(() => env?.stop());

  function csvFile(name: string, content: string): string {
    const path = join(env.dataDir, name);
    writeFileSync(path, content);
    return path;
  }

  function run(input: ImportTableInput): Promise<ImportTableResult> {
    return env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `import-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    });
  }

  async function filesNamed(name: string): Promise<unknown[]> {
    const res = await request(`${env.emulator.url}/v2/storage/files?limit=1000`, { headers: { 'x-storageapi-token': env.emulator.token } });
    return ((await res.body.json()) as Array<{ name: string }>).filter((f) => f.name === name);
  }

  const failureOf = (input: ImportTableInput): Promise<ApplicationFailure> => workflowFailure(run(input));

  it('creates a table from a local CSV uploaded directly to object storage, creating the bucket', async () => {
    const content = 'id,name\n1,alpha\n2,"beta, with comma"\n3,"multi\nline"\n';
    const result = await run({ source: csvFile('direct.csv', content), bucketId: 'in.c-direct', createBucket: true, table: 'items' });
    expect(result).toMatchObject({ tableId: 'in.c-direct.items', importedRowsCount: 3, bytes: Buffer.byteLength(content) });
    expect(result.sha256).toBe(createHash('sha256').update(content).digest('hex'));
    expect(await env.emulator.readTable('in.c-direct.items')).toEqual({
      columns: ['id', 'name'],
      rows: [
        ['1', 'alpha'],
        ['2', 'beta, with comma'],
        ['3', 'multi\nline'],
      ],
    });
  });

  it('takes a small import and its receipt through 2 activity tasks, no timer and at most 30 history events (the receipt written in the short path)', async () => {
    const content = 'id,name\n1,alpha\n2,beta\n';
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `import-small-shape-${Date.now()}`,
      args: [{ source: csvFile('small.csv', content), bucketId: 'in.c-small', createBucket: true, table: 'items', polling: { initialMs: 200, maxMs: 1000 } }],
    });
    expect(await handle.result()).toMatchObject({ tableId: 'in.c-small.items', importedRowsCount: 2, bytes: Buffer.byteLength(content) });
    expect((await env.emulator.readTable('in.c-small.items')).rows).toEqual([
      ['1', 'alpha'],
      ['2', 'beta'],
    ]);
    const shape = historyShape((await handle.fetchHistory()).events ?? []);
    expect(shape).toMatchObject({ activityTypes: ['prepareImport', 'uploadAndStartJob'], activityTasks: 2, timers: 0 });
    expect(shape.events).toBeLessThanOrEqual(30);
    expect(await receiptsWhere(env.emulator, 'workflow_id', handle.workflowId)).toHaveLength(1);
  });

  it("checks a small import's bucket without reading the bucket's detail (it lists every table) and looks once", async () => {
    const content = 'id,name\n1,alpha\n';
    await run({ source: csvFile('bucket-once-1.csv', content), bucketId: 'in.c-bucket-once', createBucket: true, table: 'first' });
    const before = env.emulator.requests.length;
    expect(await run({ source: csvFile('bucket-once-2.csv', content), bucketId: 'in.c-bucket-once', createBucket: true, table: 'second' })).toMatchObject({
      importedRowsCount: 1,
    });
    const seen = env.emulator.requests.slice(before);
    // before: GET buckets/in.c-bucket-once twice (the check, then ensuring the bucket); now the list (other tests may list too)
    expect(seen.filter((r) => /\/buckets\/in\.c-bucket-once$/.test(r.path)).map((r) => r.method)).toEqual([]);
    expect(seen.some((r) => r.method === 'GET' && /\/v2\/storage\/buckets$/.test(r.path))).toBe(true);
  });

  it("removes the bucket it created when the prepare after it fails for good (the short path's first activity)", async () => {
    env.emulator.faults.add({ method: 'POST', path: 'files/prepare$', times: 1, action: { type: 'status', status: 400 } });
    const failure = await failureOf({ source: csvFile('refused.csv', 'id\n1\n'), bucketId: 'in.c-refused-prepare', createBucket: true, table: 't' });
    expect(failure.nonRetryable).toBe(true);
    expect(await bucketExists(env.emulator, 'in.c-refused-prepare')).toBe(false);
    expect(await filesNamed('refused.csv')).toEqual([]);
  });

  it('creates a table through the importer service and then loads more rows incrementally with a primary key', async () => {
    const first = await run({
      source: csvFile('importer.csv', 'id,qty\n1,10\n2,20\n'),
      bucketId: 'in.c-importer',
      createBucket: true,
      table: 'stock',
      via: 'importer',
      primaryKey: ['id'],
    });
    expect(first.importedRowsCount).toBe(2);
    const second = await run({
      source: csvFile('more.csv', 'id,qty\n2,25\n3,30\n'),
      bucketId: 'in.c-importer',
      table: 'stock',
      mode: 'load',
      incremental: true,
    });
    expect(second.importedRowsCount).toBe(2);
    const table = await env.emulator.readTable('in.c-importer.stock');
    expect([...table.rows].sort()).toEqual([
      ['1', '10'],
      ['2', '25'],
      ['3', '30'],
    ]);
  });

  it('replaces the rows on a full (non-incremental) load', async () => {
    await run({ source: csvFile('full1.csv', 'a\n1\n2\n'), bucketId: 'in.c-full', createBucket: true, table: 't' });
    await run({ source: csvFile('full2.csv', 'a\n9\n'), bucketId: 'in.c-full', table: 't', mode: 'load' });
    expect((await env.emulator.readTable('in.c-full.t')).rows).toEqual([['9']]);
  });

  it('gzips on the way up when asked and the table still gets the rows', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `${i},${'x'.repeat(20)}`).join('\n');
    const result = await run({ source: csvFile('gz.csv', `id,pad\n${rows}\n`), bucketId: 'in.c-gz', createBucket: true, table: 't', gzip: true });
    expect(result.importedRowsCount).toBe(5000);
    expect(result.bytes).toBeLessThan(Buffer.byteLength(rows) / 5);
  });

  it('fails a malformed CSV with the line in the message, without retrying, and creates no table', async () => {
    const before = env.emulator.requests.length;
    const failure = await failureOf({ source: csvFile('bad.csv', 'a,b\n1,2\n3,"unclosed\n'), bucketId: 'in.c-bad', createBucket: true, table: 't' });
    expect(failure.type).toBe('SAPI_JOB_FAILED');
    expect(failure.message).toMatch(/line/i);
    const asyncPosts = env.emulator.requests.slice(before).filter((r) => r.method === 'POST' && /tables-async/.test(r.path));
    expect(asyncPosts).toHaveLength(1);
    const tables = env.emulator.requests.slice(before).length;
    expect(tables).toBeLessThan(30); // no retry storm
    await expect(env.emulator.readTable('in.c-bad.t')).rejects.toThrow();
  });

  it('fails clearly for an unknown bucket and for a table that already exists', async () => {
    const unknown = await failureOf({ source: csvFile('u.csv', 'a\n1\n'), bucketId: 'in.c-nope', table: 't' });
    expect(unknown.type).toMatch(/SAPI_NOT_FOUND|SAPI_JOB_FAILED/);
    expect(unknown.message).toMatch(/in\.c-nope/);
    await run({ source: csvFile('e1.csv', 'a\n1\n'), bucketId: 'in.c-exists', createBucket: true, table: 't' });
    const exists = await failureOf({ source: csvFile('e2.csv', 'a\n2\n'), bucketId: 'in.c-exists', table: 't' });
    expect(exists.message).toMatch(/exist/i);
    expect((await env.emulator.readTable('in.c-exists.t')).rows).toEqual([['1']]);
  });

  it('rejects invalid input before touching the service', async () => {
    const before = env.emulator.requests.length;
    const failure = await failureOf({ source: '/nowhere.csv', bucketId: 'main', table: 'bad name!' });
    expect(failure.type).toBe('SAPI_INVALID_INPUT');
    expect(failure.message).toMatch(/bucketId/);
    expect(failure.message).toMatch(/table/);
    expect(env.emulator.requests.length).toBe(before);
  });

  it('imports a header of as many columns as a table may have, and refuses one more before creating anything', async () => {
    const wide = (n: number) => `${Array.from({ length: n }, (_, i) => `c${i + 1}`).join(',')}\n${Array.from({ length: n }, (_, i) => String(i)).join(',')}\n`;
    const result = await run({ source: csvFile('widest.csv', wide(MAX_TABLE_COLUMNS)), bucketId: 'in.c-wide', createBucket: true, table: 'widest' });
    expect(result.importedRowsCount).toBe(1);
    const table = await env.emulator.readTable('in.c-wide.widest');
    expect(table.columns).toHaveLength(MAX_TABLE_COLUMNS);
    expect(table.rows[0]![MAX_TABLE_COLUMNS - 1]).toBe(String(MAX_TABLE_COLUMNS - 1));

    const before = env.emulator.requests.length;
    const failure = await failureOf({
      source: csvFile('too-wide.csv', wide(MAX_TABLE_COLUMNS + 1)),
      bucketId: 'in.c-too-wide',
      createBucket: true,
      table: 't',
    });
    expect(failure).toMatchObject({ type: 'SAPI_INVALID_INPUT', nonRetryable: true });
    expect(failure.message).toMatch(
      /^the header of \S*too-wide\.csv has 1600 columns; a table may have at most 1599 \(the service refuses more with "Too many columns"\)/,
    );
    expect(env.emulator.requests.slice(before).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('fails on a missing local file with the path in the message and no retry storm', async () => {
    const failure = await failureOf({ source: join(env.dataDir, 'missing.csv'), bucketId: 'in.c-missing', createBucket: true, table: 't' });
    expect(failure.message).toMatch(/missing\.csv/);
  });

  it('gives up on a job that outlives polling.deadlineMs with SAPI_JOB_DEADLINE, without retrying', async () => {
    // the job runs until the import gave up on it
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const before = env.emulator.requests.length;
    const failure = await failureOf({
      source: csvFile('slow.csv', 'k\n1\n'),
      bucketId: 'in.c-slow',
      createBucket: true,
      table: 't',
      polling: { initialMs: 200, deadlineMs: 2_000 },
    });
    env.emulator.faults.releaseJobs('tableCreate');
    expect(failure).toMatchObject({ type: 'SAPI_JOB_DEADLINE', nonRetryable: true });
    // the short path waits for the job inside its activity up to the deadline, so the workflow may see it a second later
    expect(failure.message).toMatch(/^job \d+ \(tableCreate\) still processing after [23] s; deadline 2 s \(polling\.deadlineMs\)\. The job may still finish/);
    // without retrying (no second run of the import, which would start a second job): one job started
    const seen = env.emulator.requests.slice(before);
    expect(seen.filter((r) => r.method === 'POST' && /\/buckets\/in\.c-slow\/tables-async$/.test(r.path))).toHaveLength(1);
  });

  it('counts the deadline from when polling began in the first run, not from a continued-as-new run', async () => {
    // the input a continue-as-new hands to the next run: polling began 10 minutes ago, the deadline is 5 minutes
    // (a genuine second run of a chain: a started run may not carry resume)
    const resume = { fileId: 1, bytes: 2, job: { id: 424242, status: 'processing', operationName: 'tableCreate' }, pollingSince: Date.now() - 600_000 };
    const chain = await continuedRuns(env);
    try {
      const workflowId = `import-continued-${Date.now()}-${++n}`;
      await chain.begin(workflowId);
      const before = env.emulator.requests.length;
      const continued = await chain.continueWith(workflowId, 'importTableWorkflow', {
        source: 'unused.csv',
        bucketId: 'in.c-can',
        table: 't',
        polling: { deadlineMs: 300_000 },
        resume,
      });
      const failure = await workflowFailure(continued.result());
      expect(failure.type).toBe('SAPI_JOB_DEADLINE');
      // counted from pollingSince (600 s before the test's start), however long the runs took on a loaded machine
      const said = /^job 424242 \(tableCreate\) still processing after (\d+) s; deadline 300 s/;
      expect(failure.message).toMatch(said);
      const after = Number(said.exec(failure.message)![1]);
      expect(after).toBeGreaterThanOrEqual(600);
      expect(after).toBeLessThanOrEqual(Math.ceil((Date.now() - resume.pollingSince) / 1000));
      expect(env.emulator.requests.length).toBe(before); // not polled again
    } finally {
      await chain.stop();
    }
  });

  it('answers upload credentials that are about to expire with a fresh prepare, and loads the rows once', async () => {
    env.emulator.faults.expireCredentials({ access: 'upload', expiresInSeconds: 60, times: 1 });
    const prepares = () => env.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/files/prepare')).length;
    const before = prepares();
    const result = await run({ source: csvFile('expiring.csv', 'k,v\n1,a\n2,b\n'), bucketId: 'in.c-expiring', createBucket: true, table: 't' });
    expect(prepares() - before).toBe(2);
    expect(result.importedRowsCount).toBe(2);
    expect((await env.emulator.readTable('in.c-expiring.t')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
    ]);
    expect(await filesNamed('expiring.csv')).toHaveLength(1); // the expired file resource was removed
  });

  it('gives up with SAPI_CREDENTIALS_EXPIRED after three prepares whose credentials all expire, creating no table', async () => {
    env.emulator.faults.expireCredentials({ access: 'upload', expiresInSeconds: 60, times: 3 });
    const failure = await failureOf({ source: csvFile('always-expiring.csv', 'k\n1\n'), bucketId: 'in.c-expiring', table: 'never' });
    expect(failure.type).toBe('SAPI_CREDENTIALS_EXPIRED');
    expect(failure.message).toMatch(/temporary credentials \(expiring .*\) are expired or rejected/);
    await expect(env.emulator.readTable('in.c-expiring.never')).rejects.toThrow();
    expect(await filesNamed('always-expiring.csv')).toEqual([]); // nothing left behind
  });

  it('reconciles a lost tables-async response: one job, one table with the right rows', async () => {
    env.emulator.faults.add({ method: 'POST', path: 'tables-async$', times: 1, action: { type: 'dropResponse' } });
    const result = await run({ source: csvFile('lost.csv', 'k\n1\n2\n3\n'), bucketId: 'in.c-lost', createBucket: true, table: 't' });
    expect(result.importedRowsCount).toBe(3);
    expect((await env.emulator.readTable('in.c-lost.t')).rows).toEqual([['1'], ['2'], ['3']]);
    const creates = env.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/buckets/in.c-lost/tables-async'));
    expect(creates).toHaveLength(1);
  });
});

describe('importTableWorkflow edge cases', () => {
  let env: SapiTestEnv;
  beforeAll(async () => (env = await startSapiTestEnv('import-edges')));
  afterAll(() => env?.stop());

  it('uploads several headerless parts as one sliced file and loads them in order', async () => {
    const dir = env.dataDir;
    writeFileSync(join(dir, 'head.csv'), 'id,part\n');
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `sliced-create-${Date.now()}`,
      args: [{ source: join(dir, 'head.csv'), bucketId: 'in.c-sliced', createBucket: true, table: 't', polling: { initialMs: 200 } }],
    });
    const slices = [0, 1, 2].map((part) => {
      const path = join(dir, `slice-${part}.csv`);
      writeFileSync(path, Array.from({ length: 3 }, (_, i) => `${part * 3 + i},${part}\n`).join(''));
      return path;
    });
    const result = await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `sliced-load-${Date.now()}`,
      args: [{ source: slices[0], slices, columns: ['id', 'part'], bucketId: 'in.c-sliced', table: 't', mode: 'load', polling: { initialMs: 200 } }],
    });
    expect(result).toMatchObject({ importedRowsCount: 9 });
    expect((await env.emulator.readTable('in.c-sliced.t')).rows).toEqual(Array.from({ length: 9 }, (_, i) => [String(i), String(Math.floor(i / 3))]));
  });

  it('fails with SAPI_UNAUTHORIZED on an invalid token after one request, without retrying', async () => {
    // a token revoked while the worker runs (a worker started with it would refuse to start: see the test below)
    const bad = await startSapiTestEnv('bad-token', { env: { SAPI_TOKEN: 'not-a-valid-token' }, checkConnections: false });
    try {
      writeFileSync(join(bad.dataDir, 'x.csv'), 'a\n1\n');
      const err = await bad.client.workflow
        .execute('importTableWorkflow', {
          taskQueue: bad.taskQueue,
          workflowId: `bad-token-${Date.now()}`,
          args: [{ source: join(bad.dataDir, 'x.csv'), bucketId: 'in.c-x', createBucket: true, table: 't' }],
        })
        .catch((e: unknown) => e as Error & { cause?: { cause?: { type?: string; message?: string } } });
      expect(err).toBeInstanceOf(Error);
      expect((err as { cause?: { cause?: { type?: string } } }).cause?.cause?.type).toBe('SAPI_UNAUTHORIZED');
      expect(bad.emulator.requests.filter((r) => r.status === 401)).toHaveLength(1);
    } finally {
      await bad.stop();
    }
  });

  it('refuses to start a worker without a Storage connection, with a token the service rejects, or a URL it cannot reach, with one clear line', async () => {
    const stack = testStack();
    const emulator = env.emulator;
    const temporalOnly = Object.fromEntries(Object.entries(stack.env).filter(([key]) => !key.startsWith('SAPI_')));
    const base = { ...temporalOnly, TEMPORAL_TASK_QUEUE: uniqueTaskQueue('fail-fast') };
    await expect(startWorker({ settings: loadSettings(base) })).rejects.toThrow(/SAPI_URL and SAPI_TOKEN are not set: no Storage connection configured/);
    await expect(startWorker({ settings: loadSettings({ ...base, SAPI_URL: emulator.url, SAPI_TOKEN: 'revoked' }) })).rejects.toThrow(
      /^SAPI_TOKEN is rejected by http:\/\/127\.0\.0\.1:\d+: /,
    );
    await expect(startWorker({ settings: loadSettings({ ...base, SAPI_URL: 'http://127.0.0.1:9', SAPI_TOKEN: 'x' }) })).rejects.toThrow(
      /^SAPI_URL http:\/\/127\.0\.0\.1:9: connection refused/,
    );
    // a service that answers with a server error (maintenance) is no reason to refuse: the activities retry
    const maintenance = createServer((_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"maintenance"}'));
    await new Promise<void>((ok) => maintenance.listen(0, '127.0.0.1', ok));
    try {
      const url = `http://127.0.0.1:${(maintenance.address() as { port: number }).port}`;
      const running = await startWorker({
        settings: loadSettings({ ...base, SAPI_URL: url, SAPI_TOKEN: 'x' }),
        worker: { workflowBundle: { code: readFileSync(stack.workflowBundlePath, 'utf8') } },
      });
      await running.stop();
    } finally {
      await new Promise<void>((ok) => maintenance.close(() => ok()));
    }
  });
});
