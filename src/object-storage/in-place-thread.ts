/**
 * The worker threads of a sliced download written in place (`downloadInPlace` in `download.ts`): one sends plain
 * HTTP GETs of the slices (presigned S3 URLs, Azure SAS URLs, GCS media URLs with a bearer token) and streams each
 * into `<destination>.partial` at its offset; the other reads the finished slices back in manifest order (page
 * cache) and computes the file's sha256 meanwhile, so transfer and hashing use two cores.
 *
 * Why threads: in the worker's main thread every chunk of a transfer pays for the Temporal worker's context (its
 * async-context hooks on every callback and promise, GCs over a heap of ~100 MB holding the workflow bundle and
 * the SDK), which made a localhost download several times slower than the same code in a bare process. This module
 * loads only Node's built-ins and undici, so a thread starts in a few tens of milliseconds. The GETs go through
 * undici, like every other HTTP request of the worker (the proxy of `HTTP_PROXY`/`HTTPS_PROXY` included).
 *
 * Protocol: `workerData` is `{ role: 'fetch' | 'hash' }`; a thread runs one `{ type: 'job' }` after another. The
 * parent may post `{ type: 'abort' }` to the fetching thread, which posts {@link InPlaceMessage}s (`size` when an
 * answer says a slice's size, `slice` per finished slice with its place, then `done` or `failed`); the parent relays
 * each `slice` to the hashing thread and, after `done`, posts it `{ type: 'end' }`, and the hashing thread answers
 * `hashed` or `failed`. After a job both threads wait, idle, for the next one ({@link DOWNLOAD_THREAD_IDLE_MS}; the
 * two of them cost ~140 ms of CPU to start, a sixth of a 256 MiB download's); after a failure the parent terminates
 * them (no write or read of the failed job lands after that).
 */
import { closeSync, openSync, writevSync } from 'node:fs';
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads';
import type * as Undici from 'undici';
import { type Dispatcher } from 'undici';
import { threadStarter } from '../threads';
import { forEachBounded } from './concurrency';
import { createSliceHasher, type HashJob, SliceLayout, type SlicePlace } from './slice-layout';

export { SliceLayout, type SlicePlace } from './slice-layout';

