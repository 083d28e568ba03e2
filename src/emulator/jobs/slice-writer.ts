import { createReadStream, createWriteStream, statSync, unlinkSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, gzipSync } from 'node:zlib';
import { type ObjectStore } from '../object-store';

export interface SliceWriterResult {
  isSliced: boolean;
  /** Bytes stored (compressed when gzip), header included when not sliced. */
  sizeBytes: number;
  /** Object keys of the slices (sliced) or the single object. */
  keys: string[];
}

/** Suffix of slice `i`: `part_00000` (+ `.gz`). */
export function sliceSuffix(index: number, gzip: boolean): string {
  return `part_${String(index).padStart(5, '0')}${gzip ? '.gz' : ''}`;
}

const QUOTE = 0x22;
const LF = 0x0a;

/** Slices uploaded at once (each one a multipart upload of its own). */
const SLICES_IN_FLIGHT = 4;

/**
 * Where a CSV file whose every value is enclosed in `"` (as DuckDB's `COPY … (FORCE_QUOTE *)` writes it) is cut
 * into slices: after the first record that brings a slice to `sliceSizeBytes` or more, as the rows were written.
 * Yields the end offset of each slice as soon as it is found (the last one is the file size; just that one when the
 * file fits in one slice). A newline inside a value is told from a record end by the parity of the enclosures
 * before it.
 */
export async function* sliceEnds(path: string, sliceSizeBytes: number): AsyncGenerator<number> {
  let offset = 0;
  let quoted = false;
  let last = -1;
  let nextCut = sliceSizeBytes; // a record ending at or after this offset ends the slice
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (offset + n < nextCut) {
        // no cut in the rest of this chunk: only the enclosures' parity matters
        for (; i < n; i++) if (chunk[i] === QUOTE) quoted = !quoted;
        break;
      }
      const b = chunk[i]!;
      if (b === QUOTE) quoted = !quoted;
      else if (b === LF && !quoted && offset + i + 1 >= nextCut) {
        last = offset + i + 1;
        nextCut = last + sliceSizeBytes;
        yield last;
      }
      i++;
    }
    offset += n;
  }
  if (last !== offset) yield offset;
}

/**
 * Stores an export whose rows (without header) are in the local file `path`: one object with the header when the
 * rows fit in one slice of `sliceSizeBytes` (unless `alwaysSliced`), else headerless slices `part_00000…` and a manifest. Slices are read
 * straight from the file by byte range (gzipped ones are compressed into a temp file first, so their size is known)
 * and uploaded {@link SLICES_IN_FLIGHT} at a time while the file is still being cut.
 */
export async function storeSlices(options: {
  objects: ObjectStore;
  key: string;
  path: string;
  sliceSizeBytes: number;
  gzip: boolean;
  header: string;
  tmpDir: string;
  id: string;
  /** Slice even rows that fit in one slice (one headerless slice and a manifest), as the service's Snowflake stacks do. */
  alwaysSliced?: boolean;
}): Promise<SliceWriterResult> {
  const { objects, key, path, gzip } = options;
  const range = (start: number, end: number): Readable => (end > start ? createReadStream(path, { start, end: end - 1 }) : Readable.from([]));
  const ends = sliceEnds(path, options.sliceSizeBytes);
  const first = (await ends.next()).value as number;
  let next = await ends.next();
  if (next.done && !options.alwaysSliced) {
    const size = first;
    if (!gzip) {
      const header = Buffer.from(options.header);
      await objects.put(key, Readable.from(concat(header, range(0, size))), undefined, header.length + size);
      return { isSliced: false, sizeBytes: header.length + size, keys: [key] };
    }
    // the header as its own gzip member, then the rows: one valid gzip stream
    const stored = await gzipToFile(range(0, size), `${options.tmpDir}/export-${options.id}-0`, gzipSync(options.header));
    try {
      await objects.put(key, createReadStream(stored.path), undefined, stored.size);
    } finally {
      unlinkSync(stored.path);
    }
    return { isSliced: false, sizeBytes: stored.size, keys: [key] };
  }
  const keys: string[] = [];
  let storedBytes = 0;
  let failure: unknown;
  const inflight = new Set<Promise<void>>();
  const upload = async (index: number, start: number, end: number): Promise<void> => {
    const sliceKey = `${key}${sliceSuffix(index, gzip)}`;
    keys[index] = sliceKey;
    if (!gzip) {
      await objects.put(sliceKey, range(start, end), undefined, end - start);
      storedBytes += end - start;
      return;
    }
    const stored = await gzipToFile(range(start, end), `${options.tmpDir}/export-${options.id}-${index}`);
    try {
      await objects.put(sliceKey, createReadStream(stored.path), undefined, stored.size);
      storedBytes += stored.size;
    } finally {
      unlinkSync(stored.path);
    }
  };
  const schedule = async (index: number, start: number, end: number): Promise<void> => {
    while (inflight.size >= SLICES_IN_FLIGHT) await Promise.race(inflight);
    if (failure !== undefined) return;
    const task: Promise<void> = upload(index, start, end).then(
      () => undefined,
      (error: unknown) => {
        failure ??= error;
      },
    );
    const tracked = task.finally(() => inflight.delete(tracked));
    inflight.add(tracked);
  };
  try {
    await schedule(0, 0, first);
    let start = first;
    for (let index = 1; !next.done && failure === undefined; index++) {
      await schedule(index, start, next.value);
      start = next.value;
      next = await ends.next();
    }
  } finally {
    await ends.return(undefined); // closes the file when a slice failed before the end
    await Promise.all(inflight);
  }
  if (failure !== undefined) throw failure;
  const manifest = { entries: keys.map((k) => ({ url: objects.entryUrl(k), mandatory: true })) };
  await objects.put(`${key}manifest`, JSON.stringify(manifest), 'application/json');
  return { isSliced: true, sizeBytes: storedBytes, keys };
}

async function* concat(head: Buffer, rest: Readable): AsyncGenerator<Buffer> {
  yield head;
  for await (const chunk of rest) yield chunk as Buffer;
}

/** Gzips `body` into `path` (after `prefix`, e.g. a gzipped header member); returns the file's size. */
async function gzipToFile(body: Readable, path: string, prefix?: Buffer): Promise<{ path: string; size: number }> {
  const out = createWriteStream(path);
  if (prefix) out.write(prefix);
  try {
    await pipeline(body, createGzip(), out);
  } catch (error) {
    try {
      unlinkSync(path);
    } catch {
      // never written
    }
    throw error;
  }
  return { path, size: statSync(path).size };
}
