import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../harness/processes';

/** The commands `make <target>` would run from scratch (`-n -B`: every step printed, none run). */
function plannedCommands(target: string, variables: string[] = []): string[] {
  return execFileSync('make', ['-n', '-B', target, ...variables], { cwd: repoRoot, encoding: 'utf8' })
    .trim()
    .split('\n');
}

/** The install and build commands among them, trimmed. */
function installs(target: string, variables: string[] = []): string[] {
  return plannedCommands(target, variables)
    .filter((command) => /\bnpm\b|install-tools|tsc/.test(command))
    .map((command) => command.trim());
}

describe('the Makefile', () => {
  it('makes the demo install only what it runs: npm packages from the lock as is, the Temporal CLI and Azurite, no MinIO', () => {
    expect(installs('demo')).toEqual([
      'npm ci --no-audit --no-fund',
      'node_modules/.bin/tsc -p tsconfig.build.json --noCheck --declaration false',
      'bash scripts/install-tools.sh temporal',
      'bash scripts/install-tools.sh azurite',
    ]);
    expect(plannedCommands('demo')).toContain('bin/sapi-temporal demo --backend azure');
  });

  it("builds MinIO for the demo only on BACKEND=aws, fake-gcs-server only on gcp: each backend's own store, nothing else", () => {
    expect(installs('demo', ['BACKEND=aws']).filter((command) => command.includes('install-tools'))).toEqual([
      'bash scripts/install-tools.sh temporal',
      'bash scripts/install-tools.sh minio',
    ]);
    expect(plannedCommands('demo', ['BACKEND=aws'])).toContain('bin/sapi-temporal demo --backend aws');
    expect(installs('demo', ['BACKEND=gcp']).filter((command) => command.includes('install-tools'))).toEqual([
      'bash scripts/install-tools.sh temporal',
      'bash scripts/install-tools.sh fake-gcs',
    ]);
  });

  it('keeps MinIO in `make dev` (for s3:// sources), with the backend store added', () => {
    const tools = (variables: string[]) => installs('dev', variables).filter((command) => command.includes('install-tools'));
    expect(tools([])).toEqual(['bash scripts/install-tools.sh temporal', 'bash scripts/install-tools.sh minio']);
    expect(tools(['BACKEND=azure'])).toEqual([
      'bash scripts/install-tools.sh temporal',
      'bash scripts/install-tools.sh minio',
      'bash scripts/install-tools.sh azurite',
    ]);
    expect(plannedCommands('dev')).toContain('bin/sapi-temporal dev --env-file .env.dev --backend aws');
  });

  it('refuses a BACKEND it does not know, naming the choices', () => {
    const run = spawnSync('make', ['-n', 'demo', 'BACKEND=s3'], { cwd: repoRoot, encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('BACKEND is "s3": it must be aws, azure or gcp');
  });

  it('makes the tests install every tool', () => {
    expect(plannedCommands('test')).toContain('bash scripts/install-tools.sh');
  });
});

/**
 * `make demo` on a copy of the Makefile whose commands are stand-ins (npm, tsc, install-tools.sh, the CLI): each
 * writes when it starts and ends to one log and takes 1 s, so the order and overlap of the real steps show.
 */
describe('make demo (with stand-in commands)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'makefile-demo-'));
    copyFileSync(join(repoRoot, 'Makefile'), join(dir, 'Makefile'));
    // tsc's stand-in writes no lib/ of its own; one source file, so that the compile has something to be newer than
    mkdirSync(join(dir, 'lib'));
    for (const file of ['package.json', 'package-lock.json', 'packages/sapi-temporal/package.json', 'tsconfig.json', 'tsconfig.build.json', 'src/index.ts']) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), '{}');
    }
    const standIn = (path: string, name: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      // `$FAIL` names the one stand-in that fails (after its second, like a broken download)
      writeFileSync(
        join(dir, path),
        `#!/usr/bin/env bash\nname="${name}"\necho "start $name $(date +%s.%N)" >> "${join(dir, 'steps.log')}"\nsleep 1\n` +
          `[ "\${FAIL:-}" = "$name" ] && { echo "end $name failed" >> "${join(dir, 'steps.log')}"; exit 1; }\n` +
          `echo "end $name $(date +%s.%N)" >> "${join(dir, 'steps.log')}"\n`,
      );
      chmodSync(join(dir, path), 0o755);
    };
    standIn('fake-npm', 'npm');
    standIn('node_modules/.bin/tsc', 'tsc');
    standIn('bin/sapi-temporal', 'demo');
    // install-tools.sh stands in for each tool under the tool's name
    mkdirSync(join(dir, 'scripts'));
    writeFileSync(
      join(dir, 'scripts', 'install-tools.sh'),
      `log="${join(dir, 'steps.log')}"\necho "start $1 $(date +%s.%N)" >> "$log"\nsleep 1\n` +
        `[ "\${FAIL:-}" = "$1" ] && { echo "end $1 failed" >> "$log"; exit 1; }\necho "end $1 $(date +%s.%N)" >> "$log"\n`,
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const make = (env: NodeJS.ProcessEnv = {}) =>
    spawnSync('make', ['demo', `NPM=${join(dir, 'fake-npm')}`], { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env, MAKEFLAGS: '' } });
  const steps = () =>
    readFileSync(join(dir, 'steps.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const [event, name, at] = line.split(' ');
        return { event: event!, name: name!, at: Number(at) };
      });
  const at = (event: string, name: string) => steps().find((step) => step.event === event && step.name === name)?.at ?? NaN;

  it('runs npm ci and the tool installs side by side, compiles once npm is done, and starts the demo after all of them', () => {
    const run = make();
    expect(run.status).toBe(0);
    expect(new Set(steps().map((step) => step.name))).toEqual(new Set(['npm', 'tsc', 'temporal', 'azurite', 'demo']));
    // side by side: each install starts before any of the others ends
    const firstEnd = Math.min(at('end', 'npm'), at('end', 'temporal'), at('end', 'azurite'));
    for (const name of ['npm', 'temporal', 'azurite']) expect(at('start', name)).toBeLessThan(firstEnd);
    expect(at('start', 'tsc')).toBeGreaterThanOrEqual(at('end', 'npm'));
    const lastInstall = Math.max(at('end', 'tsc'), at('end', 'temporal'), at('end', 'azurite'));
    expect(at('start', 'demo')).toBeGreaterThanOrEqual(lastInstall);
  });

  it('installs and compiles nothing again on a second run: only the tool checks and the demo run', () => {
    expect(make().status).toBe(0);
    writeFileSync(join(dir, 'steps.log'), '');
    expect(make().status).toBe(0);
    expect(
      steps()
        .filter((step) => step.event === 'start')
        .map((step) => step.name)
        .sort(),
    ).toEqual(['azurite', 'demo', 'temporal']);
  });

  it('fails without running the demo when one install fails, after the others have finished', () => {
    const run = make({ FAIL: 'azurite' });
    expect(run.status).not.toBe(0);
    const names = steps().map((step) => `${step.event} ${step.name}`);
    expect(names).toContain('end npm');
    expect(names).toContain('end temporal');
    expect(names).not.toContain('start demo');
  });
});
