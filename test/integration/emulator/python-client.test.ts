import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useEmulator } from './support';
import { PYTHON, PYTHONPATH, pythonCheck, runPython } from '../../harness/python-client';

/** Faithfulness: the official Python client (kbcstorage, pinned 0.12.0) works against the emulator unchanged. */
describe('official Python client against the emulator', () => {
  // No special settings: exports are sliced and headerless by default, as on the service's Snowflake stacks.
  const env = useEmulator();

  test('uploads, creates a table, loads incrementally, exports a sliced file and lists jobs', async () => {
    const probe = spawnSync(PYTHON, ['-c', 'import kbcstorage.client, boto3; print(boto3.__version__)'], {
      env: { ...process.env, PYTHONPATH },
      encoding: 'utf8',
    });
    if (probe.status !== 0) {
      throw new Error(
        `kbcstorage is not importable from ${PYTHONPATH}: install it with \`pip install --target .tools/python kbcstorage==0.12.0\` (the tools installer should do this)\n${probe.stderr}`,
      );
    }
    const work = mkdtempSync(join(tmpdir(), 'sapi-pyclient-'));
    try {
      // Asynchronous on purpose: the emulator serves the script from this very process.
      const run = await runPython([pythonCheck('kbc_client_check.py'), env.emulator.url, env.emulator.token, work], {
        ...process.env,
        PYTHONPATH,
        AWS_ENDPOINT_URL_S3: env.minio.endpoint,
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      if (run.status !== 0) throw new Error(`python client check failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
      expect(out.tableId).toBe('in.c-pyclient.people');
      expect(out.loadResults).toMatchObject({ importedRowsCount: 2, totalRowsCount: 4 });
      expect(out.table).toEqual({ id: 'in.c-pyclient.people', name: 'people', columns: ['id', 'name', 'city'], primaryKey: ['id'], rowsCount: 4 });
      expect(out.exportFile).toMatchObject({ isSliced: true, tags: ['table-export'] });
      expect(out.exportedCsv).toBe('"id","name","city"\n"1","Ann","Prague"\n"2","Bob, Jr.","Brno"\n"3","Cid","Olomouc"\n"4","Dan","Plzen"\n');
      expect(out.jobs.map((j: { operationName: string }) => j.operationName)).toEqual(['tableExport', 'tableImport', 'tableCreate']);
      expect(out.jobs.every((j: { status: string }) => j.status === 'success')).toBe(true);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  test('sets, lists and deletes table metadata, previews data and reads the default branch and its metadata (issue 16 routes)', async () => {
    const work = mkdtempSync(join(tmpdir(), 'sapi-pyroutes-'));
    try {
      const run = await runPython([pythonCheck('kbc_routes_check.py'), env.emulator.url, env.emulator.token, work], {
        ...process.env,
        PYTHONPATH,
        AWS_ENDPOINT_URL_S3: env.minio.endpoint,
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      if (run.status !== 0) throw new Error(`python routes check failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
      expect(out.created.metadata).toEqual([
        { id: expect.stringMatching(/^\d+$/), key: 'KBC.description', value: 'People', provider: 'user', timestamp: expect.any(String) },
      ]);
      expect(out.created.columnsMetadata.name).toEqual([expect.objectContaining({ key: 'KBC.description', value: 'first name', provider: 'user' })]);
      expect(out.listed).toEqual([{ key: 'KBC.description', value: 'People', provider: 'user' }]);
      expect(out.afterDelete).toEqual([]);
      expect(out.columnMetadata).toEqual({ name: ['first name'] });
      expect(out.preview).toBe('"name","id"\n"Ann","1"\n"Bob, Jr.","2"\n"Cid","3"\n');
      expect(out.previewFiltered).toBe('"name"\n"Ann"\n"Cid"\n');
      expect(out.defaultBranch).toEqual({ id: 1, name: 'Main', description: '', created: '2020-01-01T00:00:00+0000', isDefault: true });
      expect(out.branchOne).toEqual(out.defaultBranch);
      expect(out.branchMetadata).toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  test("passes its own token, bucket, metadata, export, file and configuration calls with the service's shapes (issue 26)", async () => {
    const work = mkdtempSync(join(tmpdir(), 'sapi-pyfaithful-'));
    try {
      const run = await runPython([pythonCheck('kbc_faithful_check.py'), env.emulator.url, env.emulator.token, work], {
        ...process.env,
        PYTHONPATH,
        AWS_ENDPOINT_URL_S3: env.minio.endpoint,
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      if (run.status !== 0) throw new Error(`python faithful check failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
      expect(out.token).toEqual({ id: '101', description: 'test token', isMasterToken: true });
      expect(out.owner).toEqual({ id: 1, defaultBackend: 'snowflake', fileStorageProvider: 'aws' });
      expect(out.emptyBucket).toEqual({
        id: 'in.c-faithful',
        name: 'c-faithful',
        description: 'Test bucket',
        tables: [],
        attributes: [],
        backend: 'snowflake',
      });
      expect(out.bucketTables).toEqual([{ id: 'in.c-faithful.people', name: 'people', rowsCount: 2 }]);
      expect(out.listedTables).toEqual(['in.c-faithful.people']);
      expect(out.metadata.columnsMetadata.name).toEqual([expect.objectContaining({ key: 'test_column_with_metadata', value: 'success', provider: 'test' })]);
      expect(out.columnMetadata).toEqual({ name: [['test_column_with_metadata', 'success', 'test']] });
      // The header once: the client adds it to the headerless export.
      expect(out.exportedCsv).toBe('"id","name"\n"1","Ann"\n"2","Bob, Jr."\n');
      expect(out.exportFile).toEqual({ isSliced: true, region: env.minio.region, provider: 'aws' });
      expect(out.downloadedGzipped).toBe(true);
      expect(out.downloadedExport).toBe('"1","Ann"\n"2","Bob, Jr."\n');
      expect(out.config).toEqual({ name: 'My config', version: 1, changeDescription: 'Initial', configuration: { parameters: { db: 'x' } }, isDeleted: false });
      expect(out.configList).toHaveLength(1);
      expect(out.configDetail).toEqual({ parameters: { db: 'x' } });
      expect(out.components).toEqual(['keboola.ex-db-mysql']);
      expect(out.configListAfterDelete).toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  test('passes its own table, file and component calls that round 3 made faithful: definition of an untyped table, a table from a snapshot, delete, file tags, components, configuration metadata (issue 39)', async () => {
    const work = mkdtempSync(join(tmpdir(), 'sapi-pyround3-'));
    try {
      const run = await runPython([pythonCheck('kbc_round3_check.py'), env.emulator.url, env.emulator.token, work], {
        ...process.env,
        PYTHONPATH,
        AWS_ENDPOINT_URL_S3: env.minio.endpoint,
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      if (run.status !== 0) throw new Error(`python round 3 check failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
      expect(out.definition).toEqual({
        primaryKeysNames: ['id'],
        columns: [
          { name: 'id', definition: {} },
          { name: 'amount', definition: {} },
        ],
      });
      expect(out.verifyFeatures).toEqual(['queuev2', 'storage-types']);
      expect(out.snapshotJob).toEqual({ status: 'success', operationName: 'tableSnapshotCreate' });
      expect(out.restored).toEqual({ id: 'in.c-round3.orders_restored', columns: ['id', 'amount'], primaryKey: ['id'], rowsCount: 2 });
      expect(out.restoredPreview).toBe('"id","amount"\n"1","10"\n"2","20"\n');
      expect(out.tablesAfterDelete).toEqual(['in.c-round3.orders']);
      expect(out.fileTags).toEqual(['round3']);
      expect(out.filesByTag).toEqual([true]);
      expect(out.genericComponent).toEqual({
        id: 'ex-generic-v2',
        type: 'extractor',
        name: 'Generic',
        uri: `${env.emulator.url}/v2/storage/components/ex-generic-v2`,
      });
      expect(out.rowState).toBeNull();
      expect(out.unknownComponent).toEqual({ status: 404, code: 'storage.components.notFound' });
      expect(out.metadataCreated).toEqual([['KBC.configuration.folderName', 'APIs']]);
      expect(out.metadataListed).toEqual([['KBC.configuration.folderName', 'APIs']]);
      expect(out.metadataAfterDelete).toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
