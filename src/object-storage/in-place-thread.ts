/**
 * The worker threads of a sliced download written in place (`downloadInPlace` in `download.ts`): one sends plain
 * HTTP GETs of the slices (presigned S3 URLs, Azure SAS URLs, GCS media URLs with a bearer token) and streams each
 * into `<destination>.partial` at its offset; the other reads the finished slices back in manifest order (page
 * cache) and computes the file's sha256 meanwhile, so transfer and hashing use two cores.
 *
 * Why threads: in the worker's main thread every chunk of a transfer pays for the Temporal worker's context (its
 * async-context hooks on every callback and promise, GCs over a heap of ~100 MB holding the workflow bundle and
 * the SDK), which made a localhost download several times slower than the same code in a bare process. This module
 * loads only Node's built-ins, so a thread starts in a few tens of milliseconds. The GETs are read off the socket
 * into one reused buffer (`raw-get.ts`): node:http's stream of ~64 KiB chunks cost several times the CPU on a fast
 * link, and undici's (WebAssembly) parser copies every chunk out of its memory; node:http remains for a chunked
 * 200 on a retry that knows the slice's size.
 *
 * Protocol: `workerData` is `{ role: 'fetch' | 'hash' }`; a thread runs one `{ type: 'job' }` after another. The
 * parent may post `{ type: 'abort' }` to the fetching thread, which posts {@link InPlaceMessage}s (`size` when an
 * answer says a slice's size, `slice` per finished slice with its place, then `done` or `failed`); the parent relays
 * each `slice` to the hashing thread and, after `done`, posts it `{ type: 'end' }`, and the hashing thread answers
 * `hashed` or `failed`. After a job both threads wait, idle, for the next one ({@link DOWNLOAD_THREAD_IDLE_MS}; the
 * two of them cost ~140 ms of CPU to start, a sixth of a 256 MiB download's); after a failure the parent terminates
 * them (no write or read of the failed job lands after that).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads';
import * as http from 'node:http';
import * as https from 'node:https';
import { threadStarter } from '../threads';
import { forEachBounded } from './concurrency';
import { dechunk, type RawBodySink, rawGet, type RawGetResult } from './raw-get';
import { createSliceHasher, type HashJob, SliceLayout, type SlicePlace } from './slice-layout';

export { SliceLayout, type SlicePlace } from './slice-layout';

/** One slice as a plain GET. */
export interface SliceGet {
  url: string;
  headers: Record<string, string>;
}

export interface InPlaceJob {
  /** `<destination>.partial`, the header line already written. */
  partial: string;
  /** Where the first slice goes (after the header line). */
  start: number;
  /** Every slice in manifest order (the finished ones are not fetched). */
  slices: SliceGet[];
  /** Slice sizes an earlier attempt learned (every finished slice's and its predecessors'), by index; null: unknown. */
  sizes: Array<number | null>;
  /** Indexes already in `partial` (a previous attempt's): not fetched. */
  finished: number[];
  concurrency: number;
  /** No slice starts at or after this time (the read credentials expire). */
  notAfterMs?: number;
}

/** Why a thread stopped without its result. */
export type InPlaceFailure =
  | { kind: 'http'; index: number; status: number; body: string; errorCode?: string }
  | { kind: 'network' | 'size'; index: number; message: string; written: number; retryable?: false }
  | { kind: 'expired'; index: number }
  | { kind: 'aborted' }
  | { kind: 'internal'; message: string; stack?: string };

/** What the fetching thread tells: a slice's size as soon as its answer says it, each finished slice and where it lies. */
export type InPlaceMessage =
  | { type: 'size'; index: number; size: number }
  | ({ type: 'slice'; index: number } & SlicePlace)
  | { type: 'done' }
  | { type: 'failed'; failure: InPlaceFailure };

/** What the fetching half reports as it goes. */
export interface InPlaceEvents {
  size(index: number, size: number): void;
  slice(index: number, place: SlicePlace): void;
}

/** Bytes of an error answer kept for the message. */
const ERROR_BODY_CHARS = 1000;

