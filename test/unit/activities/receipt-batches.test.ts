import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoadReceipt } from '../../../src/contracts/receipts';
import { ReceiptBatches, type ReceiptTarget } from '../../../src/activities/receipt-batches';

/** A receipt with only what the batches look at (its id) and the table it names. */
const receipt = (id: string): LoadReceipt => ({ receiptId: id, tableId: id }) as LoadReceipt;

/** A batch writer whose writes are held until the test lets each one end (an event, not a time). */
function heldWriter() {
  const writes: Array<{ target: ReceiptTarget; ids: string[]; end: (err?: Error) => void }> = [];
  const waiters: Array<() => void> = [];
  const write = (target: ReceiptTarget, receipts: LoadReceipt[]) =>
    new Promise<void>((resolve, reject) => {
      writes.push({ target, ids: receipts.map((r) => r.receiptId), end: (err) => (err ? reject(err) : resolve()) });
      waiters.splice(0).forEach((w) => w());
    });
  /** Resolves once `n` writes have started. */
  const started = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (writes.length >= n ? resolve() : waiters.push(check));
      check();
    });
  return { writes, write, started };
}

describe('receipt batches: the receipts a worker writes into one table at once share a load', () => {
  it('writes the first receipt at once, and the receipts asked meanwhile together in one next batch', async () => {
    const w = heldWriter();
    const batches = new ReceiptBatches(w.write);
    const target = { table: 'in.c-r.receipts' };
    const first = batches.write(target, receipt('a'));
    await w.started(1);
    const later = ['b', 'c', 'd'].map((id) => batches.write(target, receipt(id)));
    expect(w.writes.map((x) => x.ids)).toEqual([['a']]);
    w.writes[0]!.end();
    await first;
    await w.started(2);
    expect(w.writes.map((x) => x.ids)).toEqual([['a'], ['b', 'c', 'd']]);
    w.writes[1]!.end();
    await Promise.all(later);
  });

  it('a failed batch fails its own callers only; the next batch is written', async () => {
    const w = heldWriter();
    const batches = new ReceiptBatches(w.write);
    const target = { table: 'in.c-r.receipts' };
    const first = batches.write(target, receipt('a'));
    await w.started(1);
    const second = batches.write(target, receipt('b'));
    w.writes[0]!.end(new Error('receipts table refused'));
    await expect(first).rejects.toThrow('receipts table refused');
    await w.started(2);
    w.writes[1]!.end();
    await expect(second).resolves.toBeUndefined();
  });

  it('the same receipt asked twice in one batch is one row; other tables and connections get batches of their own', async () => {
    const w = heldWriter();
    const batches = new ReceiptBatches(w.write);
    const blocker = batches.write({ table: 'in.c-r.receipts' }, receipt('x'));
    await w.started(1);
    const waiting = [
      batches.write({ table: 'in.c-r.receipts' }, receipt('a')),
      batches.write({ table: 'in.c-r.receipts' }, receipt('a')),
      batches.write({ table: 'in.c-other.receipts' }, receipt('b')),
      batches.write({ connection: 'second', table: 'in.c-r.receipts' }, receipt('c')),
    ];
    await w.started(3);
    expect(w.writes.slice(1).map((x) => [x.target, x.ids])).toEqual([
      [{ table: 'in.c-other.receipts' }, ['b']],
      [{ connection: 'second', table: 'in.c-r.receipts' }, ['c']],
    ]);
    w.writes[0]!.end();
    await blocker;
    await w.started(4);
    expect(w.writes[3]!.ids).toEqual(['a']);
    w.writes.slice(1).forEach((x) => x.end());
    await Promise.all(waiting);
  });

  it("writes each batch in the async context of its own first caller (its activity's deadline), not the first batch's", async () => {
    const caller = new AsyncLocalStorage<string>();
    const w = heldWriter();
    const contexts: Array<string | undefined> = [];
    const batches = new ReceiptBatches((target, receipts) => {
      contexts.push(caller.getStore());
      return w.write(target, receipts);
    });
    const target = { table: 'in.c-r.receipts' };
    const first = caller.run('activity-1', () => batches.write(target, receipt('a')));
    await w.started(1);
    const second = caller.run('activity-2', () => batches.write(target, receipt('b')));
    const third = caller.run('activity-3', () => batches.write(target, receipt('c')));
    w.writes[0]!.end();
    await first;
    await w.started(2);
    w.writes[1]!.end();
    await Promise.all([second, third]);
    expect(contexts).toEqual(['activity-1', 'activity-2']);
  });
});
