// The baselines in their own lean process (node + the SDK or the extractor, nothing else), like the worker: the
// bench process holds the Temporal client, the storage client and more, whose heap would slow a baseline's GC.
// Command (JSON) in BENCH_BASELINE; prints `BASELINE_RESULT {json}` with the timed section's wall time, CPU and
// the process's peak RSS. Each command first warms up the code path it measures (untimed).
import { once } from 'node:events';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { parseExtractorConfig } from '../src/extractor/config-schema';
import { createPageFetcher } from '../src/extractor/http/fetch-page';
import { runExtraction } from '../src/extractor/run-loop';

export interface S3Target {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export type BaselineCommand =
  | ({ kind: 'upload'; bucket: string; key: string; path: string; partSize: number; queueSize: number } & S3Target)
  | ({ kind: 'download'; bucket: string; prefix: string; destination: string } & S3Target)
  | { kind: 'extract'; config: unknown; warmUpConfig: unknown };

export interface BaselineResult {
  ms: number;
  bytes?: number;
  slices?: number;
  pages?: number;
  cpu: { user: number; system: number };
  /** Peak RSS of this process (KiB), warm-up included. */
  maxRssKiB: number;
}

async function run(command: BaselineCommand): Promise<Omit<BaselineResult, 'cpu' | 'maxRssKiB'> & { started: number; cpu0: NodeJS.CpuUsage }> {
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
    await new Upload({ client: s3, params: { Bucket: command.bucket, Key: warmKey, Body: Buffer.alloc(6 * 1024 * 1024, 'w') }, partSize: 5 * 1024 * 1024, queueSize: 2 }).done();
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