/** A failure of the thread, as data (it crosses the thread boundary); the caller maps it to a `SapiError`. */
export class SliceFailure extends Error {
  constructor(readonly failure: InPlaceFailure) {
    super(failure.kind);
  }
}

/** What the hashing thread needs of a job: the file, the header line and where each slice lies. */
function hashJobOf(job: InPlaceJob, headerBytes?: Uint8Array): HashJob {
  const layout = new SliceLayout(job.start, job.sizes, job.slices.length);
  const finished = new Set(job.finished);
  return { partial: job.partial, headerBytes, places: job.slices.map((_, i) => (finished.has(i) ? (layout.placeOf(i) ?? null) : null)) };
}

/** Runs in-place jobs; made before the job is known so that its threads load while the caller prepares it. */
export interface InPlaceRunner {
  /**
   * Runs {@link runInPlaceJob} and a {@link createSliceHasher} of the same file (after `headerBytes`); resolves to
   * the sha256, rejects with a {@link SliceFailure}. An abort of `signal` stops the requests and writes, and the
   * promise settles only once both threads have exited (no write or read lands after it). Once only.
   */
  run(job: InPlaceJob, headerBytes: Uint8Array | undefined, events: InPlaceEvents, signal?: AbortSignal): Promise<string>;
  /** Stops threads still waiting for a job (the caller failed before {@link run}); call it in any case. */
  close(): Promise<void>;
}

/** A pair of threads idle this long (ms) after its last job is stopped: an idle worker keeps no download threads. */
export const DOWNLOAD_THREAD_IDLE_MS = 60_000;

/** A fetching and a hashing thread, and the handlers of the job they run (none while idle). */
interface ThreadPair {
  fetcher: Worker;
  hasher: Worker;
  onFetcher?: (m: InPlaceMessage) => void;
  onHasher?: (m: { type: 'hashed'; sha256: string } | { type: 'failed'; failure: InPlaceFailure }) => void;
  /** A thread failed or exited: the job fails with this. */
  onBroken?: (failure: InPlaceFailure) => void;
  broken?: boolean;
  idle?: NodeJS.Timeout;
}

/** Pairs waiting for a job, the most recently used last; at most {@link MAX_IDLE_PAIRS}. */
const idlePairs: ThreadPair[] = [];
/** Idle pairs kept (downloads at once beyond it start threads of their own); each idle thread holds ~5–10 MB. */
const MAX_IDLE_PAIRS = 2;
let pairsStarted = 0;

/** Pairs of download threads started by this process so far (tests: are idle pairs reused?). */
export function downloadThreadPairsStarted(): number {
  return pairsStarted;
}

function startPair(entry: (role: ThreadRole) => Worker): ThreadPair {
  pairsStarted++;
  const pair: ThreadPair = { fetcher: entry('fetch'), hasher: entry('hash') };
  const broken = (failure: InPlaceFailure): void => {
    pair.broken = true;
    clearTimeout(pair.idle);
    const at = idlePairs.indexOf(pair);
    if (at !== -1) idlePairs.splice(at, 1);
    pair.onBroken?.(failure);
  };
  for (const [worker, listen] of [
    [pair.fetcher, (m: InPlaceMessage) => pair.onFetcher?.(m)],
    [pair.hasher, (m: Parameters<NonNullable<ThreadPair['onHasher']>>[0]) => pair.onHasher?.(m)],
  ] as const) {
    worker.on('message', listen as (m: unknown) => void);
    worker.on('error', (err) => broken({ kind: 'internal', message: messageOf(err), stack: err.stack }));
    worker.on('exit', (code) => broken({ kind: 'internal', message: `a download thread exited with code ${code} without an answer` }));
  }
  return pair;
}

function takePair(entry: (role: ThreadRole) => Worker): ThreadPair {
  const pair = idlePairs.pop();
  if (!pair) return startPair(entry);
  clearTimeout(pair.idle);
  pair.fetcher.ref();
  pair.hasher.ref();
  return pair;
}

