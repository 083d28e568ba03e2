// The baselines in their own lean process (node + the SDK or the extractor, nothing else), like the worker: the
// bench process holds the Temporal client, the storage client and more, whose heap would slow a baseline's GC.
// Command (JSON) in BENCH_BASELINE; prints `BASELINE_RESULT {json}` with the timed section's wall time, CPU and
// the process's peak RSS. Each command first warms up the code path it measures (untimed).
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { parseExtractorConfig } from '../src/extractor/config-schema';
import { createPageFetcher } from '../src/extractor/http/fetch-page';
import { runExtraction } from '../test/harness/run-extraction';

export interface S3Target {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export type BaselineCommand =
  | ({ kind: 'upload'; bucket: string; key: string; path: string; partSize: number; queueSize: number } & S3Target)
  | ({ kind: 'download'; bucket: string; prefix: string; destination: string } & S3Target)
  | { kind: 'extract'; config: unknown; warmUpConfig: unknown }
  /** MinIO's client: `mc cp` of the file to `bucket/key`. */
  | ({ kind: 'mc-upload'; mc: string; bucket: string; key: string; path: string } & S3Target)
  /** MinIO's client: `mc cp` of every slice the manifest under `prefix` lists, into the folder `destination`. */
  | ({ kind: 'mc-download'; mc: string; bucket: string; prefix: string; destination: string } & S3Target);

export interface BaselineResult {
  ms: number;
  bytes?: number;
  slices?: number;
  pages?: number;
  cpu: { user: number; system: number };
  /** CPU of the `mc` process of the timed section (mc baselines; `cpu` is then this process's, waiting). */
  mcCpu?: { user: number; system: number };
  /** Peak RSS of this process (KiB), warm-up included. */
  maxRssKiB: number;
}

async function run(command: BaselineCommand): Promise<Omit<BaselineResult, 'cpu' | 'maxRssKiB'> & { started: number; cpu0: NodeJS.CpuUsage }> {
  if (command.kind === 'mc-upload' || command.kind === 'mc-download') return runMc(command);
  if (command.kind === 'extract') {
    const fetchPage = createPageFetcher();
    await runExtraction(parseExtractorConfig(command.warmUpConfig), { fetchPage, keepRows: false, keepRequests: false });
    const config = parseExtractorConfig(command.config);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    const result = await runExtraction(config, { fetchPage, keepRows: false, keepRequests: false });
    return { started, cpu0, ms: performance.now() - started, pages: result.pages };
  }
  const s3 = new S3Client({ endpoint: command.endpoint, region: command.region, forcePathStyle: true, credentials: command.credentials });
  if (command.kind === 'upload') {
    // warm-up: a two-part multipart upload (5 MiB parts) through the same code path
    const warmKey = `${command.key}.warmup`;
    await new Upload({
      client: s3,
      params: { Bucket: command.bucket, Key: warmKey, Body: Buffer.alloc(6 * 1024 * 1024, 'w') },
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    }).done();
    await s3.send(new DeleteObjectCommand({ Bucket: command.bucket, Key: warmKey })).catch(() => undefined);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    await new Upload({
      client: s3,
      params: { Bucket: command.bucket, Key: command.key, Body: createReadStream(command.path) },
      partSize: command.partSize,
      queueSize: command.queueSize,
    }).done();
    return { started, cpu0, ms: performance.now() - started, bytes: statSync(command.path).size };
  }
  // download, as the official clients do: the manifest, then every slice in order, appended to one file
  const readManifest = async () => {
    const manifest = await s3.send(new GetObjectCommand({ Bucket: command.bucket, Key: `${command.prefix}manifest` }));
    return (JSON.parse(await manifest.Body!.transformToString()) as { entries: Array<{ url: string }> }).entries;
  };
  await readManifest(); // warm-up
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const entries = await readManifest();
  const out = createWriteStream(command.destination);
  for (const entry of entries) {
    const [, bucket, key] = /^s3:\/\/([^/]+)\/(.+)$/.exec(entry.url)!;
    const slice = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    for await (const chunk of slice.Body as Readable) {
      if (!out.write(chunk)) await once(out, 'drain');
    }
  }
  out.end();
  await once(out, 'close');
  return { started, cpu0, ms: performance.now() - started, bytes: statSync(command.destination).size, slices: entries.length };
}

/**
 * `mc cp` against the same MinIO (its alias from `MC_HOST_bench`, a config folder of its own), after an untimed
 * `mc ls` of the bucket (the binary and its connection warmed up). The CPU of mc is this process's children's
 * (`/proc/self/stat` cutime/cstime, counted once node has reaped it).
 */
async function runMc(
  command: Extract<BaselineCommand, { kind: 'mc-upload' | 'mc-download' }>,
): Promise<Omit<BaselineResult, 'cpu' | 'maxRssKiB'> & { started: number; cpu0: NodeJS.CpuUsage }> {
  const url = new URL(command.endpoint);
  const { accessKeyId, secretAccessKey } = command.credentials;
  const configDir = mkdtempSync(join(tmpdir(), 'bench-mc-'));
  const env = {
    ...process.env,
    MC_CONFIG_DIR: configDir,
    MC_HOST_bench: `${url.protocol}//${encodeURIComponent(accessKeyId)}:${encodeURIComponent(secretAccessKey)}@${url.host}`,
  };
  const mc = (args: string[]) =>
    new Promise<void>((resolve, reject) =>
      execFile(command.mc, ['--quiet', '--no-color', ...args], { env, maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) =>
        err ? reject(new Error(`mc ${args[0]} failed: ${err.message} ${stderr.slice(-500)}`)) : resolve(),
      ),
    );
  try {
    await mc(['ls', `bench/${command.bucket}`]); // warm-up
    let sources: string[];
    if (command.kind === 'mc-download') {
      await mc(['cp', `bench/${command.bucket}/${command.prefix}manifest`, join(configDir, 'manifest')]);
      const entries = (JSON.parse(readFileSync(join(configDir, 'manifest'), 'utf8')) as { entries: Array<{ url: string }> }).entries;
      sources = entries.map((e) => `bench/${e.url.replace(/^s3:\/\//, '')}`);
      rmSync(command.destination, { recursive: true, force: true });
      mkdirSync(command.destination, { recursive: true });
    } else sources = [command.path];
    const target = command.kind === 'mc-upload' ? `bench/${command.bucket}/${command.key}` : `${command.destination}/`;
    const children0 = childrenCpu();
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    await mc(['cp', ...sources, target]);
    const ms = performance.now() - started;
    const children = childrenCpu();
    const mcCpu = { user: children.user - children0.user, system: children.system - children0.system };
    if (command.kind === 'mc-upload') return { started, cpu0, ms, bytes: statSync(command.path).size, mcCpu };
    const files = readdirSync(command.destination);
    const bytes = files.reduce((n, f) => n + statSync(join(command.destination, f)).size, 0);
    rmSync(command.destination, { recursive: true, force: true });
    return { started, cpu0, ms, bytes, slices: sources.length, mcCpu };
  } finally {
    rmSync(configDir, { recursive: true, force: true });
  }
}

/** CPU seconds of the children this process has waited for (`/proc/self/stat` cutime, cstime; clock ticks of 1/100 s). */
function childrenCpu(): { user: number; system: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
  return { user: Number(fields[13]) / 100, system: Number(fields[14]) / 100 };
}

void (async () => {
  const raw = process.env.BENCH_BASELINE;
  if (!raw) throw new Error('BENCH_BASELINE is not set: pass the baseline command as JSON');
  const { started: _started, cpu0, ...measured } = await run(JSON.parse(raw) as BaselineCommand);
  const cpu = process.cpuUsage(cpu0);
  const result: BaselineResult = { ...measured, cpu: { user: cpu.user / 1e6, system: cpu.system / 1e6 }, maxRssKiB: process.resourceUsage().maxRSS };
  process.stdout.write(`BASELINE_RESULT ${JSON.stringify(result)}\n`);
  process.exit(0);
})().catch((err: unknown) => {
  process.stderr.write(`baseline-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
