/**
 * The part loop every resumable upload shares, whatever the store: the source is read once, sequentially (its
 * sha256 computed on the way, gzip applied when asked), cut into parts of exactly `partSize` bytes in reused
 * buffers, and each part handed to the store's adapter in order; the parts it sends go up at most `concurrency` at a
 * time, so memory ≈ (concurrency + 1) × partSize, whatever the file size.
 *
 * The adapter decides per part ({@link PartPipelineOptions.part}): nothing to send (an earlier attempt stored it),
 * or a send to schedule. The first failure stops the reading; the parts in flight are awaited, then it is thrown.
 */
import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { crc32, createGzip } from 'node:zlib';
import { SapiError, SapiErrorCode, SapiTransferError } from '../errors';
import { throwIfAborted } from './s3-client';
import { type ByteSource } from './sources';

interface PartPipelineOptions {
  source: ByteSource;
  partSize: number;
  /** Parts sent at once. */
  concurrency: number;
  gzip?: boolean;
  /** Source offset to read from (a resume that needs no hash of the parts before). Default 0. */
  startOffset?: number;
  /** Compute the sha256 of the source (only when reading from 0). Default true. */
  sha256?: boolean;
  /** Compute each part's CRC32 (zlib's) and pass it to {@link PartPipelineOptions.part}. Default false. */
  crc32?: boolean;
  /**
   * Holds each part back until the next one (or the end) shows whether it is the last (`final`), and sends the
   * parts one at a time, each before the next is read: for protocols that take their parts in order and must be
   * told which is the last (a GCS session). Two part buffers; `concurrency` does not apply.
   */
  lookahead?: boolean;
  /** For errors: where the upload goes. */
  context: Record<string, string | number | undefined>;
  signal?: AbortSignal;
  /** Called after each send that succeeded (report the resume point). */
  onSent?: () => void;
  /**
   * Part `index` (1-based, counted from the start offset's part) with its bytes: return a send to schedule, or
   * undefined when the part needs no request. Called in order; may await (create the upload first). The buffer is
   * reused once the send settles: a send must be done with it by then. `crc` is the part's CRC32 (unsigned) with
   * {@link PartPipelineOptions.crc32}.
   */
  part(index: number, data: Buffer, final: boolean, crc?: number): Promise<(() => Promise<void>) | undefined> | (() => Promise<void>) | undefined;
}

interface PartPipelineResult {
  /** Index of the last part (0 when the pipeline stopped before one). */
  lastPart: number;
  /** Bytes read from the source, counting from 0 (the start offset included). */
  sourceBytes: number;
  /** Bytes of the parts (compressed with gzip). */
  storedBytes: number;
  /** Hex sha256 of the source (when computed). */
  sha256?: string;
  /** Parts sent (the sends that succeeded). */
  partsSent: number;
  /** Part buffers allocated. */
  partBuffers: number;
}