/** One slice as a plain GET. */
interface SliceGet {
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
type InPlaceFailure =
  | { kind: 'http'; index: number; status: number; body: string; errorCode?: string }
  // written: bytes of the slice received before it failed (an unfinished slice is fetched again whole)
  | { kind: 'network' | 'size'; index: number; message: string; written: number; retryable?: false }
  | { kind: 'expired'; index: number }
  | { kind: 'aborted' }
  | { kind: 'internal'; message: string; stack?: string };

/** What the fetching thread tells: a slice's size as soon as its answer says it, each finished slice and where it lies. */
type InPlaceMessage =
  | { type: 'size'; index: number; size: number }
  | ({ type: 'slice'; index: number } & SlicePlace)
  | { type: 'done' }
  | { type: 'failed'; failure: InPlaceFailure };

/** What the fetching half reports as it goes. */
interface InPlaceEvents {
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
const DOWNLOAD_THREAD_IDLE_MS = 60_000;

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
let threadJobs = 0;

/** Pairs of download threads started by this process so far (tests: are idle pairs reused?). */
export function downloadThreadPairsStarted(): number {
  return pairsStarted;
}

/** Jobs posted to download threads by this process so far (tests: did a download use threads?). */
export function downloadThreadJobs(): number {
  return threadJobs;
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
 * Downloads of at most this many bytes (the file detail's `sizeBytes`) run in the calling thread: starting the two
 * threads costs ~140 ms of CPU, more than such a download takes in the worker's main thread, and an idle pair holds
 * ~10 MB for {@link DOWNLOAD_THREAD_IDLE_MS} (an idle worker that only moved small files kept it).
 */
export const IN_THREAD_DOWNLOAD_BYTES = 8 * 1024 * 1024;

/**
 * A fetching thread and a hashing thread (two cores: the transfer and the hashing overlap), idle ones of an earlier
 * download or new ones that load while the caller prepares the job, until {@link InPlaceRunner.run} posts it. From the
 * TypeScript sources (tests, `ts-register`) the threads load this file through the repository's
 * `scripts/ts-register.js`; without it, or for a download known to be small (`expectedBytes` ≤
 * {@link IN_THREAD_DOWNLOAD_BYTES}), the job runs in this thread.
 */
export function inPlaceRunner(expectedBytes?: number): InPlaceRunner {
  const small = expectedBytes !== undefined && expectedBytes <= IN_THREAD_DOWNLOAD_BYTES;
  const entry = small ? undefined : threadEntry();
  if (!entry) return { run: runHere, close: async () => undefined };
  const pair = takePair(entry);
  let ran = false;
  let released: Promise<void> | undefined;
  return {
    async run(job, headerBytes, events, signal) {
      if (ran) throw new Error('an in-place runner runs one job');
      ran = true;
      threadJobs++;
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
    await runInPlaceJob(
      job,
      { size: events.size, slice: (index, place) => (events.slice(index, place), local.add(index, place)) },
      signal ?? new AbortController().signal,
    );
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
  const EnvHttpProxyAgent = envHttpProxyAgent();
  // the proxy of HTTP_PROXY / HTTPS_PROXY (NO_PROXY excepted) when set, else direct connections
  const dispatcher = new EnvHttpProxyAgent({ connections: job.concurrency });
  // one descriptor for every slice: the chunks are written at their place as they arrive (see fetchAt)
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
        const place = await fetchAt({ dispatcher, fd, layout, events, signal }, slice, index);
        events.slice(index, place);
      } catch (err) {
        layout.abandon(err); // the slices after it would wait for its size forever
        throw err;
      }
    });
  } finally {
    signal.removeEventListener('abort', onAbort);
    await dispatcher.destroy();
    closeSync(fd); // every write was synchronous: none lands after this
  }
}

/** undici's module of {@link envHttpProxyAgent}, within the pinned `undici` package (it has no `exports` map). */
export const ENV_HTTP_PROXY_AGENT_MODULE = 'undici/lib/dispatcher/env-http-proxy-agent.js';

/**
 * undici's `EnvHttpProxyAgent`, loaded by the fetching thread only, and alone: its module and the agents it needs
 * (~1.5 MB of the thread's heap) instead of the whole of `undici` (~4.4 MB: fetch, WebSocket, caches…). With the
 * whole package, the thread's ~8 MB heap made V8 answer the external memory of the socket reads (a new 64 KiB buffer
 * each) with a full mark-compact every ~30 MB received, ~9 per 256 MiB; with the lean heap a cheap scavenge
 * frees them (CPU per GB of the download thread and its hasher in a bare process: ~1.8 → ~1.3 s). The whole package
 * is the fallback if a later undici moves the module (a unit test checks it is undici's very class).
 */
export function envHttpProxyAgent(): typeof Undici.EnvHttpProxyAgent {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(ENV_HTTP_PROXY_AGENT_MODULE) as typeof Undici.EnvHttpProxyAgent;
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('undici') as typeof Undici).EnvHttpProxyAgent;
  }
}

