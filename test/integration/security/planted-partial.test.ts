/**
 * Names planted next to an export's destination (issue 35): someone who can write in the allowed root plants
 * `root/x.csv.partial` (and `root/x.csv.parts`) as symbolic links to a file (a folder) outside the root, then an
 * export to `root/x.csv` runs. The download's temporary files are created exclusively and never through a link: the
 * outside file keeps its bytes, nothing appears in the outside folder, and `root/x.csv` is a regular file with the
 * table's rows (not a link).
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportTableInput, ImportTableInput } from '../../../src/contracts/transfer';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

describe('an export next to planted links', () => {
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
      args: [{ source: join(root, 'rows.csv'), bucketId: 'in.c-planted', createBucket: true, table: 'rows', polling: { initialMs: 200, maxMs: 1000 } } as ImportTableInput],
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
});