/** Back to the idle pairs after a job that succeeded (or was never posted); stopped after {@link DOWNLOAD_THREAD_IDLE_MS}. */
function releasePair(pair: ThreadPair): Promise<void> {
  pair.onFetcher = pair.onHasher = pair.onBroken = undefined;
  if (pair.broken || idlePairs.length >= MAX_IDLE_PAIRS) return stopPair(pair);
  pair.fetcher.unref();
  pair.hasher.unref();
  pair.idle = setTimeout(() => {
    const at = idlePairs.indexOf(pair);
    if (at !== -1) idlePairs.splice(at, 1);
    void stopPair(pair);
  }, DOWNLOAD_THREAD_IDLE_MS);
  pair.idle.unref();
  idlePairs.push(pair);
  return Promise.resolve();
}

async function stopPair(pair: ThreadPair): Promise<void> {
  pair.broken = true;
  pair.onFetcher = pair.onHasher = pair.onBroken = undefined;
  await Promise.all([pair.fetcher.terminate(), pair.hasher.terminate()]);
}

/**
 * A fetching thread and a hashing thread (two cores: the transfer and the hashing overlap), idle ones of an earlier
 * download or new ones that load while the caller prepares the job, until {@link InPlaceRunner.run} posts it. From the
 * TypeScript sources (tests, `ts-register`) the threads load this file through the repository's
 * `scripts/ts-register.js`; without it the job runs in this thread.
 */
export function inPlaceRunner(): InPlaceRunner {
  const entry = threadEntry();
  if (!entry) return { run: runHere, close: async () => undefined };
  const pair = takePair(entry);
  let ran = false;
  let released: Promise<void> | undefined;
  return {
    async run(job, headerBytes, events, signal) {
      if (ran) throw new Error('an in-place runner runs one job');
      ran = true;
      if (pair.broken) throw new SliceFailure({ kind: 'internal', message: 'a download thread exited before its job' });
      const sha256 = new Promise<string>((resolve, reject) => {
        const fail = (failure: InPlaceFailure): void => reject(new SliceFailure(failure));
        pair.onBroken = fail;
        pair.onFetcher = (m) => {
          if (m.type === 'size') events.size(m.index, m.size);
          else if (m.type === 'slice') {
            const place = { offset: m.offset, size: m.size };
            events.slice(m.index, place);
            pair.hasher.postMessage({ type: 'slice', index: m.index, place });
          } else if (m.type === 'done') pair.hasher.postMessage({ type: 'end' });
          else fail(m.failure);
        };
        pair.onHasher = (m) => (m.type === 'hashed' ? resolve(m.sha256) : fail(m.failure));
      });
      pair.hasher.postMessage({ type: 'job', hashJob: hashJobOf(job, headerBytes) });
      pair.fetcher.postMessage({ type: 'job', inPlaceJob: job });
      const abort = (): void => pair.fetcher.postMessage({ type: 'abort' });
      if (signal?.aborted) abort();
      signal?.addEventListener('abort', abort, { once: true });
      try {
        const hash = await sha256;
        released = releasePair(pair);
        return hash;
      } catch (err) {
        released = stopPair(pair); // a failed job's threads may still write or read: stopped before this settles
        await released;
        throw err;
      } finally {
        signal?.removeEventListener('abort', abort);
      }
    },
    async close() {
      released ??= releasePair(pair); // unused (the caller failed before run): back to the idle pairs
      await released;
    },
  };
}

/** The job and its hashing in the calling thread (no thread entry). */
async function runHere(job: InPlaceJob, headerBytes: Uint8Array | undefined, events: InPlaceEvents, signal?: AbortSignal): Promise<string> {
  const local = createSliceHasher(hashJobOf(job, headerBytes));
  try {
    await runInPlaceJob(job, { size: events.size, slice: (index, place) => (events.slice(index, place), local.add(index, place)) }, signal ?? new AbortController().signal);
  } catch (err) {
    await local.stop();
    throw err;
  }
  return local.result();
}

