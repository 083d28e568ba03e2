import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useEmulator } from './support';
import { PYTHON, PYTHONPATH, pythonCheck, runPython } from '../../harness/python-client';

/** Faithfulness: the official Python client (kbcstorage, pinned 0.12.0) works against the emulator unchanged. */
describe('official Python client against the emulator', () => {
  // A tiny slice size forces the export to be sliced, like large exports of the real service.
  const env = useEmulator({ sliceSizeBytes: 40 });

  test('uploads, creates a table, loads incrementally, exports a sliced file and lists jobs', async () => {
    const probe = spawnSync(PYTHON, ['-c', 'import kbcstorage.client, boto3; print(boto3.__version__)'], { env: { ...process.env, PYTHONPATH }, encoding: 'utf8' });
    if (probe.status !== 0) {
      throw new Error(`kbcstorage is not importable from ${PYTHONPATH}: install it with \`pip install --target .tools/python kbcstorage==0.12.0\` (the tools installer should do this)\n${probe.stderr}`);
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
      expect(out.created.metadata).toEqual([{ id: expect.stringMatching(/^\d+$/), key: 'KBC.description', value: 'People', provider: 'user', timestamp: expect.any(String) }]);
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
});
