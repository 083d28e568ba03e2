/**
 * The two pure halves of an in-place download, shared by its threads (`in-place-thread.ts`): where each slice lies
 * in the destination once the sizes before it are known ({@link SliceLayout}), and the sha256 of the file read back
 * slice by slice in manifest order ({@link createSliceHasher}). Node built-ins only: a download thread loads this.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/** Where a slice lies in the destination. */
export interface SlicePlace {
  offset: number;
  size: number;
}

/**
 * Where the slices go when their sizes are learned from their answers (no HEAD requests first): slice `i` starts
 * after the header and every slice before it, so its offset is known once their sizes are. The slices are requested
 * in manifest order, so a slice whose answer came early waits (its body unread) only for the headers of answers
 * already on their way.
 */
export class SliceLayout {
  private readonly sizes: Array<number | null>;
  /** offsets[k] for every k up to the first unknown size. */
  private readonly offsets: number[];
  private readonly waiting = new Map<number, { resolve(offset: number): void; reject(err: unknown): void }>();
  private abandoned: { err: unknown } | undefined;

  constructor(start: number, sizes: ReadonlyArray<number | null>, count: number) {
    this.sizes = Array.from({ length: count }, (_, i) => sizes[i] ?? null);
    this.offsets = [start];
    this.advance();
  }

  size(index: number): number | undefined {
    return this.sizes[index] ?? undefined;
  }

  /** The slice's place, if its offset and size are known. */
  placeOf(index: number): SlicePlace | undefined {
    const size = this.sizes[index];
    const offset = this.offsets[index];
    return size === null || size === undefined || offset === undefined ? undefined : { offset, size };
  }

  setSize(index: number, size: number): void {
    this.sizes[index] = size;
    this.advance();
  }

  /** The slice's offset once every slice before it has a size; rejects once {@link abandon}ed. */
  offsetOf(index: number): Promise<number> {
    const known = this.offsets[index];
    if (known !== undefined) return Promise.resolve(known);
    if (this.abandoned) return Promise.reject(this.abandoned.err);
    return new Promise((resolve, reject) => this.waiting.set(index, { resolve, reject }));
  }

  /** Every waiting and later {@link offsetOf} rejects with `err` (a slice before them failed). */
  abandon(err: unknown): void {
    this.abandoned ??= { err };
    for (const w of this.waiting.values()) w.reject(this.abandoned.err);
    this.waiting.clear();
  }

  private advance(): void {
    for (let k = this.offsets.length - 1; k < this.sizes.length && this.sizes[k] !== null; k++) this.offsets.push(this.offsets[k]! + this.sizes[k]!);
    for (const [index, w] of this.waiting) {
      const offset = this.offsets[index];
      if (offset !== undefined) {
        this.waiting.delete(index);
        w.resolve(offset);
      }
    }
  }
}

/** The hashing half: the file, the header line and the places of the slices finished before this attempt. */
export interface HashJob {
  partial: string;
  /** Hashed first (the header line at offset 0). */
  headerBytes?: Uint8Array;
  /** Where each slice lies once it is finished (null: not yet). */
  places: Array<SlicePlace | null>;
}

/**
 * The one buffer the written slices are read back into for hashing (page cache), reused for every read. The reads
 * are synchronous: the hasher runs in a thread of its own (`in-place-thread.ts`), where a read from the page cache
 * blocks nothing that waits, and a read through libuv's thread pool would cost two thread switches each.
 */
const HASH_READ_BYTES = 4 * 1024 * 1024;

/**
 * The sha256 of a file being written slice by slice: {@link add} a finished slice, and every slice whose
 * predecessors are finished is read back (from the page cache) and hashed, in order; {@link result} resolves once
 * all are.
 */
export function createSliceHasher(job: HashJob): { add(index: number, place: SlicePlace): void; result(): Promise<string>; stop(): Promise<void> } {
  const hash = createHash('sha256');
  if (job.headerBytes) hash.update(job.headerBytes);
  const places = [...job.places];
  const buffer = Buffer.allocUnsafe(HASH_READ_BYTES);
  let fd: number | undefined;
  let hashed = 0;
  let stopped = false;
  let chain = Promise.resolve();
  const pump = (): void => {
    chain = chain.then(async () => {
      while (!stopped && hashed < places.length && places[hashed]) {
        const { offset, size } = places[hashed]!;
        fd ??= openSync(job.partial, 'r');
        for (let done = 0; done < size;) {
          const bytesRead = readSync(fd, buffer, 0, Math.min(buffer.length, size - done), offset + done);
          if (bytesRead === 0) throw new Error(`${job.partial} ends at ${offset + done}, inside slice ${hashed}`);
          hash.update(buffer.subarray(0, bytesRead));
          done += bytesRead;
        }
        hashed++;
      }
    });
  };
  const close = async (): Promise<void> => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  pump();
  return {
    add(index, place) {
      places[index] = place;
      pump();
    },
    async result() {
      try {
        await chain;
      } finally {
        await close();
      }
      if (hashed < places.length) throw new Error(`only ${hashed} of ${places.length} slices were finished`);
      return hash.digest('hex');
    },
    async stop() {
      stopped = true;
      await chain.catch(() => undefined);
      await close();
    },
  };
}