/**
 * Heap limits of a download thread: its data is in buffers outside the heap, and a small young generation keeps
 * the thread's own memory small (the defaults would let each grow by tens of MB).
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 32 };

type ThreadRole = 'fetch' | 'hash';

/** Starts a download thread in `role` (see {@link threadStarter}); undefined: run the job in this thread. */
function threadEntry(): ((role: ThreadRole) => Worker) | undefined {
  const start = threadStarter(__filename);
  return start && ((role) => start({ role }, { resourceLimits: THREAD_LIMITS }));
}

/**
 * Downloads the job's slices in place, requested in manifest order, at most `concurrency` at a time; each slice's
 * size comes from its answer (or an earlier attempt) and its offset from the sizes before it ({@link SliceLayout}).
 */
export async function runInPlaceJob(job: InPlaceJob, events: InPlaceEvents, signal: AbortSignal): Promise<void> {
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: job.concurrency }), https: new https.Agent({ keepAlive: true, maxSockets: job.concurrency }) };
  // one descriptor for every slice: each chunk is written at its place as it arrives (see fetchAt)
  const fd = openSync(job.partial, 'r+');
  const finished = new Set(job.finished);
  const layout = new SliceLayout(job.start, job.sizes, job.slices.length);
  const onAbort = (): void => layout.abandon(new SliceFailure({ kind: 'aborted' }));
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await forEachBounded(job.slices, job.concurrency, async (slice, index) => {
      if (finished.has(index)) return;
      try {
        if (signal.aborted) throw new SliceFailure({ kind: 'aborted' });
        if (job.notAfterMs !== undefined && Date.now() >= job.notAfterMs) throw new SliceFailure({ kind: 'expired', index });
        const place = await fetchAt({ agents, fd, layout, events, signal }, slice, index);
        events.slice(index, place);
      } catch (err) {
        layout.abandon(err); // the slices after it would wait for its size forever
        throw err;
      }
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    agents.http.destroy();
    agents.https.destroy();
    closeSync(fd); // every write was synchronous: none lands after this
  }
}

/** What every slice of one job is fetched with: the fallback's agents, the file, the layout, the events, the abort. */
interface SliceFetch {
  agents: { http: http.Agent; https: https.Agent };
  fd: number;
  layout: SliceLayout;
  events: InPlaceEvents;
  signal: AbortSignal;
}

/** Redirects followed per slice (presigned URLs do not redirect; a proxy in front of the store might). */
const MAX_REDIRECTS = 5;
/** No answer headers within this: the request fails. */
const HEADERS_TIMEOUT_MS = 60_000;
/** No body bytes for this long: the request fails. */
const IDLE_TIMEOUT_MS = 300_000;

/**
 * GETs one slice into the file (`fd`) at its offset, read off the socket by {@link rawGet} (one reused 1 MiB buffer,
 * each read written at its place with a synchronous positional write). Its size is the answer's `Content-Length`
 * (which must match what an earlier attempt saw) and the body must have exactly that many bytes. Redirects are
 * followed; any other answer than 200 is a failure with its status and body excerpt; a 200 without `Content-Length`
 * fails unless an earlier attempt learned the slice's size, and is then asked again through node:http
 * ({@link fetchWithHttp}), which reads a chunked body.
 */
