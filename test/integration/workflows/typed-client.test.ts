/**
 * The package's typed client helpers, against the dev server: an import and an export started with typed inputs
 * give typed results; two starts under one workflow id (a retried start) attach to one run and one Storage job;
 * the run carries the summary a person sees in the UI.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { executeExport, executeImport, startImport } from '../../../src/client';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';

describe('typed client helpers', () => {
  let env: SapiTestEnv;
  beforeAll(async () => {
    env = await startSapiTestEnv('typed-client');
  });
  afterAll(() => env?.stop());

  it('imports and exports with typed inputs and results', async () => {
    const source = join(env.dataDir, 'orders.csv');
    writeFileSync(source, 'id,name\n1,a\n2,b\n');
    const imported = await executeImport(env.client, { source, bucketId: 'in.c-typed-client', createBucket: true, table: 'orders', polling: { initialMs: 200, maxMs: 1000 } }, { taskQueue: env.taskQueue });
    expect(imported.tableId).toBe('in.c-typed-client.orders');
    expect((await env.emulator.readTable('in.c-typed-client.orders')).rows).toEqual([['1', 'a'], ['2', 'b']]);

    const destination = join(env.dataDir, 'out.csv');
    const exported = await executeExport(env.client, { tableId: imported.tableId, destination, polling: { initialMs: 200, maxMs: 1000 } }, { taskQueue: env.taskQueue });
    const written = readFileSync(destination);
    expect(exported).toMatchObject({ path: destination, bytes: written.length, sha256: createHash('sha256').update(written).digest('hex') });
  });

  it('attaches a second start under the same workflow id to the running run: one run, one Storage job', async () => {
    const seenBefore = env.emulator.requests.length;
    const source = join(env.dataDir, 'again.csv');
    writeFileSync(source, 'id\n1\n');
    const input = { source, bucketId: 'in.c-typed-client', table: 'again', polling: { initialMs: 200, maxMs: 1000 } };
    const options = { taskQueue: env.taskQueue, workflowId: `typed-client-attach-${Date.now()}` };
    const [first, second] = await Promise.all([startImport(env.client, input, options), startImport(env.client, input, options)]);
    expect(second.firstExecutionRunId).toBe(first.firstExecutionRunId);
    const [a, b] = await Promise.all([first.result(), second.result()]);
    expect(b).toEqual(a);
    const jobs = env.emulator.requests.slice(seenBefore).filter((r) => r.method === 'POST' && /\/buckets\/in\.c-typed-client\/tables-async$/.test(r.path));
    expect(jobs).toHaveLength(1);
    const described = await first.describe();
    expect(await described.staticSummary()).toMatch(/^import again\.csv → in\.c-typed-client\.again/);
  });
});