/** What every slice of one job is fetched with: the connection pool, the file, the layout, the events, the abort. */
interface SliceFetch {
  dispatcher: Dispatcher;
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
/** Statuses of a redirect. */
const REDIRECTS = [301, 302, 303, 307, 308];
/** Bytes of an error answer's body kept (its message is cut to {@link ERROR_BODY_CHARS} characters). */
const ERROR_BODY_BYTES = 4 * ERROR_BODY_CHARS;

/**
 * GETs one slice into the file (`fd`) at its offset through undici (the proxy of `HTTP_PROXY` / `HTTPS_PROXY` /
 * `NO_PROXY` when set), its chunks written at their place with synchronous positional writes as they arrive, about
 * 1 MiB at a time (see {@link WRITE_BATCH_BYTES}): this thread does nothing else, so a write (to the page cache)
 * blocks nothing that waits. Its size is the answer's
 * `Content-Length` (which must match what an earlier attempt saw; without one, chunked, the size an earlier attempt
 * learned) and the body must have exactly that many bytes. Redirects are followed; any other answer than 200 is a
 * failure with its status and body excerpt.
 */
async function fetchAt(job: SliceFetch, slice: SliceGet, index: number): Promise<SlicePlace> {
  let url = new URL(slice.url);
  for (let redirects = 0; ; redirects++) {
    const answer = await getSlice(job, url, slice.headers, index, redirects < MAX_REDIRECTS);
    if ('place' in answer) return answer.place;
    url = new URL(answer.location, url);
  }
}

/**
 * One GET of a slice through `dispatcher.dispatch` with a handler of our own: the body's chunks come straight from
 * undici's parser to the file ({@link writeAllAt}), without a readable stream, its async iterator and a promise per chunk in
 * between (the download's CPU per GB: the stream's per-chunk objects kept the thread's small young generation
 * collecting). Resolves to the slice's place, or to the location of a redirect to follow (its body dropped).
 */
function getSlice(
  job: SliceFetch,
  url: URL,
  headers: Record<string, string>,
  index: number,
  followRedirect: boolean,
): Promise<{ place: SlicePlace } | { location: string }> {
  const { dispatcher, fd, layout, events, signal } = job;
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    /** What the answer's body is for: the slice's bytes, an error's excerpt, nothing (a redirect). */
    let mode: 'slice' | 'error' | 'drop' | undefined;
    let status = 0;
    let errorCode: string | undefined;
    let location = '';
    const excerpt: Buffer[] = [];
    let excerptBytes = 0;
    let size = 0;
    let offset: number | undefined;
    /** Chunks that came before the slice's offset was known (at most what one read brought: the answer is paused). */
    let pending: Buffer[] | undefined;
    /** Bytes of the slice received so far (the batch's included). */
    let written = 0;
    /** Received chunks not yet in the file, written together at the slice's offset + `flushed` ({@link flush}). */
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let flushed = 0;

    const finish = (outcome: { failure: unknown } | { value: { place: SlicePlace } | { location: string } }): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if ('failure' in outcome) reject(outcome.failure);
      else resolve(outcome.value);
    };
    /** Fails the slice and stops its answer (undici then reports the abort: ignored, the slice has settled). */
    const fail = (failure: unknown): void => {
      finish({ failure });
      if (controller && !controller.aborted) controller.abort(new Error('slice abandoned'));
    };
    function onAbort(): void {
      fail(new SliceFailure({ kind: 'aborted' }));
    }
    const write = (chunk: Buffer): void => {
      if (written + chunk.length > size) {
        throw new SliceFailure({
          kind: 'size',
          index,
          message: `slice is larger than its ${size} bytes: it changed while downloading`,
          written: written + chunk.length,
        });
      }
      batch.push(chunk);
      batchBytes += chunk.length;
      written += chunk.length;
      if (batchBytes >= WRITE_BATCH_BYTES || batch.length >= WRITE_BATCH_CHUNKS) flush();
    };
    /** Writes the batch at its place (one positional `writev`); before the slice is reported finished. */
    const flush = (): void => {
      if (batchBytes === 0) return;
      writeAllAt(fd, batch, offset! + flushed);
      flushed += batchBytes;
      batch = [];
      batchBytes = 0;
    };
    const httpFailure = (): SliceFailure =>
      new SliceFailure({ kind: 'http', index, status, body: Buffer.concat(excerpt).toString('utf8').slice(0, ERROR_BODY_CHARS), errorCode });
    const failWriting = (err: unknown): void =>
      fail(err instanceof SliceFailure ? err : new SliceFailure({ kind: 'network', index, message: `download interrupted: ${messageOf(err)}`, written }));

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (settled) c.abort(new Error('slice abandoned'));
      },
      onResponseStart(c, statusCode, answerHeaders) {
        status = statusCode;
        const redirect = headerOf(answerHeaders, 'location');
        if (REDIRECTS.includes(statusCode) && redirect && followRedirect) {
          mode = 'drop';
          location = redirect;
          return;
        }
        if (statusCode !== 200) {
          mode = 'error';
          errorCode = headerOf(answerHeaders, 'x-ms-error-code');
          return;
        }
        mode = 'slice';
        try {
          const header = headerOf(answerHeaders, 'content-length');
          const declared = header === undefined || !/^\d+$/.test(header) ? undefined : Number(header);
          if (declared === undefined && layout.size(index) === undefined) {
            throw new SliceFailure({
              kind: 'size',
              index,
              message: 'the store did not say the size of the slice (no Content-Length in its answer)',
              written: 0,
            });
          }
          size = declared === undefined ? layout.size(index)! : checkedSize(declared, index, layout.size(index));
          if (layout.size(index) === undefined) {
            layout.setSize(index, size);
            events.size(index, size);
          }
        } catch (err) {
          fail(err);
          return;
        }
        offset = layout.placeOf(index)?.offset;
        if (offset !== undefined) return;
        // the slices before it have no size yet: the body waits (paused) until their answers tell
        pending = [];
        c.pause();
        layout.offsetOf(index).then(
          (at) => {
            if (settled) return;
            offset = at;
            try {
              for (const chunk of pending!) write(chunk);
            } catch (err) {
              failWriting(err);
              return;
            }
            pending = undefined;
            c.resume();
          },
          (err: unknown) => fail(err),
        );
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        if (mode === 'slice') {
          if (pending) pending.push(chunk);
          else {
            try {
              write(chunk);
            } catch (err) {
              failWriting(err);
            }
          }
        } else if (mode === 'error') {
          excerpt.push(chunk.subarray(0, ERROR_BODY_BYTES - excerptBytes));
          excerptBytes += chunk.length;
          if (excerptBytes >= ERROR_BODY_BYTES) fail(httpFailure()); // the rest is not read
        }
      },
      onResponseEnd() {
        if (settled) return;
        if (mode === 'drop') finish({ value: { location } });
        else if (mode === 'error') finish({ failure: httpFailure() });
        else if (pending) {
          // ended while it waited for its offset: written once the offset is known
          const rest = pending;
          pending = undefined;
          layout.offsetOf(index).then(
            (at) => {
              offset = at;
              try {
                for (const chunk of rest) write(chunk);
              } catch (err) {
                failWriting(err);
                return;
              }
              endOfSlice();
            },
            (err: unknown) => fail(err),
          );
        } else endOfSlice();
      },
      onResponseError(_c, err) {
        if (signal.aborted) fail(new SliceFailure({ kind: 'aborted' }));
        else if (mode === 'error')
          finish({ failure: httpFailure() }); // the excerpt is what arrived
        else if (mode === undefined) fail(new SliceFailure({ kind: 'network', index, message: messageOf(err), written: 0 }));
        else fail(new SliceFailure({ kind: 'network', index, message: `download interrupted: ${messageOf(err)}`, written }));
      },
    };
    const endOfSlice = (): void => {
      if (written !== size) {
        finish({ failure: new SliceFailure({ kind: 'size', index, message: `download ended early: ${written} of ${size} bytes`, written }) });
        return;
      }
      try {
        flush();
      } catch (err) {
        failWriting(err);
        return;
      }
      finish({ value: { place: { offset: offset!, size } } });
    };

    if (signal.aborted) {
      finish({ failure: new SliceFailure({ kind: 'aborted' }) });
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      dispatcher.dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'GET',
          headers,
          headersTimeout: HEADERS_TIMEOUT_MS,
          bodyTimeout: IDLE_TIMEOUT_MS,
        },
        handler,
      );
    } catch (err) {
      fail(new SliceFailure({ kind: 'network', index, message: messageOf(err), written: 0 }));
    }
  });
}