/** Runs the part loop. See the module doc. */
export async function runPartPipeline(options: PartPipelineOptions): Promise<PartPipelineResult> {
  const { source, partSize, signal } = options;
  const startOffset = options.startOffset ?? 0;
  throwIfAborted(signal);
  const hash: Hash | undefined = (options.sha256 ?? true) && startOffset === 0 ? createHash('sha256') : undefined;
  let sourceBytes = startOffset;
  const pool = new PartBufferPool(partSize, source.size === undefined ? undefined : source.size - startOffset);
  let parts: AsyncIterable<Buffer>;
  let file: FileHandle | undefined;
  const wantCrc = options.crc32 ?? false;
  let crc = 0; // the CRC32 of the part last read (a local file: computed as it is read)
  if (source.path !== undefined && !options.gzip) {
    // a local file: each part is read straight into its buffer (positional reads of the whole part: reads of 1 MiB,
    // each hashed while in cache, cost ~5 % more CPU per GB in all), then hashed and its CRC32 computed
    file = await openFile(source);
    parts = fileParts(file, startOffset, pool, (chunk, offsetInPart) => {
      hash?.update(chunk);
      sourceBytes += chunk.length;
      if (wantCrc) crc = crc32(chunk, offsetInPart === 0 ? 0 : crc);
    });
  } else {
    const raw = await source.open(startOffset, signal);
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb: TransformCallback) {
        hash?.update(chunk);
        sourceBytes += chunk.length;
        cb(null, chunk);
      },
    });
    const noop = (): void => undefined;
    const input = options.gzip ? pipeline(raw, tap, createGzip(), noop) : pipeline(raw, tap, noop);
    parts = chunkParts(input as AsyncIterable<Buffer>, partSize, pool);
  }

  const inflight = new Set<Promise<void>>();
  let failure: unknown;
  let lastPart = 0;
  let storedBytes = 0;
  let partsSent = 0;

  const dispatch = async (index: number, data: Buffer, final: boolean, partCrc: number | undefined): Promise<void> => {
    while (inflight.size >= options.concurrency) await Promise.race(inflight);
    if (failure) return;
    const send = await options.part(index, data, final, partCrc);
    if (!send) {
      pool.release(data);
      return;
    }
    const task: Promise<void> = send().then(
      () => {
        pool.release(data); // the request has been sent and answered: the next part may fill this buffer
        partsSent++;
        options.onSent?.();
      },
      (err: unknown) => {
        failure ??= err;
      },
    );
    const tracked = task.finally(() => inflight.delete(tracked));
    inflight.add(tracked);
    if (options.lookahead) await tracked; // sequential: the held part and the one filling are all the buffers
  };

  try {
    let held: { index: number; data: Buffer; crc: number | undefined } | undefined;
    for await (const data of parts) {
      const index = ++lastPart;
      storedBytes += data.length;
      if (failure) break;
      throwIfAborted(signal);
      // an empty part was read in no chunk: its CRC32 is 0
      const partCrc = !wantCrc ? undefined : file ? (data.length === 0 ? 0 : crc) : crc32(data);
      if (!options.lookahead) {
        await dispatch(index, data, false, partCrc);
        continue;
      }
      if (held) await dispatch(held.index, held.data, false, held.crc);
      held = { index, data, crc: partCrc };
    }
    if (held && !failure) await dispatch(held.index, held.data, true, held.crc);
  } catch (err) {
    failure ??= err;
  }
  await Promise.all(inflight);
  pool.retire();
  await file?.close().catch(() => undefined);
  if (failure !== undefined) {
    if (signal?.aborted) throw signal.reason ?? failure;
    if (failure instanceof SapiError) throw failure;
    throw new SapiTransferError({
      code: SapiErrorCode.UPLOAD_FAILED,
      message: 'upload failed while reading the source',
      context: { ...options.context, source: source.description },
      cause: failure,
    });
  }
  return { lastPart, sourceBytes, storedBytes, sha256: hash?.digest('hex'), partsSent, partBuffers: pool.allocated };
}

async function openFile(source: ByteSource): Promise<FileHandle> {
  try {
    return await (source.openHandle ? source.openHandle() : open(source.path!, 'r'));
  } catch (cause) {
    if (cause instanceof SapiError) throw cause;
    throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'the source cannot be read', context: { source: source.description }, cause });
  }
}

/**
 * The parts of an open file from `start` on: each a pool buffer filled by positional reads (the last part shorter; one
 * empty buffer for an empty rest), the same parts {@link chunkParts} cuts from a stream of the file. `onChunk` sees
 * what each read brought (usually the whole part), in order, with its offset in its part, before the part is yielded.
 */
