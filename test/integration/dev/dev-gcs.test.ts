import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { emulatorService } from '../../../src/dev/services';
import { startDevStack } from '../../../src/dev/stack';
import { startFakeGcs } from '../../../src/dev/gcs';
import { eventually, isAlive } from '../../harness/processes';
import { PYTHONPATH, pythonCheck, runPython } from '../../harness/python-client';
import { describeInSweep } from '../../harness/backend-sweep';

const ROOT = resolve(__dirname, '..', '..', '..');
/** In `make test-backends` only: `make test` runs the dev stack and the Python client on MinIO (dev-stack.test.ts, emulator/python-client.test.ts),
 * the gcp backend's file storage end to end in workflows/gcs-backend.test.ts. */
describeInSweep('dev stack with --backend gcp', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'sapi-devstack-gcp-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs the emulator on fake-gcs-server: prepare answers gcsUploadParams and the official Python client works unchanged', async () => {
    // a tiny slice size makes the export sliced, so the client reads a gs:// manifest
    const stack = await startDevStack({ dataDir, localRoots: [dataDir], headless: true, backend: 'gcp', services: [emulatorService({ sliceSizeBytes: 40 })] });
    const pids = [stack.temporal.process.pid, stack.minio.process.pid, stack.fakeGcs!.process.pid];
    try {
      expect(stack.env).toMatchObject({ SAPI_EMULATOR_BACKEND: 'gcp', STORAGE_EMULATOR_HOST: stack.fakeGcs!.endpoint });
      const prepared = await request(`${stack.env.SAPI_URL}/v2/storage/files/prepare`, {
        method: 'POST',
        headers: { 'x-storageapi-token': stack.env.SAPI_TOKEN as string, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'probe.csv', federationToken: true }),
      });
      const file = (await prepared.body.json()) as Record<string, unknown>;
      expect(file).toMatchObject({
        provider: 'gcp',
        gcsUploadParams: {
          bucket: 'sapi-files',
          key: expect.any(String),
          access_token: expect.any(String),
          expires_in: expect.any(Number),
          token_type: 'Bearer',
          projectId: stack.fakeGcs!.projectId,
        },
      });
      expect(file).not.toHaveProperty('uploadParams');

      const work = mkdtempSync(join(dataDir, 'py-'));
      // the Python client reaches fake-gcs-server the way Google's clients reach any emulator: STORAGE_EMULATOR_HOST
      const run = await runPython([pythonCheck('kbc_client_check.py'), stack.env.SAPI_URL as string, stack.env.SAPI_TOKEN as string, work], {
        ...process.env,
        PYTHONPATH,
        STORAGE_EMULATOR_HOST: stack.env.STORAGE_EMULATOR_HOST,
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

  it('sapi-temporal emulator --backend gcp keeps files in the fake-gcs-server of STORAGE_EMULATOR_HOST until Ctrl-C', async () => {
    const gcs = await startFakeGcs({ dataDir: join(dataDir, 'fake-gcs') });
    const child = spawn(
      process.execPath,
      [
        '-r',
        join(ROOT, 'scripts', 'ts-register.js'),
        join(ROOT, 'bin', 'sapi-temporal.js'),
        '--',
        'emulator',
        '--backend',
        'gcp',
        '--data-dir',
        join(dataDir, 'emulator'),
      ],
      {
        env: { ...process.env, STORAGE_EMULATOR_HOST: gcs.endpoint, GOOGLE_CLOUD_PROJECT: 'cli-project', SAPI_EMULATOR_BUCKET: 'cli-files' },
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
      expect(await prepared.body.json()).toMatchObject({ provider: 'gcp', isSliced: true, gcsUploadParams: { bucket: 'cli-files', projectId: 'cli-project' } });
      // the bucket was created in the store
      const bucket = await request(`${gcs.endpoint}/storage/v1/b/cli-files`);
      expect(bucket.statusCode).toBe(200);
      await bucket.body.dump();
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      await gcs.stop();
    }
  });
});