/**
 * Received chunks of a slice are written this many bytes at a time (one `writev` of the chunks as undici gave them,
 * no copy): a 64 KiB socket read each (16 KiB over TLS) cost a system call each.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** …or this many chunks at a time (well under the system's IOV_MAX of 1024). */
const WRITE_BATCH_CHUNKS = 64;

/** Writes every byte of `chunks` at `position` of `fd`: positional `writev`s, again from where a short one stopped. */
export function writeAllAt(fd: number, chunks: readonly Buffer[], position: number): void {
  let rest = chunks;
  let at = position;
  while (rest.length > 0) {
    let n = writevSync(fd, rest as Buffer[], at);
    if (n === 0) throw new Error(`nothing was written at ${at}`);
    at += n;
    let i = 0;
    for (; i < rest.length && n >= rest[i]!.length; i++) n -= rest[i]!.length;
    rest = i < rest.length && n > 0 ? [rest[i]!.subarray(n), ...rest.slice(i + 1)] : rest.slice(i);
  }
}

/** A header's value (repeated ones joined), undefined when absent. */
function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The size an answer declares, checked against the size an earlier attempt saw. */
function checkedSize(declared: number, index: number, known: number | undefined): number {
  if (known !== undefined && declared !== known) {
    // the earlier attempt's slices are in the file at places computed from its sizes: a retry would fail the same way
    throw new SliceFailure({
      kind: 'size',
      index,
      message: `slice has ${declared} bytes where an earlier attempt saw ${known}: the stored file changed`,
      written: 0,
      retryable: false,
    });
  }
  return declared;
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
  const events: InPlaceEvents = {
    size: (index, size) => post({ type: 'size', index, size }),
    slice: (index, place) => post({ type: 'slice', index, ...place }),
  };
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
