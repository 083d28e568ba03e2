/**
 * Local files against someone who can write in the allowed root (issue 35), through real imports and exports:
 * - names planted next to an export's destination: `root/x.csv.partial` (and `root/x.csv.parts`) as symbolic links
 *   to a file (a folder) outside the root. The download's temporary files are created exclusively and never through
 *   a link: the outside file keeps its bytes, nothing appears in the outside folder, and `root/x.csv` is a regular
 *   file with the table's rows (not a link);
 * - a folder flipped between a folder and a link to outside while imports read from it and exports write to it:
 *   each run loads the inside rows, writes inside, or fails; none reads or writes outside.
 * (The same race at the level of the functions, 50 + 50 times: test/unit/security/swap-races.test.ts.)
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportTableInput, ImportTableInput } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

/** Swaps each folder given between the real folder and `<folder>.link` (a link to outside), until killed. */
const FLIPPER = `
const fs = require('node:fs');
const dirs = JSON.parse(process.argv[1]);
const spin = () => { const end = process.hrtime.bigint() + 300000n; while (process.hrtime.bigint() < end); };
process.stdout.write('ready\\n');
for (;;) {
  for (const d of dirs) { fs.renameSync(d, d + '.real'); fs.renameSync(d + '.link', d); }
  spin();
  for (const d of dirs) { fs.renameSync(d, d + '.link'); fs.renameSync(d + '.real', d); }
  spin();
}
`;

describe('local files an attacker can touch in the root', () => {
  let env: SapiTestEnv;
  let root: string;
  let outside: string;
  let n = 0;

  beforeAll(async () => {
    const base = mkdtempSync(join(testStack().dataDir, 'planted-'));
    root = join(base, 'allowed');
    outside = join(base, 'outside');
    mkdirSync(root);
    mkdirSync(outside);
    env = await startSapiTestEnv('planted', { env: { SAPI_LOCAL_ROOTS: root, SAPI_ALLOWED_NETWORKS: '' } });
    writeFileSync(join(root, 'rows.csv'), 'id,name\n1,alpha\n2,beta\n');
    await env.client.workflow.execute('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `planted-import-${Date.now()}`,
      args: [
        {
          source: join(root, 'rows.csv'),
          bucketId: 'in.c-planted',
          createBucket: true,
          table: 'rows',
          polling: { initialMs: 200, maxMs: 1000 },
        } as ImportTableInput,
      ],
    });
  });
  afterAll(async () => {
    await env?.stop();
  });

  const exportTo = (destination: string, input: Partial<ExportTableInput> = {}) =>
    env.client.workflow.execute('exportTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `planted-export-${Date.now()}-${++n}`,
      args: [{ tableId: 'in.c-planted.rows', destination, polling: { initialMs: 200, maxMs: 1000 }, ...input } as ExportTableInput],
    });

  it.each([
    ['as exported', {}],
    ['gzipped', { gzip: true }],
  ])('writes the table to root/x.csv (%s), not through root/x.csv.partial or root/x.csv.parts linked outside', async (label, input) => {
    const victim = join(outside, `victim-${n}.txt`);
    writeFileSync(victim, 'keep me\n');
    const victimFolder = join(outside, `folder-${n}`);
    mkdirSync(victimFolder);
    const destination = join(root, `x-${label.replace(/\W/g, '')}.csv`);
    symlinkSync(victim, `${destination}.partial`);
    symlinkSync(victimFolder, `${destination}.parts`);

    await exportTo(destination, input);

    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(readdirSync(victimFolder)).toEqual([]);
    expect(lstatSync(destination).isFile()).toBe(true);
    const exported = readFileSync(destination);
    const text = exported[0] === 0x1f ? (await import('node:zlib')).gunzipSync(exported).toString('utf8') : exported.toString('utf8');
    expect(text).toMatch(/alpha/);
    expect(text).toMatch(/beta/);
    // the planted names are gone (removed, never followed) and nothing is left next to the destination
    expect(existsSync(`${destination}.partial`)).toBe(false);
    expect(existsSync(`${destination}.parts`)).toBe(false);
  });

  it('imports from and exports to a folder flipped between a folder and a link to outside: no run reads or writes outside', async () => {
    for (const dir of [join(root, 'sw'), join(root, 'swd'), join(outside, 'sw'), join(outside, 'swd')]) mkdirSync(dir);
    writeFileSync(join(root, 'sw', 'data.csv'), 'id,name\n1,inside\n');
    writeFileSync(join(outside, 'sw', 'data.csv'), 'id,name\n1,OUTSIDE\n');
    symlinkSync(join(outside, 'sw'), join(root, 'sw.link'));
    symlinkSync(join(outside, 'swd'), join(root, 'swd.link'));
    const flipper = spawn(process.execPath, ['-e', FLIPPER, JSON.stringify([join(root, 'sw'), join(root, 'swd')])], { stdio: ['ignore', 'pipe', 'inherit'] });
    const outcomes: string[] = [];
    try {
      await new Promise<void>((resolve) => flipper.stdout!.once('data', () => resolve()));
      const code = (err: unknown) =>
        String(
          (err as { cause?: { type?: string; cause?: { type?: string } } }).cause?.type ??
            (err as { cause?: { cause?: { type?: string } } }).cause?.cause?.type ??
            'error',
        );
      const runs = Array.from({ length: 6 }, (_, i) => [
        env.client.workflow
          .execute('importTableWorkflow', {
            taskQueue: env.taskQueue,
            workflowId: `swap-import-${Date.now()}-${i}`,
            args: [
              {
                source: join(root, 'sw', 'data.csv'),
                bucketId: 'in.c-planted',
                table: `swap${i}`,
                polling: { initialMs: 200, maxMs: 1000 },
              } as ImportTableInput,
            ],
          })
          .then(
            () => outcomes.push(`import ${i}: loaded`),
            (err: unknown) => outcomes.push(`import ${i}: ${code(err)}`),
          ),
        exportTo(join(root, 'swd', `out-${i}.csv`)).then(
          () => outcomes.push(`export ${i}: written`),
          (err: unknown) => outcomes.push(`export ${i}: ${code(err)}`),
        ),
      ]);
      await Promise.all(runs.flat());
    } finally {
      flipper.kill('SIGKILL');
    }
    // every table loaded holds the inside row; nothing was written in the outside folder
    for (let i = 0; i < 6; i++) {
      if (!outcomes.includes(`import ${i}: loaded`)) continue;
      expect((await env.emulator.readTable(`in.c-planted.swap${i}`)).rows).toEqual([['1', 'inside']]);
    }
    expect(readdirSync(join(outside, 'swd'))).toEqual([]);
    expect(
      readdirSync(outside)
        .filter((name) => !name.startsWith('victim-') && !name.startsWith('folder-'))
        .sort(),
    ).toEqual(['sw', 'swd']);
    expect(outcomes).toHaveLength(12);
    process.stdout.write(`swap race through workflows: ${outcomes.sort().join('; ')}\n`);
  });
});
