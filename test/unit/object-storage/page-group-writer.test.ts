/**
 * The page-group writer on an in-memory stage store whose writes finish when the test says: groups of consecutive
 * pages become one object per table, and the resume point moves only over stored groups, in order.
 */
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localStore } from '../../../src/object-storage/local-store';
import { memoryStore as memoryObjectStore } from '../../../src/object-storage/memory-store';
import type { ObjectStore } from '../../../src/object-storage/object-store';
import { markedResumePoint, PageGroupWriter, recoverPageLogs } from '../../../src/object-storage/page-group-writer';
import { groupCheckpointKey, pageKey, pageLogKey, readText } from '../../../src/object-storage/stage-store';

interface PendingPut {
  key: string;
  body: string;
  ok(): void;
  fail(err: Error): void;
}

/** The memory store whose `put` waits until the test settles it (or at once with `auto`); `objects` as text. */
function memoryStore(auto = false) {
  const objects = new Map<string, string>();
  const pending: PendingPut[] = [];
  const base = memoryObjectStore();
  const store: ObjectStore = {
    ...base,
    put: (key, body) =>
      new Promise<void>((resolve, reject) => {
        const put: PendingPut = {
          key,
          body: String(body),
          ok: () => {
            objects.set(key, String(body));
            base.objects.set(key, Buffer.from(body));
            resolve();
          },
          fail: reject,
        };
        if (auto) put.ok();
        else pending.push(put);
      }),
    delete: async (keys) => {
      await base.delete(keys);
      for (const k of keys) objects.delete(k);
    },
  };
  /** Settles the pending writes of the group whose keys contain `range` (`p0000000001-0000000002`). */
  const settle = (range: string, err?: Error) => {
    for (const put of pending.filter((p) => p.key.includes(range))) {
      pending.splice(pending.indexOf(put), 1);
      if (err) put.fail(err);
      else put.ok();
    }
  };
  return { store, objects, pending, settle };
}

const range = (first: number, last: number) => `p${String(first).padStart(10, '0')}-${String(last).padStart(10, '0')}`;
/** The JSON lines of rows `{id}` (what the page loop hands the writer). */
const lines = (...ids: string[]) => ids.map((id) => `${JSON.stringify({ id })}\n`).join('');
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PageGroupWriter', () => {
  it('stages a group of consecutive pages as one object per table, rows as JSON lines in page order', async () => {
    const { store, objects } = memoryStore(true);
    const writer = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 3, checkpoint: 0 });
    writer.addLines(1, [
      { name: 'users', text: lines('a', 'b') },
      { name: 'users_tags', text: lines('t') },
    ]);
    writer.addLines(2, []); // a page without rows still extends the range
    writer.addLines(3, [
      { name: 'users', text: lines('c') },
      { name: 'empty', text: '' },
    ]);
    await writer.flush(3);
    await writer.settle();
    expect([...objects.keys()].sort()).toEqual([pageKey('wf/run', 3, 1, 3, 'users'), pageKey('wf/run', 3, 1, 3, 'users_tags')]);
    expect(objects.get(pageKey('wf/run', 3, 1, 3, 'users'))).toBe('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n');
    expect(writer.checkpoint).toBe(3);
  });

  it('moves the resume point over a group without rows at once, without writing anything', async () => {
    const { store, objects } = memoryStore();
    const seen: number[] = [];
    const writer = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0, onAdvance: (c) => seen.push(c) });
    writer.addLines(1, [{ name: 'users', text: '' }]);
    await writer.flush(1);
    await writer.flush(1); // nothing buffered
    expect(objects.size).toBe(0);
    expect(writer.checkpoint).toBe(1);
    expect(seen).toEqual([1, 1]);
  });

  it('takes a later group as the resume point only once every group before it is stored', async () => {
    const { store, settle } = memoryStore();
    const seen: number[] = [];
    const writer = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0, onAdvance: (c) => seen.push(c) });
    writer.addLines(1, [{ name: 'users', text: lines('a') }]);
    await writer.flush(1);
    writer.addLines(2, [{ name: 'users', text: lines('b') }]);
    await writer.flush(2);

    settle(range(2, 2)); // the second group is stored first
    await tick();
    expect(writer.checkpoint).toBe(0);
    settle(range(1, 1));
    await tick();
    expect(writer.checkpoint).toBe(2);
    await writer.settle();
    expect(seen).toEqual([0, 2]);
  });

  it('never moves the resume point over a group whose write failed, even when later groups are stored', async () => {
    const { store, settle } = memoryStore();
    const seen: number[] = [];
    const writer = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0, onAdvance: (c) => seen.push(c) });
    writer.addLines(1, [{ name: 'users', text: lines('a') }]);
    await writer.flush(1);
    writer.addLines(2, [{ name: 'users', text: lines('b') }]);
    await writer.flush(2);
    settle(range(2, 2));
    settle(range(1, 1), new Error('staging write failed'));

    await expect(writer.settle()).rejects.toThrow('staging write failed');
    await writer.drain();
    expect(writer.checkpoint).toBe(0);
    expect(seen.every((c) => c === 0)).toBe(true);
  });

  it('lets at most `writesInFlight` groups be written while the next pages are buffered', async () => {
    const { store, settle, pending } = memoryStore();
    const writer = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0, writesInFlight: 2 });
    for (const page of [1, 2]) {
      writer.addLines(page, [{ name: 'users', text: lines(`r${page}`) }]);
      await writer.flush(page);
    }
    writer.addLines(3, [{ name: 'users', text: lines('r3') }]);
    let third = false;
    const flushing = writer.flush(3).then(() => (third = true));
    await tick();
    expect(third).toBe(false); // waits for the oldest
    expect(pending).toHaveLength(3);
    settle(range(1, 1));
    await flushing;
    expect(writer.checkpoint).toBe(1);
  });

  it('is full at its page, size or age limit', () => {
    const { store } = memoryStore();
    let now = 1_000;
    const writer = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0, maxPages: 3, maxChars: 40, maxMs: 500, now: () => now });
    expect(writer.full).toBe(false); // nothing buffered
    writer.addLines(1, [{ name: 'users', text: lines('a') }]);
    writer.addLines(2, []);
    expect(writer.full).toBe(false);
    writer.addLines(3, []);
    expect(writer.full).toBe(true); // 3 pages

    const bySize = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0, maxChars: 40, now: () => now });
    bySize.addLines(1, [{ name: 'users', text: lines('a'.repeat(40)) }]);
    expect(bySize.full).toBe(true);

    const byAge = new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0, maxMs: 500, now: () => now });
    byAge.addLines(1, []);
    now += 499;
    expect(byAge.full).toBe(false);
    now += 1;
    expect(byAge.full).toBe(true);
  });

  it('discards the groups of its job run that start after a page, and nothing else', async () => {
    const { store, objects } = memoryStore(true);
    for (const [runNo, first, last] of [
      [1, 1, 10],
      [1, 11, 20],
      [1, 21, 21],
      [2, 1, 5],
    ] as const) {
      await store.put(pageKey('wf/run', runNo, first, last, 'users'), 'x\n');
    }
    await new PageGroupWriter({ store, runKey: 'wf/run', runNo: 1, checkpoint: 0 }).discardAfter(10);
    expect([...objects.keys()].sort()).toEqual([pageKey('wf/run', 1, 1, 10, 'users'), pageKey('wf/run', 2, 1, 5, 'users')]);
  });
});

