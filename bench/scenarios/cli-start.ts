/**
 * CLI start: wall time of `sapi-temporal --help` and `sapi-temporal --version` (the compiled CLI, as the installed
 * package runs it), beside `node -e ''` (a bare Node start) on the same machine, runs interleaved so that load
 * changes hit all three alike. Median of {@link CLI_START_RUNS} runs each. With `--compare-tree`, that tree's CLI too.
 * Target (issue 37): `--help` and `--version` each ≤ {@link CLI_START_TARGET_MS} ms.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { transpileTree } from '../lib/compile';
import type { Scenario } from '../lib/context';
import { figure, type Figure } from '../lib/report';
import { median } from '../lib/stats';

/** Target of issue 37: `--help` and `--version` within this wall time (ms). */
export const CLI_START_TARGET_MS = 500;
/** Runs of each command (medians are reported). */
export const CLI_START_RUNS = 15;

/** Wall time of one process from spawn to exit (ms); rejects when it does not exit 0. */
function timeProcess(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((ok, fail) => {
    const began = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', fail);
    child.once('close', (code) => {
      const ms = Number(process.hrtime.bigint() - began) / 1e6;
      if (code === 0) ok(ms);
      else fail(new Error(`node ${args.join(' ')} exited with ${code}: ${stderr}`));
    });
  });
}

/** `node -e` running the CLI's `main` of a compiled tree with `args` (argv shaped as the `sapi-temporal` bin passes it). */
function cliArgs(compiledTree: string, args: readonly string[]): string[] {
  const entry = join(compiledTree, 'src', 'cli', 'index.js');
  return ['-e', `require(${JSON.stringify(entry)}).main([process.argv[0], 'sapi-temporal', ...process.argv.slice(1)])`, '--', ...args];
}

export const cliStartScenario: Scenario = async (ctx) => {
  const { stack } = ctx;
  const repoRoot = join(__dirname, '..', '..');
  // the sources as plain JS (the package's lib/ is the same transpiled code): no TypeScript hook in the timed runs
  const trees: Array<{ label: string; compiled: string; root: string }> = [
    { label: 'ours', compiled: join(stack.dataDir, 'cli-start', 'ours'), root: repoRoot },
  ];
  if (stack.compare) trees.push({ label: 'compare', compiled: join(stack.dataDir, 'cli-start', 'compare'), root: stack.compare.tree });
  for (const tree of trees) transpileTree(tree.root, ['src'], tree.compiled);
  const commands = trees.flatMap((tree) =>
    (['--help', '--version'] as const).map((flag) => ({
      key: `${tree.label} ${flag}`,
      args: cliArgs(tree.compiled, [flag]),
      // packages resolve from that tree's node_modules, as they would from the package's
      env: { ...process.env, NODE_PATH: join(tree.root, 'node_modules') },
    })),
  );
  const bare = { key: "node -e ''", args: ['-e', ''], env: process.env };
  const times = new Map<string, number[]>([bare, ...commands].map((c) => [c.key, []]));
  // one warm-up of each (the file cache), then interleaved runs
  for (const command of [bare, ...commands]) await timeProcess(command.args, command.env);
  for (let run = 0; run < CLI_START_RUNS; run++) {
    ctx.signal.throwIfAborted();
    for (const command of [bare, ...commands]) times.get(command.key)!.push(await timeProcess(command.args, command.env));
  }
  const medians = Object.fromEntries([...times].map(([key, values]) => [key, median(values)!]));
  ctx.log(
    `cli-start medians (ms): ${Object.entries(medians)
      .map(([key, ms]) => `${key} ${ms.toFixed(0)}`)
      .join(', ')}`,
  );
  // on a loaded machine a bare Node start alone can pass the target: the time over it says what the CLI adds
  const load = loadavg()[0]!.toFixed(1);
  const figures: Figure[] = commands.flatMap((command) => {
    const [label, flag] = command.key.split(' ') as [string, string];
    const tree = label === 'ours' ? '' : `${label} tree: `;
    return [
      figure({
        scenario: 'cli-start',
        metric: `${tree}sapi-temporal ${flag} vs node -e ''`,
        unit: 'ms',
        ours: medians[command.key],
        baseline: medians[bare.key],
        target: label === 'ours' ? { on: 'ours', op: '<=', value: CLI_START_TARGET_MS } : undefined,
        note: `median of ${CLI_START_RUNS}, load ${load}`,
      }),
      figure({
        scenario: 'cli-start',
        metric: `${tree}sapi-temporal ${flag}: time over node -e ''`,
        unit: 'ms',
        ours: medians[command.key]! - medians[bare.key]!,
        note: 'what the CLI adds to a bare Node start',
      }),
    ];
  });
  return { figures, details: { runs: Object.fromEntries(times), medians } };
};