export async function* fileParts(
  file: FileHandle,
  start: number,
  pool: PartBufferPool,
  onChunk?: (chunk: Buffer, offsetInPart: number) => void,
): AsyncGenerator<Buffer> {
  let position = start;
  for (let yielded = 0; ; yielded++) {
    let buf = pool.acquire();
    let filled = 0;
    for (;;) {
      const { bytesRead } = await file.read(buf, filled, buf.length - filled, position + filled);
      if (bytesRead === 0) break;
      onChunk?.(buf.subarray(filled, filled + bytesRead), filled);
      filled += bytesRead;
      if (filled < buf.length) continue;
      if (buf.length === pool.partSize) break;
      buf = pool.grow(buf, filled); // more than the source's size at the start: on in a whole part
    }
    position += filled;
    if (filled === pool.partSize) {
      yield buf;
      continue;
    }
    if (filled > 0 || yielded === 0) yield buf.subarray(0, filled);
    else pool.release(buf);
    return;
  }
}

/** Throws `SAPI_CHECKSUM_MISMATCH` (not retryable) when the source did not have the size it announced. */
export function assertSourceUnchanged(
  source: ByteSource,
  sourceBytes: number,
  gzip: boolean | undefined,
  context: Record<string, string | number | undefined>,
): void {
  if (source.size === undefined || gzip || sourceBytes === source.size) return;
  throw new SapiTransferError({
    code: SapiErrorCode.CHECKSUM_MISMATCH,
    message: `source changed during the upload: read ${sourceBytes} bytes, expected ${source.size}`,
    context: { ...context, source: source.description },
    retryable: false,
  });
}

/** Most bytes of idle part buffers kept for the next upload: a default upload's five 8 MiB parts, and some. */
const MAX_IDLE_PART_BYTES = 64 * 1024 * 1024;
/** Idle part buffers are dropped (left to the GC) this long after the last upload gave some back. */
const IDLE_PART_BUFFERS_MS = 30_000;

/**
 * Whole part buffers that finished uploads gave back, by part size, for the next upload. V8 counts every new
 * multi-MiB buffer as external memory: an upload that allocated its five 8 MiB part buffers afresh (the last upload's
 * ones garbage by then) made a worker with a 50 MB heap start marking for "external memory pressure", and the tight
 * old-generation limit that left made two more full mark-compacts follow within the same 256 MiB upload: ~0.4 CPU-s
 * of GC (helper threads included) on an upload of ~0.8. Reused buffers are not new external memory.
 */
const idlePartBuffers = new Map<number, Buffer[]>();
let idleBytes = 0;
let idleTimer: NodeJS.Timeout | undefined;

function takeIdlePartBuffer(size: number): Buffer | undefined {
  const buffer = idlePartBuffers.get(size)?.pop();
  if (buffer) idleBytes -= buffer.length;
  return buffer;
}

function keepIdlePartBuffers(buffers: Buffer[]): void {
  for (const buffer of buffers) {
    if (idleBytes + buffer.length > MAX_IDLE_PART_BYTES) break;
    const list = idlePartBuffers.get(buffer.length) ?? [];
    list.push(buffer);
    idlePartBuffers.set(buffer.length, list);
    idleBytes += buffer.length;
  }
  clearTimeout(idleTimer);
  idleTimer = setTimeout(dropIdlePartBuffers, IDLE_PART_BUFFERS_MS);
  idleTimer.unref();
}

/** Lets the idle part buffers go (tests; also what the idle timer does). Returns the bytes they held. */
export function dropIdlePartBuffers(): number {
  const dropped = idleBytes;
  idlePartBuffers.clear();
  idleBytes = 0;
  clearTimeout(idleTimer);
  idleTimer = undefined;
  return dropped;
}

/** Bytes of idle part buffers kept for the next upload. */
export function idlePartBufferBytes(): number {
  return idleBytes;
}

/**
 * Part buffers for reuse. A multi-MiB part buffer lives longer than a young-generation GC, so without reuse every part
 * waits for a full GC to be freed and the process's RSS drifts with GC timing; with it, the upload holds exactly the
 * buffers it needs: (concurrency + 1) × part size. Whole part buffers come from the idle ones of earlier uploads
 * first, and go back there at {@link PartBufferPool.retire} (see `idlePartBuffers`).
 */
