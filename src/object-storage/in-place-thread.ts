/**
 * The worker threads of a sliced download written in place (`downloadInPlace` in `download.ts`): one sends plain
 * HTTP GETs of the slices (presigned S3 URLs, Azure SAS URLs, GCS media URLs with a bearer token) and streams each
 * into `<destination>.partial` at its offset; the other reads the finished slices back in manifest order (page
 * cache) and computes the file's sha256 meanwhile, so transfer and hashing use two cores.
 *
 * Why threads: in the worker's main thread every chunk of a transfer pays for the Temporal worker's context (its
 * async-context hooks on every callback and promise, GCs over a heap of ~100 MB holding the workflow bundle and
 * the SDK), which made a localhost download several times slower than the same code in a bare process. This module
 * loads only Node's built-ins, so a thread starts in a few tens of milliseconds. The GETs use `node:http(s)`: its
 * native parser hands the body out as slices of the socket's buffers, where undici's (WebAssembly) parser copies
 * every chunk out of its memory — measurably slower for large bodies on a fast link.
 *
 * Protocol: `workerData` is `{ inPlaceJob }` or `{ hashJob }`. The parent may post `{ type: 'abort' }` to the
 * fetching thread, which posts {@link InPlaceMessage}s (`slice` per finished slice, then `done` or `failed`) and
 * exits; it relays each `slice` to the hashing thread and, after `done`, posts it `{ type: 'end' }`, and the hashing
 * thread answers `hashed` or `failed` and exits (on a failure the parent terminates it).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import * as http from 'node:http';
import * as https from 'node:https';
import { forEachBounded } from './concurrency';

/** One slice as a plain GET. */
export interface SliceGet {
  url: string;
  headers: Record<string, string>;
  /** Where it goes in the destination, and how many bytes it must have. */
  offset: number;
  size: number;
}

export interface InPlaceJob {
  /** `<destination>.partial`, already `total` bytes long (header written). */
  partial: string;
  /** Every slice in manifest order. */
  slices: SliceGet[];
  /** Indexes already in `partial` (a previous attempt's): not fetched. */
  finished: number[];
  concurrency: number;
  /** No slice starts at or after this time (the read credentials expire). */
  notAfterMs?: number;
}

/** Why a thread stopped without its result. */
export type InPlaceFailure =
  | { kind: 'http'; index: number; status: number; body: string; errorCode?: string }
  | { kind: 'network' | 'size'; index: number; message: string; written: number }
  | { kind: 'expired'; index: number }
  | { kind: 'aborted' }
  | { kind: 'internal'; message: string; stack?: string };

export type InPlaceMessage = { type: 'slice'; index: number } | { type: 'done' } | { type: 'failed'; failure: InPlaceFailure };

/** Bytes of an error answer kept for the message. */
const ERROR_BODY_CHARS = 1000;

/** A failure of the thread, as data (it crosses the thread boundary); the caller maps it to a `SapiError`. */
export class SliceFailure extends Error {
  constructor(readonly failure: InPlaceFailure) {
    super(failure.kind);
  }
}

/** The hashing half: the slices' places in the file, hashed in manifest order as they are finished (see {@link hashJobOf}). */
interface HashJob {
  partial: string;
  /** Hashed first (the header line at offset 0). */
  headerBytes?: Uint8Array;
  slices: Array<{ offset: number; size: number }>;
  /** Finished before this attempt. */
  finished: number[];
}

/** Read buffer for hashing the written slices back (page cache). */
const READ_HIGH_WATER_MARK = 256 * 1024;

/**
 * The sha256 of a file being written slice by slice: {@link add} a finished slice, and every slice whose
 * predecessors are finished is read back (from the page cache) and hashed, in order; {@link result} resolves once
 * all are.
 */
function createSliceHasher(job: HashJob): { add(index: number): void; result(): Promise<string>; stop(): Promise<void> } {
  const hash = createHash('sha256');
  if (job.headerBytes) hash.update(job.headerBytes);
  const finished = new Set(job.finished);
  let hashed = 0;
  let stopped = false;
  let chain = Promise.resolve();
  const pump = (): void => {
    chain = chain.then(async () => {
      while (!stopped && hashed < job.slices.length && finished.has(hashed)) {
        const { offset, size } = job.slices[hashed]!;
        if (size > 0) for await (const chunk of createReadStream(job.partial, { start: offset, end: offset + size - 1, highWaterMark: READ_HIGH_WATER_MARK })) hash.update(chunk as Buffer);
        hashed++;
      }
    });
  };
  pump();
  return {
    add(index) {
      finished.add(index);
      pump();
    },
    async result() {
      await chain;
      if (hashed < job.slices.length) throw new Error(`only ${hashed} of ${job.slices.length} slices were finished`);
      return hash.digest('hex');
    },
    async stop() {
      stopped = true;
      await chain.catch(() => undefined);
    },
  };
}

/** What the hashing thread needs of a job: the file, the header line and where each slice lies. */
function hashJobOf(job: InPlaceJob, headerBytes?: Uint8Array): HashJob {
  return { partial: job.partial, headerBytes, slices: job.slices.map(({ offset, size }) => ({ offset, size })), finished: job.finished };
}

