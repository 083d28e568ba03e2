import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from '../../../src/contracts/transfer';
import { startAzurite, type AzuriteHandle } from '../../../src/dev/azurite';
import { startFakeGcs, type FakeGcsHandle } from '../../../src/dev/gcs';
import { type EmulatorOptions } from '../../../src/emulator';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { type Json, client, expectSuccess, waitForJob } from './support';

type Backend = 'aws' | 'azure' | 'gcp';

/**
 * Issue 39: after the emulator's table changes (a column added, a truncate, a snapshot restored) the plugin's own
 * import and export workflows work on the table, on each of the three object stores.
 */
describe.each<Backend>(['aws', 'azure', 'gcp'])("table changes then the plugin's import and export (%s)", (backend) => {
  let env: SapiTestEnv;
  let azurite: AzuriteHandle | undefined;
  let gcs: FakeGcsHandle | undefined;
  let n = 0;

  beforeAll(async () => {
    const dir = join(testStack().dataDir, `changes-${backend}-${process.pid}-${Date.now().toString(36)}`);
    let emulator: Partial<EmulatorOptions> = {};
    let settings: Record<string, string> = {};
    if (backend === 'azure') {
      azurite = await startAzurite({ dataDir: join(dir, 'azurite') });
      emulator = {
        backend,
        abs: { blobEndpoint: azurite.blobEndpoint, accountName: azurite.accountName, accountKey: azurite.accountKey, container: 'sapi-files' },
      };
    } else if (backend === 'gcp') {
      gcs = await startFakeGcs({ dataDir: join(dir, 'gcs') });
      emulator = { backend, gcs: { endpoint: gcs.endpoint, projectId: gcs.projectId, bucket: 'sapi-files' } };
      // the plugin's GCS client talks to fake-gcs-server, as in the GCS workflow tests
      settings = { STORAGE_EMULATOR_HOST: gcs.endpoint };
    }
    env = await startSapiTestEnv(`changes-${backend}`, { emulator, env: settings });
  });
  afterAll(async () => {
    await env?.stop();
    await azurite?.stop();
    await gcs?.stop();
  });

  const api = (method: string, path: string, json?: unknown) =>
    client(env.emulator)(method, path, { token: env.emulator.token, ...(json === undefined ? {} : { json }) });
  /** Starts a table change and waits for its job. */
  async function change(method: string, path: string, json?: unknown): Promise<Json> {
    const res = await api(method, path, json);
    expect(res.status).toBe(202);
    return expectSuccess(await waitForJob((m, p) => api(m, p), res.body.id));
  }
  const execute = <T>(type: string, input: object) =>
    env.client.workflow.execute(type, {
      taskQueue: env.taskQueue,
      workflowId: `${type}-changes-${backend}-${Date.now()}-${++n}`,
      args: [{ polling: { initialMs: 100, maxMs: 500 }, ...input }],
    }) as Promise<T>;
  function importCsv(name: string, content: string, input: Partial<ImportTableInput>): Promise<ImportTableResult> {
    const source = join(env.dataDir, `${name}-${++n}.csv`);
    writeFileSync(source, content);
    return execute<ImportTableResult>('importTableWorkflow', { source, bucketId: 'in.c-changes', createBucket: true, table: 't', ...input });
  }
  async function exportCsv(tableId: string): Promise<string> {
    const result = await execute<ExportTableResult>('exportTableWorkflow', {
      tableId,
      destination: join(env.dataDir, 'out', `${++n}.csv`),
    } satisfies ExportTableInput);
    return readFileSync(result.path, 'utf8');
  }

  test('a column added then loaded, a truncated table reloaded, a snapshot restored: each exported with the rows it should have', async () => {
    await importCsv('first', 'id,name\n1,Ann\n2,Bob\n', { mode: 'create', primaryKey: ['id'] });
    // a column added, then loaded incrementally by the plugin
    await change('POST', '/tables/in.c-changes.t/columns', { name: 'city' });
    await importCsv('second', 'id,name,city\n2,Bob,Brno\n3,Cid,Olomouc\n', { mode: 'load', incremental: true });
    const loaded = '"id","name","city"\n"1","Ann",""\n"2","Bob","Brno"\n"3","Cid","Olomouc"\n';
    expect(await exportCsv('in.c-changes.t')).toBe(loaded);
    // a snapshot of that state
    const snapshot = await change('POST', '/tables/in.c-changes.t/snapshots', { description: 'three people' });
    // truncated, then reloaded by the plugin
    expect((await change('DELETE', '/tables/in.c-changes.t/rows?allowTruncate=1')).results).toEqual({ deletedRows: 3 });
    await importCsv('third', 'id,name,city\n7,Eve,Zlin\n', { mode: 'load' });
    expect(await exportCsv('in.c-changes.t')).toBe('"id","name","city"\n"7","Eve","Zlin"\n');
    // the snapshot restored as a new table exports row-identical to the table when it was taken
    const restored = await change('POST', '/buckets/in.c-changes/tables-async', { snapshotId: snapshot.results.id, name: 'restored' });
    expect(restored.results).toMatchObject({ id: 'in.c-changes.restored', primaryKey: ['id'], rowsCount: 3 });
    expect(await exportCsv('in.c-changes.restored')).toBe(loaded);
    // and takes a load of the plugin like any table
    await importCsv('fourth', 'id,name,city\n3,Cid,Prague\n', { table: 'restored', mode: 'load', incremental: true });
    expect(await exportCsv('in.c-changes.restored')).toBe('"id","name","city"\n"1","Ann",""\n"2","Bob","Brno"\n"3","Cid","Prague"\n');
  });
});
