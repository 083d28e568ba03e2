/**
 * The plugin package as a user gets it: `npm pack` of packages/sapi-temporal (its prepack builds lib/), installed
 * with the Temporal SDK peers into a fresh project, the README's "use the plugin in your own worker" snippets
 * compiled there by strict tsc as CommonJS and as ESM, and the compiled worker run against the test stack. The install
 * has the AWS S3 client and none of the optional peers (the Azure client, OpenTelemetry): an import on S3 runs, and
 * one on an Azure stack fails with SAPI_MISSING_DEPENDENCY naming the install command.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { startAzurite, type AzuriteHandle } from '../../../src/dev/azurite';
import { repoRoot } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of the processes this test starts: no npm, Temporal or sapi-temporal settings of the caller's. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([name]) => !/^(npm_|SAPI_|TEMPORAL_)/i.test(name));
  return { ...Object.fromEntries(kept), ...extra };
}

/** Runs a command to its end; rejects with its output when it does not exit 0. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Promise<Outcome> {
  return new Promise((ok, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    child.once('error', fail);
    child.once('close', (code) => {
      if (code === 0) ok({ code, ...output });
      else fail(new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${code}:\n${output.stdout}\n${output.stderr}`));
    });
  });
}

/** The first failure of type `type` down a failure's causes (a workflow's failure → its activity's → the activity's error). */
function causeOfType(err: unknown, type: string): unknown {
  for (let current = err; current instanceof Error; current = current.cause) if ((current as { type?: unknown }).type === type) return current;
  return undefined;
}

