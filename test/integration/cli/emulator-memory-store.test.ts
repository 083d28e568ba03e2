import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FormData, request } from 'undici';
import { eventually } from '../../harness/processes';

const ROOT = resolve(__dirname, '..', '..', '..');

/** `sapi-temporal emulator` with its arguments; resolves with what it printed once it exits or prints its token. */
function emulatorCli(args: string[], dataDir: string) {
  const child = spawn(
    process.execPath,
    ['-r', join(ROOT, 'scripts', 'ts-register.js'), join(ROOT, 'bin', 'sapi-temporal.js'), '--', 'emulator', '--data-dir', dataDir, ...args],
    {
      // no object-storage server in the environment: the memory store needs none
      env: { ...process.env, AWS_ENDPOINT_URL_S3: '', AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, out, exited };
}

describe('sapi-temporal emulator --store memory', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'sapi-emulator-cli-memory-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs with no object-storage server: a file uploaded through the importer downloads from its url; prepare answers 501; Ctrl-C stops it', async () => {
    const { child, out, exited } = emulatorCli(['--store', 'memory'], dataDir);
    try {
      await eventually(() => /SAPI_TOKEN/.test(out.stdout) || child.exitCode !== null, 60_000, 'the emulator did not start');
      expect(out.stdout).toMatch(/data in memory/);
      const importUrl = /SAPI_IMPORT_URL +(\S+)/.exec(out.stdout)?.[1] as string;
      const url = /SAPI_URL +(\S+)/.exec(out.stdout)?.[1] as string;
      const token = /SAPI_TOKEN +(\S+)/.exec(out.stdout)?.[1] as string;
      const form = new FormData();
      form.append('data', new Blob(['a,b\n1,2\n']), 'probe.csv');
      const uploaded = (await (
        await request(`${importUrl}/upload-file`, { method: 'POST', headers: { 'x-storageapi-token': token }, body: form })
      ).body.json()) as { url: string };
      expect(await (await request(uploaded.url)).body.text()).toBe('a,b\n1,2\n');
      const prepared = await request(`${url}/v2/storage/files/prepare`, {
        method: 'POST',
        headers: { 'x-storageapi-token': token, 'content-type': 'application/json' },
        body: '{"name":"p.csv"}',
      });
      expect(prepared.statusCode).toBe(501);
      expect(await prepared.body.json()).toMatchObject({ code: 'emulator.memoryStoreUnsupported' });
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    }
  });

  it('refuses an unknown store and a backend the memory store does not answer as, naming the choices', async () => {
    const unknown = emulatorCli(['--store', 'disk'], dataDir);
    expect(await unknown.exited).not.toBe(0);
    expect(unknown.out.stderr).toMatch(/--store <store>.*'disk' is invalid.*server, memory/s);
    const gcp = emulatorCli(['--store', 'memory', '--backend', 'gcp'], dataDir);
    expect(await gcp.exited).not.toBe(0);
    expect(gcp.out.stderr).toMatch(/--store memory answers as an aws stack.*--backend gcp needs --store server/);
  });
});
