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

/**
 * Where a CSV file whose every value is enclosed in `"` (as DuckDB's `COPY … (FORCE_QUOTE *)` writes it) is cut
 * into slices: after the first record that brings a slice to `sliceSizeBytes` or more, as the rows were written.
 * Returns the end offset of each slice (the last one is the file size; one entry when the file fits in one slice).
 * A newline inside a value is told from a record end by the parity of the enclosures before it.
 */
export async function sliceEnds(path: string, sliceSizeBytes: number): Promise<number[]> {
  const ends: number[] = [];
  let offset = 0;
  let quoted = false;
  let nextCut = sliceSizeBytes; // a record ending at or after this offset ends the slice
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (offset + n <= nextCut - 1) {
        // no cut in the rest of this chunk: only the enclosures' parity matters
        for (; i < n; i++) if (chunk[i] === QUOTE) quoted = !quoted;
        break;
      }
      const b = chunk[i]!;
      if (b === QUOTE) quoted = !quoted;
      else if (b === LF && !quoted && offset + i + 1 >= nextCut) {
        ends.push(offset + i + 1);
        nextCut = offset + i + 1 + sliceSizeBytes;
      }
      i++;
    }
    offset += n;
  }
  if (ends.at(-1) !== offset) ends.push(offset);
  return ends;
}

/**
 * Stores an export whose rows (without header) are in the local file `path`: one object with the header when the
 * rows fit in one slice of `sliceSizeBytes`, else headerless slices `part_00000…` and a manifest. Slices are read
 * straight from the file by byte range; gzipped ones are compressed into a temp file first (their size is then
 * known), one slice ahead of the upload.
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
}): Promise<SliceWriterResult> {
  const { objects, key, path, gzip } = options;
  const ends = await sliceEnds(path, options.sliceSizeBytes);
  const size = ends.at(-1)!;
  const range = (start: number, end: number): Readable => (end > start ? createReadStream(path, { start, end: end - 1 }) : Readable.from([]));
  if (ends.length === 1) {
    if (!gzip) {
      const header = Buffer.from(options.header);
      const body = Readable.from(concat(header, range(0, size)));
      await objects.put(key, body, undefined, header.length + size);
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
  let upload: Promise<void> = Promise.resolve();
  try {
    for (let index = 0; index < ends.length; index++) {
      const start = index === 0 ? 0 : ends[index - 1]!;
      const sliceKey = `${key}${sliceSuffix(index, gzip)}`;
      keys.push(sliceKey);
      if (!gzip) {
        await upload;
        upload = objects.put(sliceKey, range(start, ends[index]!), undefined, ends[index]! - start);
        storedBytes += ends[index]! - start;
        continue;
      }
      const stored = await gzipToFile(range(start, ends[index]!), `${options.tmpDir}/export-${options.id}-${index}`);
      storedBytes += stored.size;
      await upload;
      upload = objects.put(sliceKey, createReadStream(stored.path), undefined, stored.size).finally(() => unlinkSync(stored.path));
    }
    await upload;
  } catch (error) {
    await upload.catch(() => undefined);
    throw error;
  }
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
