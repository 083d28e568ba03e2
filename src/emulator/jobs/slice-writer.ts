import { createReadStream, createWriteStream, statSync, unlinkSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { type Writable } from 'node:stream';
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

interface Slice {
  path: string;
  file: WriteStream;
  sink: Writable;
  rawBytes: number;
  /** Bytes of the header at the start of the file (slice 0 only). */
  headerBytes: number;
}

const FLUSH_BYTES = 1024 * 1024;

/**
 * Writes CSV lines into slices of about `sliceSizeBytes` uncompressed bytes on local disk and uploads each finished
 * slice while the next is written. The first slice starts with the header (a separate gzip member when gzipped), so
 * an export that fits in one slice is uploaded as one CSV with header; a larger one becomes headerless slices plus a
 * manifest. Memory: one buffered megabyte plus the uploader's parts; disk: at most two slices.
 */
export class SliceWriter {
  private slices: Slice[] = [];
  private current: Slice;
  private buffer: string[] = [];
  private bufferBytes = 0;
  private pendingUpload: Promise<void> = Promise.resolve();
  private uploadedKeys: string[] = [];
  private storedBytes = 0;

  constructor(
    private readonly options: { objects: ObjectStore; key: string; sliceSizeBytes: number; gzip: boolean; header: string; tmpDir: string; id: string },
  ) {
    this.current = this.open(0);
  }

  private open(index: number): Slice {
    const path = join(this.options.tmpDir, `export-${this.options.id}-${index}`);
    const file = createWriteStream(path);
    let headerBytes = 0;
    if (index === 0) {
      const header = this.options.gzip ? gzipSync(this.options.header) : Buffer.from(this.options.header);
      file.write(header);
      headerBytes = header.length;
    }
    let sink: Writable = file;
    if (this.options.gzip) {
      const gzip = createGzip();
      gzip.pipe(file);
      sink = gzip;
    }
    const slice = { path, file, sink, rawBytes: 0, headerBytes };
    this.slices.push(slice);
    return slice;
  }

  /** Adds one line; returns a promise only when the caller must wait (flush or slice change). */
  write(line: string): Promise<void> | undefined {
    if (this.current.rawBytes + this.bufferBytes >= this.options.sliceSizeBytes && this.current.rawBytes + this.bufferBytes > 0) {
      return this.flush()
        .then(() => this.rotate())
        .then(() => this.write(line));
    }
    this.buffer.push(line);
    this.bufferBytes += Buffer.byteLength(line);
    return this.bufferBytes >= FLUSH_BYTES ? this.flush() : undefined;
  }

  private async flush(): Promise<void> {
    if (!this.buffer.length) return;
    const chunk = this.buffer.join('');
    this.current.rawBytes += this.bufferBytes;
    this.buffer = [];
    this.bufferBytes = 0;
    if (!this.current.sink.write(chunk)) await once(this.current.sink, 'drain');
  }

  private async close(slice: Slice): Promise<void> {
    slice.sink.end();
    if (!slice.file.closed) await once(slice.file, 'close');
  }

  private async rotate(): Promise<void> {
    const finished = this.current;
    const index = this.slices.length - 1;
    await this.close(finished);
    await this.pendingUpload;
    this.pendingUpload = this.uploadSlice(finished, index);
    this.pendingUpload.catch(() => undefined);
    this.current = this.open(index + 1);
  }

  private async uploadSlice(slice: Slice, index: number): Promise<void> {
    const key = `${this.options.key}${sliceSuffix(index, this.options.gzip)}`;
    const size = statSync(slice.path).size - slice.headerBytes;
    try {
      await this.options.objects.put(key, size > 0 ? createReadStream(slice.path, { start: slice.headerBytes }) : Buffer.alloc(0), undefined, size);
    } finally {
      unlinkSync(slice.path);
    }
    this.uploadedKeys[index] = key;
    this.storedBytes += size;
  }

  async finish(): Promise<SliceWriterResult> {
    await this.flush();
    await this.close(this.current);
    await this.pendingUpload;
    if (this.slices.length === 1) {
      const size = statSync(this.current.path).size;
      try {
        await this.options.objects.put(this.options.key, createReadStream(this.current.path), undefined, size);
      } finally {
        unlinkSync(this.current.path);
      }
      return { isSliced: false, sizeBytes: size, keys: [this.options.key] };
    }
    await this.uploadSlice(this.current, this.slices.length - 1);
    const manifest = { entries: this.uploadedKeys.map((key) => ({ url: this.options.objects.entryUrl(key), mandatory: true })) };
    await this.options.objects.put(`${this.options.key}manifest`, JSON.stringify(manifest), 'application/json');
    return { isSliced: true, sizeBytes: this.storedBytes, keys: this.uploadedKeys };
  }

  /** Removes local temp files after a failure. */
  abort(): void {
    for (const slice of this.slices) {
      slice.sink.destroy();
      try {
        unlinkSync(slice.path);
      } catch {
        // already uploaded and removed
      }
    }
  }
}
