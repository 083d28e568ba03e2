/**
 * The CLI's import (whole file, and parts uploaded as one sliced file) and sliced export on every object-storage
 * backend the emulator serves: a dev stack per backend (MinIO, Azurite, fake-gcs-server), `bin/sapi-temporal` as a
 * user runs it with the stack's variables, and the rows compared with the sources. `make test` runs it on MinIO (the
 * only test of the CLI's --slice), `make test-backends` on all three.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { emulatorService, workerService } from '../../../src/dev/services';
import { startDevStack, type DevBackend, type DevStack } from '../../../src/dev/stack';
import { repoRoot } from '../../harness/processes';
import { testStack } from '../../harness/stack-state';
import { sweptBackends } from '../../harness/backend-sweep';

const ROWS = Array.from({ length: 400 }, (_, i) => `${i + 1},"name ${i + 1}, with a comma"`);

describe.each<DevBackend>(sweptBackends('aws'))('the CLI on the %s backend', (backend) => {
  let stack: DevStack;
  let workDir: string;
  beforeAll(async () => {
    workDir = mkdtempSync(join(testStack().dataDir, `cli-${backend}-`));
    // small export slices: every export is a sliced file
    stack = await startDevStack({
      dataDir: join(workDir, 'stack'),
      localRoots: [workDir],
      headless: true,
      backend,
      services: [emulatorService({ sliceSizeBytes: 4000 }), workerService()],
    });
    writeFileSync(join(workDir, 'whole.csv'), ['id,name', ...ROWS].join('\n') + '\n');
    writeFileSync(join(workDir, 'part-1.csv'), ROWS.slice(0, 150).join('\n') + '\n');
    writeFileSync(join(workDir, 'part-2.csv'), ROWS.slice(150).join('\n') + '\n');
  });
  afterAll(() => stack?.stop());

  function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args], {
      cwd: workDir,
      env: { ...process.env, ...stack.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    return new Promise((ok, fail) => {
      child.once('error', fail);
      child.once('close', (code) => ok({ code, ...output }));
    });
  }

  async function json<T>(args: string[]): Promise<T> {
    const outcome = await cli([...args, '--json']);
    if (outcome.code !== 0) throw new Error(`sapi-temporal ${args.join(' ')} exited ${outcome.code}:\n${outcome.stderr}`);
    return JSON.parse(outcome.stdout) as T;
  }

  const rowsOf = (path: string) => readFileSync(join(workDir, path), 'utf8').trimEnd().split('\n');

  it('imports a file and parts as one sliced file, and exports both as sliced files with the same rows', async () => {
    const whole = await json<{ importedRowsCount: number }>(['import', 'whole.csv', '--bucket', 'in.c-cli', '--create-bucket', '--table', 'whole']);
    expect(whole.importedRowsCount).toBe(ROWS.length);
    const sliced = await json<{ importedRowsCount: number }>([
      'import',
      'part-1.csv',
      '--slice',
      'part-2.csv',
      '--columns',
      'id,name',
      '--bucket',
      'in.c-cli',
      '--table',
      'sliced',
    ]);
    expect(sliced.importedRowsCount).toBe(ROWS.length);

    for (const table of ['whole', 'sliced']) {
      const exported = await json<{ sliced: boolean; slices: number; path: string }>(['export', `in.c-cli.${table}`, `${table}-out.csv`]);
      expect(exported).toMatchObject({ sliced: true });
      expect(exported.slices).toBeGreaterThan(2);
      const [header, ...rows] = rowsOf(`${table}-out.csv`);
      expect(header).toBe('"id","name"');
      // the export quotes every value; the rows are the sources' in the table's order
      expect(rows.map((row) => row.replace(/^"(\d+)",/, '$1,'))).toEqual(ROWS);
    }
  });

  it('refuses --slice without column names, starting nothing', async () => {
    const outcome = await cli(['import', 'part-1.csv', '--slice', 'part-2.csv', '--bucket', 'in.c-cli', '--table', 'nameless']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('--slice needs --columns');
  });
});
