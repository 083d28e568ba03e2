// The in-place download's own threads alone, next to `mc` (issue 41 target 2): the fetching and hashing threads of
// `src/object-storage/in-place-thread.ts` (`inPlaceRunner`: plain GETs of presigned URLs, every slice written at its
// place, the sha256 of the whole file) of this tree and of `--compare-tree DIR`, each in a lean node process of its
// own (the sources transpiled as the bench runs them, the worker command's node flags and malloc settings, nothing
// else loaded: no Temporal worker, no export job), and `mc cp` of the same slices (bench/baseline-child.ts), on one
// MinIO, in rotating order, `--rounds R` times after a warm-up of each (whose file is checked against its hash).
// What the `download` scenario measures in the worker less what the worker adds around it (the activity's Storage
// calls, the main thread's GC and heartbeats, the export before it): where the download path's CPU goes, user and
// system apart, with figures that a shared machine disturbs less. One JSON line per run with `/proc/loadavg`, then
// the medians per side (MB/s, CPU s/GB, user + sys s/GB) and their ratios against mc's and the compare tree's.
//   node -r ./scripts/ts-register.js bench/download-threads.ts [--compare-tree DIR] [--size-mib 256] [--slices 22]
//        [--rounds 5] [--concurrency 4] [--load-cores 0]
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startMinio } from '../src/dev/minio';
import { presignGetObject } from '../src/object-storage/s3-client';
import type { BaselineCommand, BaselineResult } from './baseline-child';
import { transpileTree } from './lib/compile';
import { startCpuLoad } from './lib/load';
import { locateMc } from './lib/mc';
import { runNode } from './lib/stack';
import { median } from './lib/stats';

const argValue = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const sizeMiB = Number(argValue('--size-mib') ?? 256);
const sliceCount = Number(argValue('--slices') ?? 22);
const rounds = Number(argValue('--rounds') ?? 5);
const concurrency = Number(argValue('--concurrency') ?? process.env.SAPI_TRANSFER_CONCURRENCY ?? 4);
const loadCores = Number(argValue('--load-cores') ?? 0);
const compareTree = argValue('--compare-tree');
const trees: Record<string, string> = { this: resolve(__dirname, '..'), ...(compareTree ? { compare: resolve(compareTree) } : {}) };
const BUCKET = 'bench';
const PREFIX = 'slices/';

/** One timed download: wall ms, bytes, CPU seconds (user, system) of the process that ran it (mc's own for mc). */
interface Run {
  side: string;
  ms: number;
  bytes: number;
  user: number;
  system: number;
}

/**
 * The driver of a lean process: for each line of stdin (`{urls, partial, concurrency, check}`) one in-place download
 * through `inPlaceRunner` (its threads stay for the next line, as in a worker in service), and one line of stdout
 * with its wall time, bytes and this process's CPU time meanwhile.
 */
const DRIVER = `
const { inPlaceRunner } = require('./src/object-storage/in-place-thread');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
require('node:readline').createInterface({ input: process.stdin }).on('line', async (line) => {
  const { urls, partial, concurrency, check } = JSON.parse(line);
  fs.rmSync(partial, { force: true });
  fs.writeFileSync(partial, 'h\\n');
  const job = { partial, start: 2, slices: urls.map((url) => ({ url, headers: {} })), sizes: urls.map(() => null), finished: [], concurrency };
  const runner = inPlaceRunner();
  const cpu0 = process.resourceUsage();
  const t0 = performance.now();
  const sha256 = await runner.run(job, Buffer.from('h\\n'), { size() {}, slice() {} });
  const ms = performance.now() - t0;
  const cpu1 = process.resourceUsage();
  await runner.close();
  const bytes = fs.statSync(partial).size;
  const ok = !check || createHash('sha256').update(fs.readFileSync(partial)).digest('hex') === sha256;
  fs.rmSync(partial, { force: true });
  const user = (cpu1.userCPUTime - cpu0.userCPUTime) / 1e6;
  const system = (cpu1.systemCPUTime - cpu0.systemCPUTime) / 1e6;
  process.stdout.write(JSON.stringify({ ms, bytes, user, system, ok }) + '\\n');
});
console.log('READY');
`;

