import { AsyncResource } from 'node:async_hooks';
import type { LoadReceipt } from '../contracts/receipts';

/** Where a batch of receipts goes: a connection's receipts table. */
export interface ReceiptTarget {
  connection?: string;
  table: string;
}

/** Writes one batch of receipts into their table (one upload, one load job); throws when the batch was not written. */
export type WriteReceiptBatch = (target: ReceiptTarget, receipts: LoadReceipt[]) => Promise<void>;

interface Batch {
  target: ReceiptTarget;
  /** By receipt id: the same receipt asked twice (an activity retry beside its earlier attempt) is one row. */
  receipts: Map<string, LoadReceipt>;
  done: Promise<void>;
  settle: (err?: unknown) => void;
  /** Runs a function in the async context of the batch's first caller (its activity's: its deadline, its logger). */
  inCallerContext: (fn: () => void) => void;
}

interface Queue {
  running: boolean;
  next?: Batch;
}

/**
 * The receipts a worker writes, grouped by table: while one batch's load job runs, the receipts asked for meanwhile
 * wait and go together in the next batch (one upload and one load job for all of them), so N loads ending at once
 * cost a few receipt jobs, not N. Each caller's promise settles with its own batch: written, or that batch's failure
 * (the caller reports it as its receipt's). A batch holds at most what the worker's running activities asked for.
 */
export class ReceiptBatches {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly writeBatch: WriteReceiptBatch) {}

  /** Resolves once a batch holding `receipt` was written into `target`. */
  write(target: ReceiptTarget, receipt: LoadReceipt): Promise<void> {
    const key = `${target.connection ?? ''}\n${target.table}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { running: false };
      this.queues.set(key, queue);
    }
    const batch = (queue.next ??= newBatch(target));
    batch.receipts.set(receipt.receiptId, receipt);
    if (!queue.running) this.flush(key, queue);
    return batch.done;
  }

  /**
   * Writes the next batch of `key`, in the async context of its first caller: a batch that follows another does not
   * run in the context of the activity that started the chain (whose deadline may have passed long ago).
   */
  private flush(key: string, queue: Queue): void {
    const batch = queue.next;
    queue.next = undefined;
    if (!batch) {
      this.queues.delete(key);
      return;
    }
    queue.running = true;
    batch.inCallerContext(() => {
      void this.writeBatch(batch.target, [...batch.receipts.values()])
        .then(
          () => batch.settle(),
          (err: unknown) => batch.settle(err ?? new Error('the receipt batch failed')),
        )
        .finally(() => {
          queue.running = false;
          this.flush(key, queue);
        });
    });
  }
}

function newBatch(target: ReceiptTarget): Batch {
  let settle!: (err?: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    settle = (err) => (err === undefined ? resolve() : reject(err instanceof Error ? err : new Error(String(err))));
  });
  // a batch nobody awaits any more (its callers gave up) must not end the process with an unhandled rejection
  done.catch(() => undefined);
  return { target, receipts: new Map(), done, settle, inCallerContext: AsyncResource.bind((fn: () => void) => fn()) };
}