/** The README's snippets marked `<!-- consumer-test: <file> -->`, by file name. */
function readmeSnippets(): Map<string, string> {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  return new Map([...readme.matchAll(/^<!-- consumer-test: (\S+) -->\n```ts\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]));
}

/**
 * The ways a user compiles: CommonJS with classic resolution (ignores `exports`), Node's ESM, and what
 * getting-started.md says: `npm pkg set type=module` and the tsconfig.json `tsc --init` writes, as it is (`init`).
 */
const FLAVOURS = {
  cjs: { type: 'commonjs', module: 'commonjs', moduleResolution: 'node' },
  esm: { type: 'module', module: 'nodenext', moduleResolution: 'nodenext' },
  init: { type: 'module', module: undefined, moduleResolution: undefined },
} as const;
type Flavour = keyof typeof FLAVOURS;
/** Where tsc writes the compiled snippets: `tsc --init`'s config leaves `outDir` unset, so next to the sources. */
const outDir = (flavour: Flavour) => (flavour === 'init' ? '.' : 'dist');

/** The one thing start.ts leaves to the reader: the absolute path of their CSV on the worker's host. */
const START_SOURCE = "'/srv/drop/orders.csv'";

describe('the packed plugin package in a fresh project', () => {
  const stack = testStack();
  const workspace = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const snippets = readmeSnippets();
  let env: SapiTestEnv;
  let project: string;

  beforeAll(async () => {
    env = await startSapiTestEnv('consumer', { worker: false });
    project = mkdtempSync(join(env.dataDir, 'project-'));
    // the workspace's `npm pack` of the plugin package runs its prepack (the build into packages/sapi-temporal/lib)
    const packed = await run('npm', ['pack', '-w', 'sapi-temporal', '--json', '--pack-destination', project], repoRoot);
    const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2)}\n`);
    // what the README tells a user to install, plus the compiler; the other @temporalio peers come with npm's peer install
    const sdk = workspace.dependencies['@temporalio/worker']!;
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        `./${filename}`,
        `@temporalio/worker@${sdk}`,
        `@temporalio/client@${sdk}`,
        `typescript@${workspace.devDependencies.typescript}`,
        `@types/node@${workspace.devDependencies['@types/node']}`,
      ],
      project,
    );
  }, 600_000);
  afterAll(() => env?.stop());

  it('finds the worker, workflows and start snippets in the README', () => {
    expect([...snippets.keys()]).toEqual(['worker.ts', 'workflows.ts', 'start.ts']);
    expect(snippets.get('worker.ts')).toContain("from 'sapi-temporal'");
    expect(snippets.get('workflows.ts')).toContain("export * from 'sapi-temporal/workflows'");
  });

  it("installs one copy of the Temporal SDK, shared with the plugin, and none of the emulator's dependencies", () => {
    const modules = join(project, 'node_modules');
    for (const name of ['sapi-temporal', '@temporalio/worker', '@temporalio/workflow', '@temporalio/envconfig', '@temporalio/plugin']) {
      expect(existsSync(join(modules, name, 'package.json'))).toBe(true);
    }
    expect(existsSync(join(modules, 'sapi-temporal', 'node_modules', '@temporalio'))).toBe(false);
    for (const name of ['@duckdb', 'fastify', '@fastify']) expect(existsSync(join(modules, name))).toBe(false);
    // the S3 client is the one cloud SDK a worker needs by default; the others are optional peers, not installed
    expect(existsSync(join(modules, '@aws-sdk', 'client-s3', 'package.json'))).toBe(true);
    for (const name of ['@azure', '@google-cloud', '@opentelemetry', '@temporalio/interceptors-opentelemetry'])
      expect(existsSync(join(modules, name))).toBe(false);
    expect(readdirSync(join(modules, 'sapi-temporal')).sort()).toEqual(['README.md', 'bin', 'lib', 'package.json']);
    expect(existsSync(join(modules, 'sapi-temporal', 'lib', 'workflows', 'index.d.ts'))).toBe(true);
  });

  it("installs the `sapi-temporal` command with every command but the dev kit's (emulator, dev, demo)", async () => {
    const bin = join(project, 'node_modules', '.bin', 'sapi-temporal');
    expect((await run(bin, ['--version'], project)).stdout).toBe(`${workspace.version}\n`);
    const help = (await run(bin, ['--help'], project)).stdout;
    expect(help).not.toMatch(/dev stack/);
    const commands = [...help.matchAll(/^ {2}([a-z-]+)\b/gm)].map((m) => m[1]);
    expect(commands).toEqual(expect.arrayContaining(['import', 'export', 'extract', 'status', 'wait', 'schedule', 'worker', 'codec-server']));
    for (const devKit of ['emulator', 'dev', 'demo']) expect(commands).not.toContain(devKit);
  });

  it.each(Object.keys(FLAVOURS) as Flavour[])(
    'compiles the README snippets under strict tsc (%s)',
    async (flavour) => {
      const { type, module, moduleResolution } = FLAVOURS[flavour];
      const dir = join(project, flavour);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ type })}\n`);
      const tsc = join(project, 'node_modules', '.bin', 'tsc');
      if (flavour === 'init') {
        await run(tsc, ['--init'], dir);
      } else {
        // skipLibCheck as `tsc --init` sets it; the declarations are checked on their own below
        const compilerOptions = { strict: true, target: 'ES2022', module, moduleResolution, types: ['node'], outDir: 'dist', rootDir: '.', skipLibCheck: true };
        writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify({ compilerOptions, include: ['*.ts'] }, null, 2)}\n`);
      }
      for (const [file, code] of snippets) writeFileSync(join(dir, file), code);
      await run(tsc, ['-p', dir], project);
      for (const file of snippets.keys()) expect(existsSync(join(dir, outDir(flavour), file.replace(/\.ts$/, '.js')))).toBe(true);
      // the package's own declarations type-check too; the SDK's and zod's have errors of their own under some
      // settings (a default import of 'long' without esModuleInterop, 'ms' without types under nodenext): not ours
      const checked = await run(tsc, ['-p', dir, '--noEmit', '--skipLibCheck', 'false'], project).catch((err: Error) => ({ stdout: err.message }));
      const errors = checked.stdout.split('\n').filter((line) => line.includes(': error TS'));
      const ours = errors.filter((line) => !line.trim().startsWith('node_modules/') || line.trim().startsWith('node_modules/sapi-temporal/'));
      expect(ours).toEqual([]);
    },
    120_000,
  );

  // one flavour runs: start.ts as written creates in.c-main.orders, and a second run into that table is refused
  // (SAPI_ALREADY_EXISTS, mode create); `init` is the project getting-started.md has the reader make
  /** The README's worker (compiled as `flavour`) in its own process, on `taskQueue`, against `target`'s emulator. */
  function startConsumerWorker(flavour: Flavour, target: SapiTestEnv, taskQueue: string) {
    const connection = target.settings.connections[Object.keys(target.settings.connections)[0]!]!;
    const compiled = join(project, flavour, outDir(flavour));
    // what .env.dev gives a reader of getting-started.md: the stack's Temporal and Storage settings
    const settings = cleanEnv({
      ...stack.env,
      TEMPORAL_TASK_QUEUE: taskQueue,
      SAPI_URL: connection.url,
      SAPI_TOKEN: connection.token,
      SAPI_WORK_DIR: join(project, `work-${taskQueue}`),
    });
    const worker: ChildProcess = spawn(process.execPath, [join(compiled, 'worker.js')], {
      cwd: project,
      env: settings,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { stdout: '', stderr: '' };
    worker.stdout!.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    worker.stderr!.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    const exited = new Promise<number | null>((ok) => worker.once('exit', (code) => ok(code)));
    return { compiled, settings, output, exited, stop: () => worker.kill('SIGTERM') };
  }

  // one flavour runs: start.ts as written creates in.c-main.orders, and a second run into that table is refused
  // (SAPI_ALREADY_EXISTS, mode create); `init` is the project getting-started.md has the reader make
  it.each(['init'] as Flavour[])(
    'runs the README worker and start snippets (%s): the import lands its rows through S3, and SIGTERM stops the worker cleanly',
    async (flavour) => {
      // this env's emulator keeps its files on S3 (the stack's MinIO): the worker uploads with the S3 client it installed
      const worker = startConsumerWorker(flavour, env, uniqueTaskQueue(`consumer-${flavour}`));
      const { compiled, settings, output, exited } = worker;
      try {
        const source = join(project, `orders-${flavour}.csv`);
        writeFileSync(source, 'id,name\n1,alpha\n2,"beta, with comma"\n3,gamma\n');
        // start.js as the README writes it, its CSV path put where the snippet's comment says, with the worker's settings
        const start = join(compiled, 'start.js');
        const written = readFileSync(start, 'utf8');
        expect(written.split(START_SOURCE)).toHaveLength(2);
        writeFileSync(start, written.replace(START_SOURCE, JSON.stringify(source)));
        const started = await Promise.race([
          run(process.execPath, [start], project, settings),
          exited.then((code) => Promise.reject(new Error(`the consumer's worker exited with ${code}: ${output.stderr}`))),
        ]);
        expect(started.stdout).toBe('3 rows into in.c-main.orders\n');
        expect((await env.emulator.readTable('in.c-main.orders')).rows).toEqual([
          ['1', 'alpha'],
          ['2', 'beta, with comma'],
          ['3', 'gamma'],
        ]);
      } finally {
        worker.stop();
      }
      expect(await exited).toBe(0);
      expect(output.stderr).not.toMatch(/Error|ERR_/);
    },
    180_000,
  );

  it('fails an import on an Azure stack with SAPI_MISSING_DEPENDENCY naming the install command, and the worker runs on', async () => {
    let azurite: AzuriteHandle | undefined;
    let azure: SapiTestEnv | undefined;
    try {
      azurite = await startAzurite({ dataDir: join(env.dataDir, 'azurite') });
      azure = await startSapiTestEnv('consumer-azure', {
        worker: false,
        emulator: {
          backend: 'azure',
          abs: { blobEndpoint: azurite.blobEndpoint, accountName: azurite.accountName, accountKey: azurite.accountKey, container: 'sapi-files' },
        },
      });
      const taskQueue = uniqueTaskQueue('consumer-azure');
      const worker = startConsumerWorker('init', azure, taskQueue);
      try {
        const source = join(project, 'orders-azure.csv');
        writeFileSync(source, 'id,name\n1,alpha\n');
        const failure = await Promise.race([
          azure.client.workflow
            .execute('importTableWorkflow', {
              taskQueue,
              workflowId: `consumer-azure-${Date.now()}`,
              args: [{ source, bucketId: 'in.c-main', createBucket: true, table: 'azure_orders' }],
            })
            .then(
              () => undefined,
              (err: unknown) => err,
            ),
          worker.exited.then((code) => Promise.reject(new Error(`the consumer's worker exited with ${code}: ${worker.output.stderr}`))),
        ]);
        expect(failure).toBeInstanceOf(WorkflowFailedError);
        const missing = causeOfType(failure, 'SAPI_MISSING_DEPENDENCY');
        expect(missing).toMatchObject({ nonRetryable: true, message: expect.stringContaining('Azure Blob Storage') });
        expect((missing as Error).message).toContain('npm install @azure/storage-blob@12.29.1');
        // the file never reached Azure, so no table was loaded
        await expect(azure.emulator.readTable('in.c-main.azure_orders')).rejects.toThrow();
      } finally {
        worker.stop();
      }
      expect(await worker.exited).toBe(0);
    } finally {
      await azure?.stop();
      await azurite?.stop();
    }
  }, 180_000);
});