/** A lean process running {@link DRIVER} on the transpiled sources of `tree`; `download()` runs one job. */
async function startDriver(
  name: string,
  tree: string,
  dataDir: string,
  urls: readonly string[],
): Promise<{ download(check: boolean): Promise<Run>; stop(): void }> {
  const out = join(dataDir, `tree-${name}`);
  transpileTree(tree, ['src'], out);
  symlinkSync(join(tree, 'node_modules'), join(out, 'node_modules'));
  writeFileSync(join(out, 'driver.js'), DRIVER);
  const child: ChildProcess = spawn(process.execPath, ['--max-semi-space-size=8', join(out, 'driver.js')], {
    cwd: out,
    env: {
      ...process.env,
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error(`the ${name} tree's driver exited (code ${child.exitCode})`);
    return line.value as string;
  };
  if ((await next()) !== 'READY') throw new Error(`the ${name} tree's driver did not start`);
  return {
    async download(check) {
      child.stdin!.write(`${JSON.stringify({ urls, partial: join(dataDir, `${name}.partial`), concurrency, check })}\n`);
      const r = JSON.parse(await next()) as Omit<Run, 'side'> & { ok: boolean };
      if (!r.ok) throw new Error(`the ${name} tree's sha256 is not the file's`);
      return { side: name, ms: r.ms, bytes: r.bytes, user: r.user, system: r.system };
    },
    stop: () => child.kill(),
  };
}

async function main(): Promise<void> {
  const mc = locateMc();
  if ('missing' in mc) throw new Error(`no mc: ${mc.missing}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'sapi-download-threads-'));
  const minio = await startMinio({ dataDir: join(dataDir, 'minio') });
  const credentials = { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey };
  const s3 = new S3Client({ endpoint: minio.endpoint, region: minio.region, forcePathStyle: true, credentials });
  const drivers: Array<Awaited<ReturnType<typeof startDriver>>> = [];
  try {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const sliceBytes = Math.ceil((sizeMiB * 1024 * 1024) / sliceCount);
    const keys = Array.from({ length: sliceCount }, (_, i) => `${PREFIX}part${String(i).padStart(4, '0')}.csv`);
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: randomBytes(sliceBytes) }));
    const manifest = { entries: keys.map((key) => ({ url: `s3://${BUCKET}/${key}` })) };
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}manifest`, Body: JSON.stringify(manifest) }));
    const urls = await Promise.all(keys.map((key) => presignGetObject(s3, BUCKET, key, 3600)));
    for (const [name, tree] of Object.entries(trees)) drivers.push(await startDriver(name, tree, dataDir, urls));
    const mcCommand: BaselineCommand = {
      kind: 'mc-download',
      mc: mc.path,
      endpoint: minio.endpoint,
      region: minio.region,
      credentials,
      bucket: BUCKET,
      prefix: PREFIX,
      destination: join(dataDir, 'mc-out'),
    };
    const runMc = async (): Promise<Run> => {
      const stdout = await runNode([join(__dirname, 'baseline-child.ts')], {
        hook: true,
        timeoutMs: 600_000,
        env: { BENCH_BASELINE: JSON.stringify(mcCommand) },
      });
      const r = JSON.parse(/^BASELINE_RESULT (.+)$/m.exec(stdout)![1]!) as BaselineResult;
      return { side: 'mc', ms: r.ms, bytes: r.bytes!, user: r.mcCpu!.user, system: r.mcCpu!.system };
    };
    const sides: Array<() => Promise<Run>> = [runMc, ...drivers.map((d) => () => d.download(false))];
    // warm-up, untimed: mc's binary and page cache, each tree's threads (and a check of its hash)
    await runMc();
    for (const d of drivers) await d.download(true);
    const load = startCpuLoad(loadCores);
    const runs: Run[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        for (let i = 0; i < sides.length; i++) {
          const run = await sides[(i + round) % sides.length]!();
          runs.push(run);
          console.log(JSON.stringify({ ...run, round, loadCores, loadavg: readFileSync('/proc/loadavg', 'utf8').trim() }));
        }
      }
    } finally {
      await load.stop();
    }
    summarize(runs);
  } finally {
    for (const d of drivers) d.stop();
    s3.destroy();
    await minio.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Medians per side, and their ratios against mc and against the compare tree. */
function summarize(runs: readonly Run[]): void {
  const gb = (r: Run) => r.bytes / 1e9;
  const per = (side: string) => {
    const mine = runs.filter((r) => r.side === side);
    return {
      mbps: median(mine.map((r) => r.bytes / 1e3 / r.ms))!,
      cpuPerGb: median(mine.map((r) => (r.user + r.system) / gb(r)))!,
      userPerGb: median(mine.map((r) => r.user / gb(r)))!,
      sysPerGb: median(mine.map((r) => r.system / gb(r)))!,
    };
  };
  const mc = per('mc');
  const label = loadCores ? ` [${loadCores} busy core${loadCores === 1 ? '' : 's'}]` : '';
  for (const side of ['mc', ...Object.keys(trees)]) {
    const s = per(side);
    const vs = side === 'mc' ? '' : `; vs mc: MB/s ${(s.mbps / mc.mbps).toFixed(2)}×, CPU ${(s.cpuPerGb / mc.cpuPerGb).toFixed(2)}×`;
    console.log(
      `${side}${label}: ${s.mbps.toFixed(0)} MB/s, CPU ${s.cpuPerGb.toFixed(2)} s/GB (user ${s.userPerGb.toFixed(2)} + sys ${s.sysPerGb.toFixed(2)})${vs}`,
    );
  }
  if (trees.compare) {
    const [a, b] = [per('this'), per('compare')];
    console.log(`this tree vs compare tree${label}: MB/s ${(a.mbps / b.mbps).toFixed(2)}×, CPU ${(a.cpuPerGb / b.cpuPerGb).toFixed(2)}×`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