/**
 * Runs {@link runInPlaceJob} in a worker thread and a {@link createSliceHasher} of the same file (after
 * `headerBytes`) in another (two cores: the transfer and the hashing overlap); resolves to the sha256, rejects with
 * a {@link SliceFailure}. An abort of `signal` stops the requests and writes, and the promise settles only once
 * both threads have exited (no write or read lands after it). From the TypeScript sources (tests, `ts-register`)
 * the threads load this file through the repository's `scripts/ts-register.js`; without it both run in this thread.
 */
export async function runInThreads(job: InPlaceJob, headerBytes: Uint8Array | undefined, onSlice: (index: number) => void, signal?: AbortSignal): Promise<string> {
  const hash = hashJobOf(job, headerBytes);
  const entry = threadEntry();
  if (!entry) {
    const local = createSliceHasher(hash);
    try {
      await runInPlaceJob(job, (index) => (onSlice(index), local.add(index)), signal ?? new AbortController().signal);
    } catch (err) {
      await local.stop();
      throw err;
    }
    return local.result();
  }
  const fetcher = entry({ inPlaceJob: job });
  const hasher = entry({ hashJob: hash });
  const fetched = settle<void, InPlaceMessage>(fetcher, (m, done) => {
    if (m.type === 'slice') {
      onSlice(m.index);
      hasher.postMessage({ type: 'slice', index: m.index });
    } else if (m.type === 'done') done({ value: undefined });
    else done({ failure: m.failure });
  });
  const hashed = settle<string, { type: 'hashed'; sha256: string } | { type: 'failed'; failure: InPlaceFailure }>(hasher, (m, done) =>
    done(m.type === 'hashed' ? { value: m.sha256 } : { failure: m.failure }),
  );
  hashed.catch(() => undefined); // awaited below; a hashing thread that dies early is no unhandled rejection
  const abort = (): void => fetcher.postMessage({ type: 'abort' });
  signal?.addEventListener('abort', abort, { once: true });
  try {
    await fetched;
  } catch (err) {
    await hasher.terminate(); // it only reads: nothing to finish
    throw err;
  } finally {
    signal?.removeEventListener('abort', abort);
  }
  hasher.postMessage({ type: 'end' });
  return hashed;
}

/** The outcome a thread reports (through `onMessage`), once it has exited. */
function settle<T, M>(worker: Worker, onMessage: (m: M, done: (outcome: { value: T } | { failure: InPlaceFailure }) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let outcome: { value: T } | { failure: InPlaceFailure } | undefined;
    const done = (o: { value: T } | { failure: InPlaceFailure }): void => {
      outcome ??= o;
    };
    worker.on('message', (m: M) => onMessage(m, done));
    worker.on('error', (err) => done({ failure: { kind: 'internal', message: messageOf(err), stack: err.stack } }));
    worker.on('exit', (code) => {
      if (outcome && 'value' in outcome) resolve(outcome.value);
      else reject(new SliceFailure(outcome?.failure ?? { kind: 'internal', message: `a download thread exited with code ${code} without an answer` }));
    });
  });
}

/**
 * Heap limits of a download thread: its data is in buffers outside the heap, and a small young generation keeps
 * the thread's own memory small (the defaults would let each grow by tens of MB).
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 32 };

type StartThread = (data: { inPlaceJob: InPlaceJob } | { hashJob: HashJob }) => Worker;

/**
 * How to start a thread on this file: the compiled `.js` directly; the TypeScript sources (tests, `ts-register`)
 * through the repository's `scripts/ts-register.js` (no heap limits: the thread then holds the TypeScript
 * compiler); undefined when neither works (the caller runs the job in its own thread).
 */
function threadEntry(): StartThread | undefined {
  if (__filename.endsWith('.js')) return (data) => new Worker(__filename, { workerData: data, resourceLimits: THREAD_LIMITS });
  const register = join(__dirname, '..', '..', 'scripts', 'ts-register.js');
  if (!existsSync(register)) return undefined;
  return (data) => new Worker(`require(${JSON.stringify(register)}); require(${JSON.stringify(__filename)});`, { eval: true, workerData: data });
}

/** Downloads the job's slices in place; calls `onSlice` once a slice is fully written. */
export async function runInPlaceJob(job: InPlaceJob, onSlice: (index: number) => void, signal: AbortSignal): Promise<void> {
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: job.concurrency }), https: new https.Agent({ keepAlive: true, maxSockets: job.concurrency }) };
  const finished = new Set(job.finished);
  try {
    await forEachBounded(job.slices, job.concurrency, async (slice, index) => {
      if (finished.has(index)) return;
      if (signal.aborted) throw new SliceFailure({ kind: 'aborted' });
      if (job.notAfterMs !== undefined && Date.now() >= job.notAfterMs) throw new SliceFailure({ kind: 'expired', index });
      await fetchAt(agents, slice, index, job.partial, signal);
      finished.add(index);
      onSlice(index);
    });
  } finally {
    agents.http.destroy();
    agents.https.destroy();
  }
}

