// The idle `sapi-temporal worker` as an operator starts it: it bundles its own workflows (the bench's `idle` scenario
// runs a worker given a prebuilt bundle, so it cannot show what bundling at start leaves in the process). For each
// tree (this one, and `--compare-tree DIR`: e.g. a worktree of `main`), alternating, `--runs N` times (default 3): the
// CLI worker from the sources transpiled as the bench runs them (bench/lib/compile.ts), with the command's node flags
// and malloc settings, on the bench's stack; the time from spawn to its `worker polling` line, then RSS
// (/proc/<pid>/status) and V8 heap (after a full GC, bench/lib/memory-report.ts) 3 s after start and 3 s after 3
// small imports, and whether swc (the bundler's native TypeScript compiler) is mapped. One JSON line per worker run;
// `/proc/loadavg` with each.
//   node -r ./scripts/ts-register.js bench/cli-worker-idle.ts [--compare-tree DIR] [--runs N]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { transpileTree } from './lib/compile';
import { startBenchStack } from './lib/stack';

const argValue = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const runs = Number(argValue('--runs') ?? 3);
const compareTree = argValue('--compare-tree');
const trees: Record<string, string> = { this: resolve(__dirname, '..'), ...(compareTree ? { compare: resolve(compareTree) } : {}) };
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sapi-cli-worker-idle-'));
  const stack = await startBenchStack({ dataDir, log: (message) => process.stderr.write(`${message}\n`) });
  try {
    const compiled: Record<string, string> = {};
    for (const [name, tree] of Object.entries(trees)) {
      const out = join(dataDir, `cli-${name}`);
      transpileTree(tree, ['src', 'bench'], out);
      // webpack resolves the workflows' packages from their folder (NODE_PATH is not enough for it)
      symlinkSync(join(tree, 'node_modules'), join(out, 'node_modules'));
      writeFileSync(
        join(out, 'run-cli.js'),
        "require('./bench/lib/memory-report').serveMemoryReports(); require('./src/cli/index').main([process.argv[0], 'sapi-temporal', 'worker']);\n",
      );
      compiled[name] = out;
    }
    const csv = join(dataDir, 'small.csv');
    writeFileSync(csv, `id,name\n${Array.from({ length: 2000 }, (_, i) => `${i},n${i}`).join('\n')}\n`);
    const env: Record<string, string> = { ...stack.env, AWS_ENDPOINT_URL_S3: stack.s3Endpoint, SAPI_LOCAL_ROOTS: dataDir };
    for (let run = 0; run < runs; run++) {
      const names = Object.keys(trees);
      for (const name of run % 2 ? names.reverse() : names) {
        const taskQueue = `cli-idle-${name}-${run}-${Date.now().toString(36)}`;
        const report = join(dataDir, `${taskQueue}.json`);
        const started = Date.now();
        const child = spawn(process.execPath, ['--expose-gc', '--max-semi-space-size=8', join(compiled[name]!, 'run-cli.js')], {
          env: {
            ...process.env,
            ...env,
            MALLOC_ARENA_MAX: '2',
            MALLOC_MMAP_THRESHOLD_: '131072',
            NODE_PATH: join(trees[name]!, 'node_modules'),
            TEMPORAL_TASK_QUEUE: taskQueue,
            BENCH_MEMORY_REPORT: report,
            SAPI_WORK_DIR: join(dataDir, `work-${taskQueue}`),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        try {
          while (!/worker polling/.test(output)) {
            if (child.exitCode !== null) throw new Error(`the ${name} worker exited: ${output}`);
            await sleep(20);
          }
          const startMs = Date.now() - started;
          const measure = async () => {
            await sleep(3000);
            writeFileSync(`${report}.request`, '');
            while (existsSync(`${report}.request`) || !existsSync(report)) await sleep(50);
            await sleep(100);
            const memory = (JSON.parse(readFileSync(report, 'utf8')) as { memoryUsage: NodeJS.MemoryUsage }).memoryUsage;
            rmSync(report);
            const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]);
            const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
            return {
              rssMb: mb(rssKb * 1024),
              heapUsedMb: mb(memory.heapUsed),
              heapTotalMb: mb(memory.heapTotal),
              swcMapped: /swc/.test(readFileSync(`/proc/${child.pid}/maps`, 'utf8')),
            };
          };
          const atStart = await measure();
          for (let i = 0; i < 3; i++) {
            await stack.client.workflow.execute('importTableWorkflow', {
              taskQueue,
              workflowId: `${taskQueue}-import-${i}`,
              args: [{ source: csv, bucketId: 'in.c-cli-idle', createBucket: true, table: `${taskQueue.replace(/-/g, '_')}_${i}` }],
            });
          }
          const afterImports = await measure();
          const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
          process.stdout.write(`${JSON.stringify({ run, tree: trees[name], startMs, atStart, afterImports, load })}\n`);
        } finally {
          child.kill('SIGTERM');
          if (child.exitCode === null) await new Promise((ok) => child.once('exit', ok));
        }
      }
    }
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`cli-worker-idle: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