describe('PageGroupWriter with page checkpoints on a local folder (page log)', () => {
  const lines = (page: number) => [{ name: 'items', text: `{"id":${page}}\n` }];
  const setup = (onAdvance?: (checkpoint: number) => void) => {
    const store = localStore(mkdtempSync(join(tmpdir(), 'page-log-')));
    const writer = new PageGroupWriter<number>({
      store,
      runKey: 'x',
      runNo: 1,
      checkpoint: 0,
      maxPages: 1,
      writesInFlight: 0,
      markers: { tag: 't', attempt: 2 },
      ...(onAdvance ? { onAdvance } : {}),
    });
    return { store, writer };
  };
  const marker = async (store: ObjectStore, first: number, last: number) =>
    JSON.parse(await readText(store, groupCheckpointKey('x', 1, first, last))) as { tag: string; checkpoint: number; tables: string[] };

  it('logs each flushed page with its resume point, then stages the call as groups (a page flushed alone apart) and deletes the log', async () => {
    const advanced: number[] = [];
    const { store, writer } = setup((c) => advanced.push(c));
    for (const page of [1, 2, 3]) {
      writer.addLines(page, lines(page));
      await writer.flush(page);
    }
    writer.addLines(4, lines(4));
    await writer.flush(3, { alone: true }); // a handed-back page: its resume point is the page before it
    expect(writer.checkpoint).toBe(3);
    expect(advanced).toEqual([1, 2, 3, 3]);
    expect(await store.list('x/')).toEqual([pageLogKey('x', 1, 1, 2)]); // nothing but the log while the call runs
    await writer.settle();
    expect(await store.list('x/')).toEqual([
      groupCheckpointKey('x', 1, 1, 3),
      pageKey('x', 1, 1, 3, 'items'),
      groupCheckpointKey('x', 1, 4, 4),
      pageKey('x', 1, 4, 4, 'items'),
    ]);
    expect(await readText(store, pageKey('x', 1, 1, 3, 'items'))).toBe('{"id":1}\n{"id":2}\n{"id":3}\n');
    expect(await marker(store, 1, 3)).toEqual({ tag: 't', checkpoint: 3, tables: ['items'] });
    expect(await marker(store, 4, 4)).toEqual({ tag: 't', checkpoint: 3, tables: ['items'] });
    expect(await markedResumePoint(store, 'x', 1, 't', 0)).toBe(3);
  });

  it("recovers a dead attempt's log: whole lines become groups, a torn last line is dropped, and a second recovery changes nothing", async () => {
    const { store, writer } = setup();
    for (const page of [1, 2]) {
      writer.addLines(page, lines(page));
      await writer.flush(page);
    }
    await writer.drain(); // the attempt fails: the log stays for the retry
    appendFileSync(store.urlOf(pageLogKey('x', 1, 1, 2)), '{"tag":"t","first":3,"last":3,"tables":{"items":"{\\"id\\":3');
    await recoverPageLogs(store, 'x', 1);
    const after = await store.list('x/');
    expect(after).toEqual([groupCheckpointKey('x', 1, 1, 2), pageKey('x', 1, 1, 2, 'items')]);
    expect(await readText(store, pageKey('x', 1, 1, 2, 'items'))).toBe('{"id":1}\n{"id":2}\n');
    expect(await markedResumePoint(store, 'x', 1, 't', 0)).toBe(2);
    await recoverPageLogs(store, 'x', 1);
    expect(await store.list('x/')).toEqual(after);
  });
});