/** Redirects followed per slice (presigned URLs do not redirect; a proxy in front of the store might). */
const MAX_REDIRECTS = 5;
/** No answer headers within this: the request fails. */
const HEADERS_TIMEOUT_MS = 60_000;
/** No body bytes for this long: the request fails. */
const IDLE_TIMEOUT_MS = 300_000;

/**
 * GETs one slice into `path` at its offset, piped straight into the file; the answer must have exactly `size`
 * bytes. Redirects are followed; any other answer than 200 is a failure with its status and body excerpt.
 */
async function fetchAt(agents: { http: http.Agent; https: https.Agent }, slice: SliceGet, index: number, path: string, signal: AbortSignal): Promise<void> {
  let res: http.IncomingMessage;
  try {
    res = await get(agents, new URL(slice.url), slice.headers, signal);
  } catch (err) {
    if (signal.aborted) throw new SliceFailure({ kind: 'aborted' });
    throw err instanceof SliceFailure ? err : new SliceFailure({ kind: 'network', index, message: messageOf(err), written: 0 });
  }
  if (res.statusCode !== 200) {
    const body = await textOf(res).catch(() => '');
    const errorCode = res.headers['x-ms-error-code'];
    throw new SliceFailure({ kind: 'http', index, status: res.statusCode ?? 0, body: body.slice(0, ERROR_BODY_CHARS), errorCode: typeof errorCode === 'string' ? errorCode : undefined });
  }
  let written = 0;
  let oversized = false;
  res.on('data', (chunk: Buffer) => {
    written += chunk.length;
    if (written > slice.size && !oversized) {
      oversized = true;
      res.destroy(new SliceFailure({ kind: 'size', index, message: `slice is larger than its ${slice.size} bytes: it changed while downloading`, written }));
    }
  });
  try {
    await pipeline(res, createWriteStream(path, { flags: 'r+', start: slice.offset }), { signal });
  } catch (err) {
    if (signal.aborted) throw new SliceFailure({ kind: 'aborted' });
    if (err instanceof SliceFailure) throw err;
    throw new SliceFailure({ kind: 'network', index, message: `download interrupted: ${messageOf(err)}`, written });
  }
  if (written !== slice.size) throw new SliceFailure({ kind: 'size', index, message: `download ended early: ${written} of ${slice.size} bytes`, written });
}

/** The answer of a GET (redirects followed), its body not read yet. */
function get(agents: { http: http.Agent; https: https.Agent }, url: URL, headers: Record<string, string>, signal: AbortSignal, redirects = 0): Promise<http.IncomingMessage> {
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.get(url, { headers, agent: url.protocol === 'https:' ? agents.https : agents.http, signal, timeout: HEADERS_TIMEOUT_MS }, (res) => {
      const location = res.headers.location;
      if (res.statusCode !== undefined && [301, 302, 303, 307, 308].includes(res.statusCode) && location && redirects < MAX_REDIRECTS) {
        res.resume();
        get(agents, new URL(location, url), headers, signal, redirects + 1).then(resolve, reject);
        return;
      }
      req.setTimeout(IDLE_TIMEOUT_MS);
      resolve(res);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${HEADERS_TIMEOUT_MS} ms`)));
    req.on('error', reject);
  });
}

async function textOf(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function messageOf(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; cause?: { message?: unknown; code?: unknown } };
  const parts = [e?.code, e?.message, e?.cause?.code, e?.cause?.message].filter((p) => typeof p === 'string' && p !== '');
  return parts.length ? [...new Set(parts)].join(': ') : String(err);
}

// As a worker thread: run the job of `workerData` and report to the parent.
const data = isMainThread ? undefined : (workerData as { inPlaceJob?: InPlaceJob; hashJob?: HashJob } | undefined);
if (parentPort && data?.inPlaceJob) {
  const port = parentPort;
  const controller = new AbortController();
  port.on('message', (m: { type?: string }) => {
    if (m?.type === 'abort') controller.abort();
  });
  const post = (message: InPlaceMessage): void => port.postMessage(message);
  runInPlaceJob(data.inPlaceJob, (index) => post({ type: 'slice', index }), controller.signal)
    .then(() => post({ type: 'done' }))
    .catch((err: unknown) => post({ type: 'failed', failure: failureOf(err) }))
    .finally(() => port.unref());
} else if (parentPort && data?.hashJob) {
  const port = parentPort;
  const hasher = createSliceHasher(data.hashJob);
  port.on('message', (m: { type?: string; index?: number }) => {
    if (m?.type === 'slice' && typeof m.index === 'number') hasher.add(m.index);
    else if (m?.type === 'end') {
      hasher
        .result()
        .then((sha256) => port.postMessage({ type: 'hashed', sha256 }))
        .catch((err: unknown) => port.postMessage({ type: 'failed', failure: failureOf(err) }))
        .finally(() => port.unref());
    }
  });
}

function failureOf(err: unknown): InPlaceFailure {
  return err instanceof SliceFailure ? err.failure : { kind: 'internal', message: messageOf(err), stack: err instanceof Error ? err.stack : undefined };
}