export class PartBufferPool {
  private readonly free: Buffer[] = [];
  /** Buffers allocated so far (the pool's high-water mark). */
  allocated = 0;

  /**
   * `expectedBytes`: what the source should hold (from the start offset), when known. A source smaller than a part
   * gets a buffer of its size (+1 byte, to see its end in the same read) instead of a whole part: V8 counts each
   * buffer's full size as external memory, and an 8 MiB buffer per 50 KB import made the worker run a full
   * mark-compact every few imports (a third of its CPU with 200 small imports at once).
   */
  constructor(
    readonly partSize: number,
    private expectedBytes?: number,
  ) {}

  /** A buffer of `partSize` bytes, reused when one was released, else new; the first one small for a small source. */
  acquire(): Buffer {
    const expected = this.expectedBytes;
    this.expectedBytes = undefined; // only the first part's buffer: a source that grew goes on in whole parts
    if (expected !== undefined && expected + 1 < this.partSize) {
      this.allocated++;
      return Buffer.allocUnsafe(expected + 1);
    }
    const reused = this.free.pop() ?? takeIdlePartBuffer(this.partSize);
    if (reused) return reused;
    this.allocated++;
    return Buffer.allocUnsafe(this.partSize);
  }

  /** `buf` (smaller than a part, its first `filled` bytes read) moved into a whole part's buffer: the source grew. */
  grow(buf: Buffer, filled: number): Buffer {
    const whole = this.acquire();
    buf.copy(whole, 0, 0, filled);
    return whole;
  }

  /**
   * Gives a part's buffer back once nothing reads it any more: a whole part's, or the whole buffer under a short last
   * part (a view of its start). A source's small first buffer is simply dropped.
   */
  release(part: Buffer): void {
    const whole = this.wholeBufferOf(part);
    if (!whole || this.free.some((b) => b.buffer === whole.buffer && b.byteOffset === whole.byteOffset)) return;
    this.free.push(whole);
  }

  /** The whole part buffer `part` is (or starts), or undefined for a smaller buffer of its own. */
  private wholeBufferOf(part: Buffer): Buffer | undefined {
    if (part.length === this.partSize) return part;
    const startsWholeBuffer = part.byteOffset === 0 && part.buffer.byteLength === this.partSize;
    return startsWholeBuffer ? Buffer.from(part.buffer, 0, this.partSize) : undefined;
  }

  /**
   * The upload is over: its released buffers go to the idle ones for the next upload. Only released buffers: a part
   * whose send failed may still be referenced by its request, and is left to the GC.
   */
  retire(): void {
    keepIdlePartBuffers(this.free.splice(0));
  }
}

/**
 * Cuts a byte stream into buffers of exactly `partSize` (the last one shorter). Yields one empty buffer for an
 * empty stream. Each yielded buffer is the consumer's until it hands it back to `pool` (when one is given), so a
 * consumer may keep it while the next one fills.
 */
export async function* chunkParts(
  input: AsyncIterable<Buffer | Uint8Array>,
  partSize: number,
  pool: PartBufferPool = new PartBufferPool(partSize),
): AsyncGenerator<Buffer> {
  let buf = pool.acquire();
  let filled = 0;
  let yielded = 0;
  for await (const c of input) {
    const chunk = Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
    let off = 0;
    while (off < chunk.length) {
      if (filled === buf.length) buf = pool.grow(buf, filled); // a small first buffer, and the stream goes on
      const n = Math.min(buf.length - filled, chunk.length - off);
      chunk.copy(buf, filled, off, off + n);
      filled += n;
      off += n;
      if (filled === partSize) {
        yielded++;
        yield buf;
        buf = pool.acquire();
        filled = 0;
      }
    }
  }
  if (filled > 0 || yielded === 0) yield buf.subarray(0, filled);
  else pool.release(buf); // the stream ended on a part boundary: the buffer taken for the next part was never used
}
