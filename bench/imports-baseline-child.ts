// The "bare" baseline of the concurrency scenario, in its own lean process: the Storage calls of a small import
// (prepare with temporary credentials, one PutObject, tables-async, polls) in a plain async loop, all imports at
// once, no Temporal. Command (JSON) in BENCH_IMPORTS_BASELINE; prints `IMPORTS_BASELINE_RESULT {json}` with the
// timed section's wall time, CPU, latencies and the process's peak RSS. Three imports first warm the path up.
import { readFileSync } from 'node:fs';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createStorageClient, type StorageClient } from '../src/storage-api';

export interface ImportsBaselineCommand {
  sapiUrl: string;
  token: string;
  s3Endpoint: string;
  region: string;
  csvPath: string;
  bucketId: string;
  /** Tables `<prefix>_<i>`. */
  tablePrefix: string;
  count: number;
}

export interface ImportsBaselineResult {
  ms: number;
  imports: number;
  latencyMs: number[];
  cpu: { user: number; system: number };
  /** Peak RSS of this process (KiB), warm-up included. */
  maxRssKiB: number;
}

/** The polls of the bare loop: as the plugin's short path polls inside its activity (50 ms, doubling, ≤ 500 ms). */
async function waitForJob(storage: StorageClient, jobId: number): Promise<void> {
  let pause = 50;
  for (;;) {
    const job = await storage.getJob({ jobId });
    if (job.status === 'success') return;
    if (job.status === 'error') throw new Error(`job ${jobId} failed: ${JSON.stringify(job.error)}`);
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 2, 500);
  }
}

async function importOnce(storage: StorageClient, command: ImportsBaselineCommand, body: Buffer, table: string): Promise<void> {
  const prepared = await storage.prepareFile({ name: `${table}.csv`, federationToken: true });
  const params = prepared.uploadParams!;
  const s3 = new S3Client({
    endpoint: command.s3Endpoint,
    region: command.region,
    forcePathStyle: true,
    credentials: {
      accessKeyId: params.credentials.AccessKeyId,
      secretAccessKey: params.credentials.SecretAccessKey,
      sessionToken: params.credentials.SessionToken,
    },
  });
  try {
    await s3.send(new PutObjectCommand({ Bucket: params.bucket, Key: params.key, Body: body }));
  } finally {
    s3.destroy();
  }
  const job = await storage.createTableAsync({ bucketId: command.bucketId, name: table, dataFileId: Number(prepared.id) });
  await waitForJob(storage, Number(job.id));
}

void (async () => {
  const raw = process.env.BENCH_IMPORTS_BASELINE;
  if (!raw) throw new Error('BENCH_IMPORTS_BASELINE is not set: pass the command as JSON');
  const command = JSON.parse(raw) as ImportsBaselineCommand;
  const storage = createStorageClient({ url: command.sapiUrl, token: command.token });
  const body = readFileSync(command.csvPath);
  for (let i = 0; i < 3; i++) await importOnce(storage, command, body, `${command.tablePrefix}_warm${i}`);
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const latencyMs: number[] = [];
  await Promise.all(
    Array.from({ length: command.count }, async (_, i) => {
      const t0 = performance.now();
      await importOnce(storage, command, body, `${command.tablePrefix}_${i}`);
      latencyMs.push(performance.now() - t0);
    }),
  );
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  await storage.close();
  const result: ImportsBaselineResult = {
    ms,
    imports: command.count,
    latencyMs,
    cpu: { user: cpu.user / 1e6, system: cpu.system / 1e6 },
    maxRssKiB: process.resourceUsage().maxRSS,
  };
  process.stdout.write(`IMPORTS_BASELINE_RESULT ${JSON.stringify(result)}\n`);
  process.exit(0);
})().catch((err: unknown) => {
  process.stderr.write(`imports-baseline-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
