import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { emulatorService } from '../../../src/dev/services';
import { startDevStack } from '../../../src/dev/stack';
import { startAzurite } from '../../../src/dev/azurite';
import { eventually, isAlive } from '../../harness/processes';
import { PYTHONPATH, pythonCheck, runPython } from '../../harness/python-client';
import { describeInSweep } from '../../harness/backend-sweep';

const ROOT = resolve(__dirname, '..', '..', '..');
/** In `make test-backends` only: `make test` runs the dev stack and the Python client on MinIO (dev-stack.test.ts, emulator/python-client.test.ts),
 * the azure backend's file storage end to end in workflows/azure-backend.test.ts. */
describeInSweep('dev stack with --backend azure', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'sapi-devstack-azure-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs the emulator on Azurite: prepare answers absUploadParams and the official Python client works unchanged', async () => {
    // a tiny slice size makes the export sliced, so the client reads an azure:// manifest
    const stack = await startDevStack({
      dataDir,
      localRoots: [dataDir],
      headless: true,
      backend: 'azure',
      services: [emulatorService({ sliceSizeBytes: 40 })],
    });
    const pids = [stack.temporal.process.pid, stack.minio.process.pid, stack.azurite!.process.pid];
    try {
      expect(stack.env).toMatchObject({ SAPI_EMULATOR_BACKEND: 'azure', AZURITE_BLOB_ENDPOINT: stack.azurite!.blobEndpoint });
      const prepared = await request(`${stack.env.SAPI_URL}/v2/storage/files/prepare`, {
        method: 'POST',
        headers: { 'x-storageapi-token': stack.env.SAPI_TOKEN as string, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'probe.csv', federationToken: true }),
      });
      const file = (await prepared.body.json()) as Record<string, unknown>;
      expect(file).toMatchObject({ provider: 'azure', absUploadParams: { container: 'sapi-files', accountName: stack.azurite!.accountName } });
      expect(file).not.toHaveProperty('uploadParams');
      const sas = (file.absUploadParams as { absCredentials: { SASConnectionString: string } }).absCredentials.SASConnectionString;
      expect(sas).toMatch(new RegExp(`^BlobEndpoint=${stack.azurite!.blobEndpoint};SharedAccessSignature=.*sr=b.*sp=racw`));

      const work = mkdtempSync(join(dataDir, 'py-'));
      const run = await runPython([pythonCheck('kbc_client_check.py'), stack.env.SAPI_URL as string, stack.env.SAPI_TOKEN as string, work], {
        ...process.env,
        PYTHONPATH,
      });
      if (run.status !== 0) throw new Error(`python client check failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
      expect(out.loadResults).toMatchObject({ importedRowsCount: 2, totalRowsCount: 4 });
      expect(out.exportFile).toMatchObject({ isSliced: true });
      expect(out.exportedCsv).toBe('"id","name","city"\n"1","Ann","Prague"\n"2","Bob, Jr.","Brno"\n"3","Cid","Olomouc"\n"4","Dan","Plzen"\n');
    } finally {
      await stack.stop();
    }
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it('sapi-temporal emulator --backend azure keeps files in the account of AZURE_STORAGE_CONNECTION_STRING until Ctrl-C', async () => {
    const azurite = await startAzurite({ dataDir: join(dataDir, 'azurite') });
    const child = spawn(
      process.execPath,
      [
        '-r',
        join(ROOT, 'scripts', 'ts-register.js'),
        join(ROOT, 'bin', 'sapi-temporal.js'),
        '--',
        'emulator',
        '--backend',
        'azure',
        '--data-dir',
        join(dataDir, 'emulator'),
      ],
      {
        env: {
          ...process.env,
          AZURE_STORAGE_CONNECTION_STRING: `AccountName=${azurite.accountName};AccountKey=${azurite.accountKey};BlobEndpoint=${azurite.blobEndpoint}`,
          SAPI_EMULATOR_BUCKET: 'cli-files',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    try {
      await eventually(() => /SAPI_TOKEN/.test(stdout) || child.exitCode !== null, 60_000, 'the emulator did not start');
      const url = /SAPI_URL +(\S+)/.exec(stdout)?.[1] as string;
      const token = /SAPI_TOKEN +(\S+)/.exec(stdout)?.[1] as string;
      const prepared = await request(`${url}/v2/storage/files/prepare`, {
        method: 'POST',
        headers: { 'x-storageapi-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'probe.csv', isSliced: true }),
      });
      const file = (await prepared.body.json()) as { absUploadParams: { absCredentials: { SASConnectionString: string } } };
      expect(file).toMatchObject({ provider: 'azure', isSliced: true, absUploadParams: { container: 'cli-files', accountName: azurite.accountName } });
      // a sliced file's SAS reaches its container (Azure cannot scope a SAS to a name prefix), so it may not read
      expect(file.absUploadParams.absCredentials.SASConnectionString).toMatch(/sr=c&sp=acw&/);
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      await azurite.stop();
    }
  });
});
