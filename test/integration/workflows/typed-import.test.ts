/**
 * Typed tables and table metadata through importTableWorkflow and the CLI, against the emulator (typed DuckDB
 * columns, the service's load check) and the real Temporal server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { repoRoot } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { failureOf } from '../../harness/workflow-failure';
import { continuedRuns } from '../../harness/continued-run';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('typed tables and metadata through importTableWorkflow and the CLI', () => {
  const stack = testStack();
  let env: SapiTestEnv;
  let workDir: string;
  let n = 0;
  beforeAll(async () => {
    env = await startSapiTestEnv('typed-import');
    workDir = mkdtempSync(join(env.dataDir, 'cwd-'));
  });
  afterAll(() => env?.stop());

  function csvFile(name: string, content: string): string {
    writeFileSync(join(workDir, name), content);
    return join(workDir, name);
  }

  /** The real CLI in a child process (as bin/sapi-temporal runs it), on this file's task queue. */
  function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(
      process.execPath,
      ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args, '--task-queue', env.taskQueue],
      {
        cwd: workDir,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: stack.temporalAddress,
          TEMPORAL_NAMESPACE: stack.namespace,
          TEMPORAL_TASK_QUEUE: undefined,
          SAPI_URL: undefined,
          SAPI_TOKEN: undefined,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
    return new Promise((ok, fail) => {
      child.once('error', fail);
      child.once('close', (code) => ok({ code, ...out }));
    });
  }

  function run(input: ImportTableInput): Promise<ImportTableResult> {
    return env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `typed-import-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 200, maxMs: 1000 }, ...input }],
    });
  }

  /** A GET of the emulator's API: status and JSON body. */
  async function api(path: string): Promise<{ status: number; body: Json }> {
    const res = await request(`${env.emulator.url}/v2/storage/${path}`, { headers: { 'x-storageapi-token': env.emulator.token } });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  }

  /** A JSON POST to the emulator's API (with `runId` as `X-KBC-RunId`): status and JSON body. */
  async function post(path: string, body: unknown, runId?: string): Promise<{ status: number; body: Json }> {
    const res = await request(`${env.emulator.url}/v2/storage/${path}`, {
      method: 'POST',
      headers: { 'x-storageapi-token': env.emulator.token, 'content-type': 'application/json', ...(runId ? { 'x-kbc-runid': runId } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  }

  /** Files in Storage with this name (a failed run must leave none). */
  async function filesNamed(name: string): Promise<unknown[]> {
    return ((await api('files?limit=1000')).body as Array<{ name: string }>).filter((f) => f.name === name);
  }

  const ORDERS = 'id,price,day,name\n1,12.5,2024-02-29,alpha\n2,0.99,2024-03-01,"beta, quoted"\n3,,2024-03-02,\n';

  it('creates a typed table through the CLI from --column flags: the table detail has the types, the rows their typed values, the description and metadata are set', async () => {
    const source = csvFile('orders.csv', ORDERS);
    const outcome = await cli([
      'import',
      source,
      '--bucket',
      'in.c-typed',
      '--create-bucket',
      '--table',
      'orders',
      '--column',
      'id:INTEGER NOT NULL',
      '--column',
      'price:NUMBER(10,2)',
      '--column',
      'day:DATE',
      '--column',
      'name:VARCHAR(20)',
      '--primary-key',
      'id',
      '--description',
      'Orders with types',
      '--metadata',
      'owner=data-team',
      '--metadata',
      'source.system=shop',
      '--json',
    ]);
    expect(outcome).toMatchObject({ code: 0 });
    expect(JSON.parse(outcome.stdout)).toMatchObject({ tableId: 'in.c-typed.orders', importedRowsCount: 3, typed: true, metadataSet: 3 });

    const { status, body: table } = await api('tables/in.c-typed.orders');
    expect(status).toBe(200);
    expect(table).toMatchObject({ isTyped: true, primaryKey: ['id'], columns: ['id', 'price', 'day', 'name'], rowsCount: 3 });
    expect(table.definition.columns.map((c: Json) => [c.name, c.definition.type, c.definition.length ?? null, c.definition.nullable, c.basetype])).toEqual([
      // The emulator answers as a Snowflake stack does: INTEGER is NUMBER(38,0).
      ['id', 'NUMBER', '38,0', false, 'INTEGER'],
      ['price', 'NUMBER', '10,2', true, 'NUMERIC'],
      ['day', 'DATE', null, true, 'DATE'],
      ['name', 'VARCHAR', '20', true, 'STRING'],
    ]);
    expect(table.columnMetadata.price.find((m: Json) => m.key === 'KBC.datatype.basetype')).toMatchObject({ value: 'NUMERIC', provider: 'storage' });
    // typed values: the decimal keeps its scale, the empty price is NULL (an empty value again when read as text)
    expect(await env.emulator.readTable('in.c-typed.orders')).toEqual({
      columns: ['id', 'price', 'day', 'name'],
      rows: [
        ['1', '12.50', '2024-02-29', 'alpha'],
        ['2', '0.99', '2024-03-01', 'beta, quoted'],
        ['3', '', '2024-03-02', ''],
      ],
    });

    const metadata = (await api('tables/in.c-typed.orders/metadata')).body as Json[];
    expect(metadata.map((m) => [m.key, m.value, m.provider])).toEqual([
      ['KBC.description', 'Orders with types', 'sapi-temporal'],
      ['owner', 'data-team', 'sapi-temporal'],
      ['source.system', 'shop', 'sapi-temporal'],
    ]);
    expect(table.metadata.map((m: Json) => m.key)).toEqual(['KBC.description', 'owner', 'source.system']);
  });

  it("fails a wrong-type import through the CLI with the job's message, loads nothing and leaves no table, file or bucket behind", async () => {
    const source = csvFile('wrong.csv', 'id,qty\n1,5\n2,abc\n');
    const outcome = await cli([
      'import',
      source,
      '--bucket',
      'in.c-typed-wrong',
      '--create-bucket',
      '--table',
      'stock',
      '--column',
      'id:INTEGER',
      '--column',
      'qty:INTEGER',
      '--workflow-id',
      'typed-wrong-1',
      '--json',
    ]);
    expect(outcome.code).toBe(1);
    const { error } = JSON.parse(outcome.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe('SAPI_JOB_FAILED');
    expect(error.message).toMatch(/column "qty", row 2 of file \d+: value "abc" is not a valid NUMBER\(38,0\); nothing was loaded/);
    expect(outcome.stderr).toMatch(
      /^sapi-temporal: import failed \[SAPI_JOB_FAILED\] .*value "abc" is not a valid NUMBER\(38,0\).*\(workflow typed-wrong-1\)$/m,
    );
    expect((await api('tables/in.c-typed-wrong.stock')).status).toBe(404);
    expect((await api('buckets/in.c-typed-wrong')).status).toBe(404);
    expect(await filesNamed('wrong.csv')).toEqual([]);
  });

  it('drops the typed table it created when the load fails, but keeps the bucket that existed before', async () => {
    const failure = await failureOf(
      run({
        source: csvFile('nulls.csv', 'id,name\n1,a\n,b\n'),
        bucketId: 'in.c-typed',
        table: 'strict',
        typedColumns: [
          { name: 'id', definition: { type: 'INTEGER', nullable: false } },
          { name: 'name', definition: { type: 'VARCHAR' } },
        ],
      }),
    );
    expect(failure.type).toBe('SAPI_JOB_FAILED');
    expect(failure.message).toMatch(/column "id", row 2 of file \d+: column is not nullable \(NUMBER\(38,0\)\) and the value is empty; nothing was loaded/);
    expect((await api('tables/in.c-typed.strict')).status).toBe(404);
    expect((await api('buckets/in.c-typed')).status).toBe(200);
  });

  it('loads into an existing typed table, incrementally by its key and in full; a load that does not fit leaves the rows and the table as they were', async () => {
    const more = await run({
      source: csvFile('more.csv', 'id,price,day,name\n3,7.25,2024-03-02,gamma\n4,100,2024-03-03,delta\n'),
      bucketId: 'in.c-typed',
      table: 'orders',
      mode: 'load',
      incremental: true,
      description: 'Orders with types, loaded twice',
    });
    expect(more).toMatchObject({ importedRowsCount: 2, typed: true, metadataSet: 1 });
    const rows = (await env.emulator.readTable('in.c-typed.orders')).rows;
    expect([...rows].sort()).toEqual([
      ['1', '12.50', '2024-02-29', 'alpha'],
      ['2', '0.99', '2024-03-01', 'beta, quoted'],
      ['3', '7.25', '2024-03-02', 'gamma'],
      ['4', '100.00', '2024-03-03', 'delta'],
    ]);
    expect(((await api('tables/in.c-typed.orders/metadata')).body as Json[]).find((m) => m.key === 'KBC.description')).toMatchObject({
      value: 'Orders with types, loaded twice',
    });

    const misfit = await failureOf(
      run({ source: csvFile('misfit.csv', 'id,price,day,name\n5,1.5,2024-13-45,eps\n'), bucketId: 'in.c-typed', table: 'orders', mode: 'load' }),
    );
    expect(misfit.type).toBe('SAPI_JOB_FAILED');
    expect(misfit.message).toMatch(/column "day", row 1 of file \d+: value "2024-13-45" is not a valid DATE; nothing was loaded/);
    expect((await env.emulator.readTable('in.c-typed.orders')).rows).toHaveLength(4);

    const full = await run({ source: csvFile('full.csv', 'name,id,day,price\nonly,9,2025-01-01,1\n'), bucketId: 'in.c-typed', table: 'orders', mode: 'load' });
    expect(full).toMatchObject({ importedRowsCount: 1, typed: true });
    expect((await env.emulator.readTable('in.c-typed.orders')).rows).toEqual([['9', '1.00', '2025-01-01', 'only']]);
  });

  it('exports a typed table with its values written as text, header from the table', async () => {
    const destination = join(workDir, 'out', 'orders.csv');
    const result: ExportTableResult = await env.client.workflow.execute('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `typed-export-${Date.now()}`,
      args: [{ tableId: 'in.c-typed.orders', destination, polling: { initialMs: 200, maxMs: 1000 } } satisfies ExportTableInput],
    });
    expect(readFileSync(destination, 'utf8')).toBe('"id","price","day","name"\n"9","1.00","2025-01-01","only"\n');
    expect(result.bytes).toBe(readFileSync(destination).length);
  });

  it('refuses a source whose header does not match the typed columns before creating anything', async () => {
    const failure = await failureOf(
      run({
        source: csvFile('mismatch.csv', 'id,extra\n1,x\n'),
        bucketId: 'in.c-typed-new',
        createBucket: true,
        table: 't',
        typedColumns: [
          { name: 'id', definition: { type: 'INTEGER' } },
          { name: 'name', definition: { type: 'VARCHAR' } },
        ],
      }),
    );
    expect(failure.type).toBe('SAPI_INVALID_INPUT');
    expect(failure.message).toMatch(/header of .*mismatch\.csv \(id, extra\) does not match the typed columns \(id, name\): missing name; not defined extra/);
    expect((await api('buckets/in.c-typed-new')).status).toBe(404);
    expect(await filesNamed('mismatch.csv')).toEqual([]);
  });

  it('reconciles a lost tables-definition response: one definition job, one typed table with the rows', async () => {
    const before = env.emulator.requests.length;
    env.emulator.faults.add({ method: 'POST', path: 'tables-definition$', times: 1, action: { type: 'dropResponse' } });
    const result = await run({
      source: csvFile('lost.csv', 'k\n1\n2\n'),
      bucketId: 'in.c-typed-lost',
      createBucket: true,
      table: 'lost',
      typedColumns: [{ name: 'k', definition: { type: 'INTEGER' } }],
    });
    expect(result).toMatchObject({ importedRowsCount: 2, typed: true });
    expect((await env.emulator.readTable('in.c-typed-lost.lost')).rows).toEqual([['1'], ['2']]);
    const posts = env.emulator.requests.slice(before).filter((r) => r.method === 'POST' && r.path.endsWith('/tables-definition'));
    expect(posts).toEqual([expect.objectContaining({ fault: 'dropResponse' })]);
  });

  it('removes the typed table it created when the load fails in a run continued as new (the table travels in the resume state)', async () => {
    // a genuine chain: its first run "created" a typed table and a file (requests carrying the marker of one of its
    // activities, as the service records it), and its second run, continued as new, polls a load job that ended in error
    const chain = await continuedRuns(env);
    try {
      const workflowId = `typed-import-continued-${Date.now()}-${++n}`;
      const marker = `sapi-temporal.${await chain.begin(workflowId)}.7`;
      const defined = await post(
        'buckets/in.c-typed/tables-definition',
        { name: 'resumed', columns: [{ name: 'k', definition: { type: 'INTEGER' } }] },
        marker,
      );
      expect(defined.status).toBe(202);
      await eventuallyTable('in.c-typed.resumed');
      const file = await post('files/prepare', { name: 'resumed.csv' }, marker);
      const failedJob = ((await api('jobs?limit=100')).body as Json[]).find((j) => j.status === 'error' && j.operationName === 'tableImport');
      expect(failedJob).toBeDefined();
      const resume = {
        fileId: file.body.id,
        bytes: 1,
        job: { id: failedJob.id, status: 'processing', operationName: 'tableImport' },
        pollingSince: Date.now(),
        createdTable: true,
        typed: true,
      };
      const input = {
        polling: { initialMs: 200, maxMs: 1000 },
        source: 'unused.csv',
        bucketId: 'in.c-typed',
        table: 'resumed',
        typedColumns: [{ name: 'k', definition: { type: 'INTEGER' } }],
        resume,
      };
      const failure = await failureOf((await chain.continueWith(workflowId, 'importTableWorkflow', input)).result());
      expect(failure.type).toBe('SAPI_JOB_FAILED');
      expect((await api('tables/in.c-typed.resumed')).status).toBe(404);
      expect((await api(`files/${file.body.id}`)).status).toBe(404);
    } finally {
      await chain.stop();
    }
  });

  /** Waits until a table exists (a definition job is quick). */
  async function eventuallyTable(tableId: string): Promise<void> {
    for (let i = 0; i < 50 && (await api(`tables/${tableId}`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await api(`tables/${tableId}`)).status).toBe(200);
  }

  it('rejects typed columns for a load, an unknown primary key and a reserved metadata provider before touching the service', async () => {
    const source = csvFile('x.csv', 'id\n1\n');
    const failure = await failureOf(
      run({
        source,
        bucketId: 'in.c-typed',
        table: 'orders',
        mode: 'load',
        typedColumns: [{ name: 'id', definition: { type: 'INTEGER' } }],
        primaryKey: ['nope'],
        metadataProvider: 'storage',
        metadata: { 'bad key': 'v' },
      }),
    );
    expect(failure.type).toBe('SAPI_INVALID_INPUT');
    expect(failure.message).toContain('typedColumns need mode create');
    expect(failure.message).toContain('primaryKey nope not among the typedColumns');
    expect(failure.message).toContain('metadata key "bad key" must be');
    expect(failure.message).toContain('metadataProvider must be a non-empty name other than "storage"');
  });

  it('sets a description on an untyped table it creates; metadata the service refuses removes that table again, naming the table', async () => {
    const ok = await run({
      source: csvFile('plain.csv', 'a,b\n1,2\n'),
      bucketId: 'in.c-typed',
      table: 'plain',
      description: 'untyped, described',
      metadataProvider: 'user',
    });
    expect(ok).toMatchObject({ importedRowsCount: 1, typed: false, metadataSet: 1 });
    expect(((await api('tables/in.c-typed.plain/metadata')).body as Json[]).map((m) => [m.key, m.value, m.provider])).toEqual([
      ['KBC.description', 'untyped, described', 'user'],
    ]);

    // the emulator refuses values longer than 65,535 characters, as the service does
    const refused = await failureOf(
      run({
        source: csvFile('long.csv', 'id\n1\n'),
        bucketId: 'in.c-typed',
        table: 'long',
        typedColumns: [{ name: 'id', definition: { type: 'INTEGER' } }],
        description: 'x'.repeat(70_000),
      }),
    );
    expect(refused.type).toBe('SAPI_VALIDATION');
    expect(refused.message).toMatch(/setting metadata \(KBC\.description, provider sapi-temporal\) on table in\.c-typed\.long failed: .*longer than 65535/);
    expect((await api('tables/in.c-typed.long')).status).toBe(404);
    expect(await filesNamed('long.csv')).toEqual([]);

    // into a table the run did not create: the rows stay loaded, and the failure says so
    const kept = await failureOf(
      run({
        source: csvFile('plain2.csv', 'a,b\n3,4\n'),
        bucketId: 'in.c-typed',
        table: 'plain',
        mode: 'load',
        incremental: true,
        description: 'y'.repeat(70_000),
      }),
    );
    expect(kept.message).toMatch(/^the rows were loaded into in\.c-typed\.plain, but its metadata was not set: setting metadata/);
    expect((await env.emulator.readTable('in.c-typed.plain')).rows).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
  });
});
