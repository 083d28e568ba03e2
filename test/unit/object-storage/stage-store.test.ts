import { mkdtempSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { localStore } from '../../../src/object-storage/local-store';
import { createStageStore, csvKey, jobRunPrefix, pageKey, pagesPrefix, parsePageKey, readText, writeStream } from '../../../src/object-storage/stage-store';

describe('staging keys', () => {
  it('sort in extraction order and parse back', () => {
    const keys = [
      pageKey('wf/run', 2, 1, 1, 'users'),
      pageKey('wf/run', 1, 11, 20, 'users'),
      pageKey('wf/run', 1, 1, 10, 'users_tags'),
      pageKey('wf/run', 1, 1, 10, 'users'),
    ];
    expect([...keys].sort()).toEqual([keys[3], keys[2], keys[1], keys[0]]);
    expect(keys[1]).toBe('wf/run/r0000000001/p0000000011-0000000020/users.jsonl');
    expect(parsePageKey(keys[1]!)).toEqual({ runNo: 1, firstPage: 11, lastPage: 20, table: 'users' });
    expect(parsePageKey(csvKey('wf/run', 'users'))).toBeUndefined();
    expect(keys.every((k) => k.startsWith(pagesPrefix('wf/run')))).toBe(true);
    expect(keys[1]!.startsWith(jobRunPrefix('wf/run', 1))).toBe(true);
  });
});

describe('local folder store (staging)', () => {
  const root = () => mkdtempSync(join(tmpdir(), 'stage-'));

  it('writes atomically (no temporary file left), replaces, lists by prefix in order, reads and deletes', async () => {
    const dir = root();
    const store = localStore(dir);
    await store.put('run/r1/p2/t.jsonl', 'b\n');
    await store.put('run/r1/p1/t.jsonl', 'a\n');
    await store.put('run/r1/p1/t.jsonl', 'a2\n');
    await store.put('run/csv/t.csv', 'x');
    await store.put('other/r1/p1/t.jsonl', 'z');
    mkdirSync(join(dir, 'run', 'r1', 'p3'));
    writeFileSync(join(dir, 'run', 'r1', 'p3', 't.jsonl.123.abc.tmp'), 'partial');
    expect(await store.list('run/r')).toEqual(['run/r1/p1/t.jsonl', 'run/r1/p2/t.jsonl']);
    expect(await store.list('run/')).toEqual(['run/csv/t.csv', 'run/r1/p1/t.jsonl', 'run/r1/p2/t.jsonl']);
    expect(await store.list('nothing/')).toEqual([]);
    expect(await readText(store, 'run/r1/p1/t.jsonl')).toBe('a2\n');
    expect(readdirSync(join(dir, 'run', 'r1', 'p1'))).toEqual(['t.jsonl']);
    await store.delete(['run/r1/p2/t.jsonl', 'run/r1/p9/missing.jsonl']);
    expect(await store.list('run/r')).toEqual(['run/r1/p1/t.jsonl']);
    expect(store.urlOf('run/csv/t.csv')).toBe(join(dir, 'run', 'csv', 't.csv'));
    // the folders a delete leaves empty go too; one holding anything else (a stray temporary file) stays
    expect(readdirSync(join(dir, 'run', 'r1')).sort()).toEqual(['p1', 'p3']);
    await store.delete(await store.list('run/'));
    expect(readdirSync(join(dir, 'run'))).toEqual(['r1']);
    expect(readdirSync(join(dir, 'run', 'r1'))).toEqual(['p3']);
    expect(readdirSync(dir).sort()).toEqual(['other', 'run']);
  });

  // (a page-checkpoint group writes its tables and its marker into one new folder together: one mkdir between them)
  const LARGE = 256 * 1024;

  it('writes small and large objects into new folders at once: every one lands whole, no temporary file is left', async () => {
    const dir = root();
    const store = localStore(dir);
    const small = 'a\n'.repeat(10);
    const large = 'b'.repeat(LARGE);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => [
        store.put(`run/r1/p${i}/small.jsonl`, small),
        store.put(`run/r1/p${i}/large.jsonl`, large),
        store.put(`run/r1/p${i}/.checkpoint.json`, '{}'),
        writeStream(store, `run/r1/p${i}/streamed.csv`, Readable.from(['x\n', 'y\n'])),
      ]).flat(),
    );
    const keys = await store.list('run/r1/');
    expect(keys).toHaveLength(80);
    for (let i = 0; i < 20; i++) {
      expect(readdirSync(join(dir, 'run', 'r1', `p${i}`)).sort()).toEqual(['.checkpoint.json', 'large.jsonl', 'small.jsonl', 'streamed.csv']);
      expect(await readText(store, `run/r1/p${i}/small.jsonl`)).toBe(small);
      expect(await readText(store, `run/r1/p${i}/large.jsonl`)).toBe(large);
    }
    // a folder removed since (a clean-up) is made again
    await store.delete(keys);
    await store.put('run/r1/p0/small.jsonl', small);
    await store.put('run/r1/p1/large.jsonl', large);
    expect(await store.list('run/r1/')).toEqual(['run/r1/p0/small.jsonl', 'run/r1/p1/large.jsonl']);
  });

  it('fails a write whose folder cannot be made as a write error naming the folder and key, small or large', async () => {
    const dir = root();
    const store = localStore(dir);
    writeFileSync(join(dir, 'blocked'), 'a file where the folder should be');
    await expect(store.put('blocked/r1/p1/t.jsonl', 'a\n')).rejects.toThrow(
      new RegExp(`^write failed \\[folder=${dir}, key=blocked/r1/p1/t\\.jsonl\\]: .*ENOTDIR`),
    );
    await expect(store.put('blocked/r1/p1/t.jsonl', 'b'.repeat(LARGE))).rejects.toThrow(/^write failed/);
    await expect(writeStream(store, 'blocked/csv/t.csv', Readable.from(['x']))).rejects.toThrow(/^write failed/);
    expect(readdirSync(dir)).toEqual(['blocked']);
  });

  it('streams a large object to its key', async () => {
    const store = localStore(root());
    await writeStream(store, 'run/csv/big.csv', Readable.from(Array.from({ length: 1000 }, (_, i) => `${i}\n`)));
    expect((await readText(store, 'run/csv/big.csv')).split('\n')).toHaveLength(1001);
  });

  it('refuses keys that would leave the folder, and other URL schemes', async () => {
    const store = localStore(root());
    await expect(store.put('../escape', 'x')).rejects.toThrow(/invalid key/);
    expect(() => createStageStore('gs://bucket/x', () => undefined as never)).toThrow(/SAPI_STAGING_URL must be s3:\/\/bucket\/prefix or a local folder/);
  });
});
