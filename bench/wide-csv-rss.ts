// Peak RSS of the emulator's process while it loads a two-line CSV of N columns (importer upload + tables-async), one
// fresh process per width, killed when its RSS passes RSS_CAP_MB (default 3072): the figures of issue 29.
//   node -r ./scripts/ts-register.js bench/wide-csv-rss.ts 999 1000 1599 1600 4000 10000
// EMULATOR_CHILD names another entry (before the emulator had src/emulator/child.ts: bench/emulator-child.ts, which
// read the same options from BENCH_EMULATOR_OPTIONS).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FormData, request } from 'undici';
import { startMinio } from '../src/dev/minio';

const repo = resolve(__dirname, '..');
const capKb = Number(process.env.RSS_CAP_MB ?? 3072) * 1024;
const childScript = resolve(process.env.EMULATOR_CHILD ?? join(repo, 'src/emulator/child.ts'));

function memoryKb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

async function measure(width: number, minio: Awaited<ReturnType<typeof startMinio>>): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'wide-csv-emulator-'));
  const options = JSON.stringify({
    port: 0,
    dataDir,
    s3: { endpoint: minio.endpoint, region: minio.region, accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey, bucket: 'sapi-files' },
    tokens: [{ token: 't' }],
  });
  const child = spawn(process.execPath, ['-r', join(repo, 'scripts/ts-register.js'), childScript], {
    env: { ...process.env, SAPI_EMULATOR_OPTIONS: options, BENCH_EMULATOR_OPTIONS: options },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    const url = await new Promise<string>((ok, fail) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const ready = /EMULATOR_READY (\{.*\})/.exec(out);
        if (ready) ok((JSON.parse(ready[1]!) as { url: string }).url);
      });
      child.once('exit', (code) => fail(new Error(`the emulator exited with ${code} before it was ready`)));
    });
    const pid = child.pid!;
    let peak = 0;
    let killed = false;
    const watch = setInterval(() => {
      try {
        const m = memoryKb(pid);
        peak = Math.max(peak, m.peak);
        if (m.rss > capKb) {
          killed = true;
          child.kill('SIGKILL');
        }
      } catch {
        // gone
      }
    }, 50);
    const api = async (method: 'GET' | 'POST', path: string, json?: unknown, form?: FormData): Promise<Record<string, unknown>> => {
      const res = await request(`${url}${path}`, {
        method,
        headers: { 'x-storageapi-token': 't', ...(json ? { 'content-type': 'application/json' } : {}) },
        body: json ? JSON.stringify(json) : form,
      });
      return (await res.body.json()) as Record<string, unknown>;
    };
    const started = Date.now();
    const idle = memoryKb(pid).rss;
    let outcome: string;
    try {
      await api('POST', '/v2/storage/buckets', { name: 'w', stage: 'in' });
      const form = new FormData();
      const names = Array.from({ length: width }, (_, i) => `c${i + 1}`);
      form.append('data', new Blob([`${names.join(',')}\n${names.map((_, i) => i).join(',')}\n`]), 'wide.csv');
      const file = await api('POST', '/import/upload-file', undefined, form);
      const created = await api('POST', '/v2/storage/buckets/in.c-w/tables-async', { name: 'wide', dataFileId: file.id });
      for (;;) {
        const job = (await api('GET', `/v2/storage/jobs/${created.id}`)) as unknown as {
          status: string;
          results: { columns: string[] };
          error: { code: string; message: string };
        };
        if (job.status === 'success') outcome = `success (${job.results.columns.length} columns)`;
        else if (job.status === 'error') outcome = `error ${job.error.code}: ${job.error.message.slice(0, 160)}`;
        else {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        break;
      }
    } catch (error) {
      outcome = killed ? `KILLED above ${capKb / 1024} MB` : `failed: ${(error as Error).message}`;
    }
    clearInterval(watch);
    try {
      peak = Math.max(peak, memoryKb(pid).peak);
    } catch {
      // gone
    }
    return `${width} columns: peak RSS ${Math.round(peak / 1024)} MB (idle ${Math.round(idle / 1024)} MB), ${((Date.now() - started) / 1000).toFixed(1)} s, ${outcome}`;
  } finally {
    if (!exited) {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void (async () => {
  const minioDir = mkdtempSync(join(tmpdir(), 'wide-csv-minio-'));
  const minio = await startMinio({ dataDir: minioDir });
  try {
    for (const width of process.argv.slice(2).map(Number)) process.stdout.write(`${await measure(width, minio)}\n`);
  } finally {
    await minio.stop();
    rmSync(minioDir, { recursive: true, force: true });
  }
})();