async function fetchAt(job: SliceFetch, slice: SliceGet, index: number): Promise<SlicePlace> {
  const { fd, layout, events, signal } = job;
  let url = new URL(slice.url);
  for (let redirects = 0; ; redirects++) {
    let place: SlicePlace | undefined;
    let redirect: string | undefined;
    let failure: SliceFailure | undefined;
    let written = 0;
    let size = 0;
    const errorBody: Buffer[] = [];
    let result: RawGetResult;
    try {
      result = await rawGet(url, slice.headers, {
        signal,
        headersTimeoutMs: HEADERS_TIMEOUT_MS,
        idleTimeoutMs: IDLE_TIMEOUT_MS,
        onHead: async (head): Promise<RawBodySink | undefined> => {
          const location = head.headers.location;
          if (REDIRECTS.includes(head.status) && location && redirects < MAX_REDIRECTS) {
            redirect = location;
            return undefined;
          }
          if (head.status !== 200) {
            let kept = 0;
            return (chunk) => {
              if (kept < ERROR_BODY_BYTES) errorBody.push(Buffer.from(chunk.subarray(0, ERROR_BODY_BYTES - kept)));
              kept += chunk.length;
            };
          }
          if (head.contentLength === undefined) {
            // a size an earlier attempt learned lets node:http read such a body (chunked framing); none: a failure
            if (layout.size(index) !== undefined) return undefined;
            throw new SliceFailure({ kind: 'size', index, message: 'the store did not say the size of the slice (no Content-Length in its answer)', written: 0 });
          }
          size = checkedSize(head.contentLength, index, layout.size(index));
          if (layout.size(index) === undefined) {
            layout.setSize(index, size);
            events.size(index, size);
          }
          const offset = await layout.offsetOf(index);
          place = { offset, size };
          return (chunk) => {
            if (written + chunk.length > size) {
              failure = new SliceFailure({ kind: 'size', index, message: `slice is larger than its ${size} bytes: it changed while downloading`, written: written + chunk.length });
              throw failure;
            }
            for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at, chunk.length - at, offset + written + at);
            written += chunk.length;
          };
        },
      });
    } catch (err) {
      if (signal.aborted) throw new SliceFailure({ kind: 'aborted' });
      if (failure) throw failure;
      if (err instanceof SliceFailure) throw err;
      throw new SliceFailure({ kind: 'network', index, message: place ? `download interrupted: ${messageOf(err)}` : messageOf(err), written });
    }
    if (redirect !== undefined) {
      url = new URL(redirect, url);
      continue;
    }
    const { head } = result;
    if (!result.bodyRead) return fetchWithHttp(job, { url: url.href, headers: slice.headers }, index);
    if (head.status !== 200) {
      const errorCode = head.headers['x-ms-error-code'];
      const bytes = Buffer.concat(errorBody);
      const text = (/chunked/i.test(head.headers['transfer-encoding'] ?? '') ? dechunk(bytes) : bytes).toString('utf8');
      throw new SliceFailure({ kind: 'http', index, status: head.status, body: text.slice(0, ERROR_BODY_CHARS), errorCode });
    }
    if (written !== size) throw new SliceFailure({ kind: 'size', index, message: `download ended early: ${written} of ${size} bytes`, written });
    return place!;
  }
}

/** Statuses of a redirect. */
const REDIRECTS = [301, 302, 303, 307, 308];
/** Bytes of an error answer's body kept (its message is cut to {@link ERROR_BODY_CHARS} characters). */
const ERROR_BODY_BYTES = 4 * ERROR_BODY_CHARS;

/**
 * {@link fetchAt} through node:http, for the answers {@link rawGet} does not read: each chunk of the answer is
 * written at its place with a synchronous positional write as it arrives. This thread does nothing else, so a write
 * (to the page cache) blocks nothing that waits; a write stream would hand every chunk to libuv's thread pool and
 * back, two thread switches a chunk, which on a busy machine cost more than the write. Size, redirects and failures
 * as in {@link fetchAt}.
 */
async function fetchWithHttp(job: SliceFetch, slice: SliceGet, index: number): Promise<SlicePlace> {
  const { agents, fd, layout, events, signal } = job;
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
  let size: number;
  let offset: number;
  try {
    size = sizeOf(res, index, layout.size(index));
    if (layout.size(index) === undefined) {
      layout.setSize(index, size);
      events.size(index, size);
    }
    offset = await layout.offsetOf(index);
  } catch (err) {
    res.destroy();
    throw err;
  }
  let written = 0;
  let onAbort: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (err: unknown) => {
        res.destroy();
        reject(err);
      };
      res.on('data', (chunk: Buffer) => {
        if (written + chunk.length > size) {
          fail(new SliceFailure({ kind: 'size', index, message: `slice is larger than its ${size} bytes: it changed while downloading`, written: written + chunk.length }));
          return;
        }
        try {
          for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at, chunk.length - at, offset + written + at);
        } catch (err) {
          fail(err);
          return;
        }
        written += chunk.length;
      });
      res.once('end', resolve);
      res.once('error', fail);
      res.once('close', () => reject(new Error(res.complete ? 'closed' : 'the connection closed before the end of the answer')));
      onAbort = () => fail(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  } catch (err) {
    if (signal.aborted) throw new SliceFailure({ kind: 'aborted' });
    if (err instanceof SliceFailure) throw err;
    throw new SliceFailure({ kind: 'network', index, message: `download interrupted: ${messageOf(err)}`, written });
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
  if (written !== size) throw new SliceFailure({ kind: 'size', index, message: `download ended early: ${written} of ${size} bytes`, written });
  return { offset, size };
}

/** A slice's size: its answer's `Content-Length`, which must agree with the size an earlier attempt saw. */
function sizeOf(res: http.IncomingMessage, index: number, known: number | undefined): number {
  const header = res.headers['content-length'];
  const declared = header === undefined || !/^\d+$/.test(header) ? undefined : Number(header);
  if (declared === undefined) {
    if (known !== undefined) return known;
    throw new SliceFailure({ kind: 'size', index, message: 'the store did not say the size of the slice (no Content-Length in its answer)', written: 0 });
  }
  return checkedSize(declared, index, known);
}

/** The size an answer declares, checked against the size an earlier attempt saw. */
function checkedSize(declared: number, index: number, known: number | undefined): number {
  if (known !== undefined && declared !== known) {
    // the earlier attempt's slices are in the file at places computed from its sizes: a retry would fail the same way
    throw new SliceFailure({ kind: 'size', index, message: `slice has ${declared} bytes where an earlier attempt saw ${known}: the stored file changed`, written: 0, retryable: false });
  }
  return declared;
}

/** The answer of a GET (redirects followed), its body not read yet. */
function get(agents: { http: http.Agent; https: https.Agent }, url: URL, headers: Record<string, string>, signal: AbortSignal, redirects = 0): Promise<http.IncomingMessage> {
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.get(url, { headers, agent: url.protocol === 'https:' ? agents.https : agents.http, signal, timeout: HEADERS_TIMEOUT_MS }, (res) => {
      const location = res.headers.location;
      if (res.statusCode !== undefined && REDIRECTS.includes(res.statusCode) && location && redirects < MAX_REDIRECTS) {
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

// As a worker thread (`workerData.role`): run each job posted and report to the parent.
const role = isMainThread ? undefined : (workerData as { role?: ThreadRole } | undefined)?.role;
if (parentPort && role === 'fetch') {
  const port = parentPort;
  let controller = new AbortController();
  const post = (message: InPlaceMessage): void => port.postMessage(message);
  const events: InPlaceEvents = { size: (index, size) => post({ type: 'size', index, size }), slice: (index, place) => post({ type: 'slice', index, ...place }) };
  port.on('message', (m: { type?: string; inPlaceJob?: InPlaceJob }) => {
    if (m?.type === 'abort') controller.abort();
    else if (m?.type === 'job' && m.inPlaceJob) {
      controller = new AbortController();
      runInPlaceJob(m.inPlaceJob, events, controller.signal)
        .then(() => post({ type: 'done' }))
        .catch((err: unknown) => post({ type: 'failed', failure: failureOf(err) }));
    }
  });
} else if (parentPort && role === 'hash') {
  const port = parentPort;
  let hasher: ReturnType<typeof createSliceHasher> | undefined;
  port.on('message', (m: { type?: string; hashJob?: HashJob; index?: number; place?: SlicePlace }) => {
    if (m?.type === 'job' && m.hashJob) hasher = createSliceHasher(m.hashJob);
    else if (m?.type === 'slice' && typeof m.index === 'number' && m.place) hasher?.add(m.index, m.place);
    else if (m?.type === 'end' && hasher) {
      hasher
        .result()
        .then((sha256) => port.postMessage({ type: 'hashed', sha256 }))
        .catch((err: unknown) => port.postMessage({ type: 'failed', failure: failureOf(err) }));
      hasher = undefined;
    }
  });
}

function failureOf(err: unknown): InPlaceFailure {
  return err instanceof SliceFailure ? err.failure : { kind: 'internal', message: messageOf(err), stack: err instanceof Error ? err.stack : undefined };
}
