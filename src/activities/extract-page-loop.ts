/**
 * The page loop of `fetchPages` in a thread of its own: send the request (secrets filled, authentication applied),
 * read the page (`readPage`), the secret-echo check, `nextStep`, the rows as JSON lines, page after page; the
 * activity (main thread) stages the lines, keeps the resume point and heartbeats. NOT workflow-safe.
 *
 * Why a thread: on the activity's thread every page paid for the Temporal worker around it (its heap to collect,
 * its async machinery, its core's callbacks), and batch extraction ran at 0.87–0.92× the plain loop. In its own
 * thread the loop runs as the plain loop does; and it sends a page's successor before it flattens the page's rows,
 * so the API answers while the rows are written.
 *
 * One thread per process, shared by every running `fetchPages` (each loop has an id), stopped a minute after the
 * last loop ended ({@link THREAD_IDLE_MS}); it holds the process only while loops run. Login sessions live in it.
 * `${env:NAME}` references are filled from the variables the activity passes (those with the secret prefix, read
 * where the activity runs). Without a thread entry (TypeScript sources without `scripts/ts-register.js`) the loop
 * runs in the calling thread, the same code.
 *
 * Flow control: the loop requests page `n` only once the activity has taken page `n - 1 - ahead` (`ack`): `ahead` 0
 * is page checkpoints (a page is staged before the next one is requested); batches read ahead, and wait when the
 * staging falls behind. Pages are reported in batches (one message, one copy of the scroller state).
 */
import { isMainThread, parentPort, workerData, type Worker } from 'node:worker_threads';
import { toApplicationFailure } from '../errors';
import { ApplicationFailure } from '@temporalio/common';
import { ExtractRateLimitedError } from '../extractor/errors';
import type { FetchPageOptions, FetchPageResult } from '../extractor/http/fetch-page';
import { nodeCryptoFunctions } from '../extractor/http/node-functions';
import { sendRequest, type RequestAuth } from '../extractor/http/send-request';
import { readPage, type RunContext } from '../extractor/page';
import { nextStep, type PageResult, type ScrollerState } from '../extractor/scroller';
import { referenceEchoedSecrets } from '../extractor/secret-echo';
import type { FlatTable } from '../extractor/flatten';
import { DEFAULT_SECRET_ENV_PREFIX, type SecretSource } from '../extractor/secrets';
import type { HttpClientConfig, JobConfig, RequestDescriptor } from '../extractor/types';
import type { ExtractFetchTuning } from '../contracts/extract';
import type { ChildSpec } from '../extractor/checkpoint';
import { createHttpPools, type HttpPools } from '../http';
import type { InputPolicy } from '../security/policy';
import type { PageTableLines } from '../object-storage/page-group-writer';
import { threadStarter } from '../threads';

/** Pages reported in one message at most… */
const BATCH_PAGES = 16;
/** …and the longest a fetched page waits to be reported (ms). */
const BATCH_MS = 20;

/** What a page loop needs (plain data: it is posted to the thread). */
interface PageLoopJob {
  job: JobConfig;
  /** Parent columns and context of the run (no functions). */
  context: Pick<RunContext, 'parentColumns' | 'parent'>;
  /** The run's renamed parent columns before the first page. */
  parentAliases?: Record<string, string>;
  /** The resume point's scroller state; `state.next` is the first request. */
  state: ScrollerState;
  /** Requests answered so far in this call (a resumed attempt's). */
  fetched: number;
  /** Stop after this many requests answered in this call (`fetched` included). */
  maxPages: number;
  /** No new page after `startedAt + maxMs`. */
  maxMs: number;
  startedAt: number;
  fetch?: ExtractFetchTuning;
  client?: HttpClientConfig;
  auth?: RequestAuth;
  /** The variables a configuration may reference (the worker's environment, those with the prefix) and the prefix. */
  secrets: SecretSource;
  /** Pages fetched beyond the last one the activity took (0: none, page checkpoints). */
  ahead: number;
  /** The worker's input policy: every connection of the loop is checked against it. */
  policy: InputPolicy;
  /** Tracing is on in the activity's thread: each page carries its {@link PageTrace}. Default false. */
  trace?: boolean;
}

/**
 * When and how a page was fetched, measured in the loop's thread (which has no tracer) for the activity's thread to
 * record as a span under the activity's: no trace context crosses into the thread, the measured times do.
 */
export interface PageTrace {
  /** The request was sent (epoch ms)… */
  sentAtMs: number;
  /** …its answer read… */
  answeredAtMs: number;
  /** …and its rows flattened. */
  doneAtMs: number;
  method: string;
  /** The request's URL without its query (which may carry keys). */
  host: string;
  path: string;
  status: number;
  attempts: number;
  bytes: number;
}

/** A fetched and processed page. */
export interface LoopPage {
  pageNo: number;
  /** False when the body repeats the previous one: nothing to stage. */
  extract: boolean;
  result: PageResult;
  /** Tables with rows, and how many. */
  tables: Array<PageTableLines & { rows: number }>;
  schemaDelta: Array<Pick<FlatTable, 'name' | 'keys'>>;
  warnings: string[];
  parentAliases?: Record<string, string>;
  /** The scroller's warnings of `nextStep` after this page (none for the pending page). */
  stepWarnings: string[];
  /** With {@link PageLoopJob.trace}. */
  trace?: PageTrace;
}

/**
 * Consecutive pages: `pages` stepped (`state` is the scroller state after them), then possibly the `pending` page the
 * loop stopped at (children, a repeated body, `maxPages` or `maxMs`), handed back un-stepped with its child runs.
 */
interface LoopPages {
  kind: 'pages';
  pages: LoopPage[];
  state: ScrollerState;
  pending?: LoopPage & { children: ChildSpec[] };
}

/** A failure as the activity will report it (`toApplicationFailure` of the error, in the loop's thread). */
interface LoopFailure {
  type: string;
  message: string;
  nonRetryable: boolean;
  details?: unknown[];
  nextRetryDelay?: number;
  cause?: { name: string; message: string; stack?: string };
}

/** What a loop reports, in order; every kind but `pages` and `retry` ends it. */
type LoopEvent =
  | LoopPages
  | { kind: 'retry' }
  | { kind: 'rateLimited'; retryAfterMs: number; message: string }
  | { kind: 'failed'; failure: LoopFailure }
  | { kind: 'aborted' };

/** A running page loop, seen from the activity. */
interface PageLoop {
  /** The next pages (or the end: rate limited); throws the loop's failure, or the signal's reason once aborted. */
  next(): Promise<LoopPages | { kind: 'rateLimited'; retryAfterMs: number; message: string }>;
  /** The activity took page `pageNo`: the loop may fetch up to `pageNo + 1 + ahead`. */
  ack(pageNo: number): void;
  /** Ends the loop (idempotent); a page in flight is abandoned. */
  stop(): void;
}

/** The ApplicationFailure a loop failure stands for (what `asActivity` passes on unchanged). */
export function failureOf(f: LoopFailure): ApplicationFailure {
  const cause = f.cause ? Object.assign(new Error(f.cause.message), { name: f.cause.name, stack: f.cause.stack }) : undefined;
  return ApplicationFailure.create({
    type: f.type,
    message: f.message,
    nonRetryable: f.nonRetryable,
    details: f.details,
    nextRetryDelay: f.nextRetryDelay,
    cause,
  });
}

function loopFailure(err: unknown): LoopFailure {
  const f = toApplicationFailure(err);
  const cause = f.cause ? { name: f.cause.name, message: f.cause.message, stack: f.cause.stack } : undefined;
  const delay = typeof f.nextRetryDelay === 'number' ? f.nextRetryDelay : undefined;
  return {
    type: f.type ?? 'Error',
    message: f.message,
    nonRetryable: f.nonRetryable === true,
    details: f.details as unknown[] | undefined,
    ...(delay !== undefined ? { nextRetryDelay: delay } : {}),
    ...(cause ? { cause } : {}),
  };
}

function fetchOptions(tuning: ExtractFetchTuning | undefined, signal: AbortSignal, onRetry: () => void): FetchPageOptions {
  const options: FetchPageOptions = { signal, onRetry };
  for (const [key, value] of Object.entries(tuning ?? {})) if (value !== undefined) (options as Record<string, unknown>)[key] = value;
  return options;
}

function jsonLines(table: FlatTable): PageTableLines & { rows: number } {
  let text = '';
  for (const row of table.rows) text += `${JSON.stringify(row)}\n`;
  return { name: table.name, text, rows: table.rows.length };
}

/** Pages acknowledged by the activity, and a wait for the next acknowledgement (or the loop's end). */
class Credits {
  private waiting: (() => void) | undefined;
  constructor(
    private acked: number,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', () => this.wake(), { once: true });
  }
  take(pageNo: number): void {
    this.acked = Math.max(this.acked, pageNo);
    this.wake();
  }
  has(pageNo: number): boolean {
    return this.acked >= pageNo;
  }
  /** Resolves once page `pageNo` is acknowledged or the signal aborts. */
  async until(pageNo: number): Promise<void> {
    while (this.acked < pageNo && !this.signal.aborted) await new Promise<void>((resolve) => (this.waiting = resolve));
  }
  private wake(): void {
    const wake = this.waiting;
    this.waiting = undefined;
    wake?.();
  }
}

/**
 * Runs one page loop (in whichever thread calls it), reporting to `emit`. Requests go through `sendRequest`: deferred
 * user functions and authentication finished, `${env:NAME}` references filled in this copy only (login sessions stay
 * in this thread); an error is scrubbed of the secrets before it is reported.
 */
async function runLoop(job: PageLoopJob, emit: (event: LoopEvent) => void, credits: Credits, signal: AbortSignal, http: HttpPools): Promise<void> {
  const secrets = job.secrets;
  const options = { ...fetchOptions(job.fetch, signal, () => emit({ kind: 'retry' })), dispatcher: http.extractor, policy: job.policy };
  let state = job.state;
  let fetched = job.fetched;
  let parentAliases = job.parentAliases;
  // pages not reported yet: reported together (one message, one copy of the state) when there are BATCH_PAGES of
  // them, the first is BATCH_MS old, the loop would wait for the activity, or it ends
  let batch: LoopPage[] = [];
  let batchStartedAt = 0;
  const report = (pending?: LoopPages['pending']) => {
    if (batch.length > 0 || pending) emit({ kind: 'pages', pages: batch, state, ...(pending ? { pending } : {}) });
    batch = [];
  };
  const send = (request: RequestDescriptor) => sendRequest(request, { secrets, auth: job.auth, fetch: options, ...(job.client ? { client: job.client } : {}) });
  /** The next page's request when it was sent before this page's rows were flattened, and when it was sent. */
  let early: Promise<FetchPageResult> | undefined;
  let earlySentAt = 0;
  try {
    while (state.next) {
      const pageNo = state.pages + 1;
      const request = state.next;
      let response;
      let sentAt = earlySentAt;
      try {
        if (early) {
          response = await early;
        } else {
          if (!credits.has(pageNo - 1 - job.ahead)) {
            report();
            await credits.until(pageNo - 1 - job.ahead);
          }
          if (signal.aborted) throw signal.reason;
          sentAt = Date.now();
          response = await send(state.next);
        }
      } catch (err) {
        if (!(err instanceof ExtractRateLimitedError)) throw err;
        report();
        emit({ kind: 'rateLimited', retryAfterMs: err.retryAfterMs ?? 0, message: err.message });
        return;
      } finally {
        early = undefined;
      }
      const answeredAt = job.trace ? Date.now() : 0;
      const page = readPage(state, job.job, response, { ...job.context, crypto: nodeCryptoFunctions, nowMs: state.startedAtMs, parentAliases });
      // a secret the API echoes in the next URL or cursor goes back to its reference before the state keeps it
      page.result = referenceEchoedSecrets(page.result, state.next, secrets);
      fetched++;
      const last = !page.extract || page.children.length > 0 || fetched >= job.maxPages || Date.now() - job.startedAt >= job.maxMs;
      let stepped = state;
      let stepWarnings: string[] = [];
      if (!last) {
        const step = nextStep(state, page.result, Date.now());
        stepped = step.state;
        stepWarnings = step.warnings;
        // the next request goes out now, while this page's rows are flattened, when the activity's staging allows it
        // (never with page checkpoints: a page is staged before the next one is requested)
        if (stepped.next && credits.has(pageNo - job.ahead) && !signal.aborted) {
          earlySentAt = Date.now();
          early = send(stepped.next);
          early.catch(() => undefined); // awaited (and thrown) on the next turn
        }
      }
      // (a failure here leaves `state` before this page: what is reported stays a consistent resume point)
      const rows = page.rows();
      if (rows.parentAliases) parentAliases = rows.parentAliases;
      const done: LoopPage = {
        pageNo,
        extract: page.extract,
        result: page.result,
        tables: rows.tables.filter((t) => t.rows.length > 0).map(jsonLines),
        schemaDelta: rows.schemaDelta,
        warnings: rows.warnings,
        ...(rows.parentAliases ? { parentAliases: rows.parentAliases } : {}),
        stepWarnings,
        ...(job.trace ? { trace: pageTrace(request, response, sentAt, answeredAt) } : {}),
      };
      if (last) {
        const children = page.children.map((c) => ({ jobId: c.job.id, endpoint: c.job.endpoint, parentColumns: c.parentColumns, parent: c.parent }));
        report({ ...done, children });
        return;
      }
      state = stepped;
      if (batch.length === 0) batchStartedAt = Date.now();
      batch.push(done);
      if (batch.length >= BATCH_PAGES || Date.now() - batchStartedAt >= BATCH_MS) report();
    }
    report();
  } catch (err) {
    report();
    emit(signal.aborted ? { kind: 'aborted' } : { kind: 'failed', failure: loopFailure(err) });
  }
}

function pageTrace(request: RequestDescriptor, response: FetchPageResult, sentAtMs: number, answeredAtMs: number): PageTrace {
  let host = '';
  let path = '';
  try {
    const url = new URL(request.url);
    host = url.hostname;
    path = url.pathname;
  } catch {
    // a URL the request could not have been sent to: no place to name
  }
  return {
    sentAtMs,
    answeredAtMs,
    doneAtMs: Date.now(),
    method: request.method,
    host,
    path,
    status: response.status,
    attempts: response.attempts,
    bytes: response.bytes,
  };
}

/** The variables of `env` a configuration may reference (see `SecretSource`), for {@link PageLoopJob.secrets}. */
export function secretsOf(env: NodeJS.ProcessEnv, prefix = DEFAULT_SECRET_ENV_PREFIX): SecretSource {
  const selected: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith(prefix) && value !== undefined) selected[name] = value;
  return { env: selected, prefix, bindHosts: true };
}

/** The pools of each input policy a loop of this thread ran with (a process may run workers of several settings). */
const poolsByPolicy = new Map<string, HttpPools>();
function poolsFor(policy: InputPolicy): HttpPools {
  const key = JSON.stringify(policy);
  let pools = poolsByPolicy.get(key);
  if (!pools) poolsByPolicy.set(key, (pools = createHttpPools(policy)));
  return pools;
}

/** Messages to the thread. */
type ToThread = { type: 'start'; id: number; job: PageLoopJob } | { type: 'ack'; id: number; pageNo: number } | { type: 'stop'; id: number };

/** The events of one loop, in order, for the activity to await. */
class EventQueue {
  private readonly events: LoopEvent[] = [];
  private waiting: ((event: LoopEvent) => void) | undefined;
  constructor(private readonly onRetry: () => void) {}
  push(event: LoopEvent): void {
    if (event.kind === 'retry') return this.onRetry();
    const wake = this.waiting;
    this.waiting = undefined;
    if (wake) wake(event);
    else this.events.push(event);
  }
  take(): Promise<LoopEvent> {
    const event = this.events.shift();
    return event ? Promise.resolve(event) : new Promise((resolve) => (this.waiting = resolve));
  }
}

/** The shared thread and the loops running in it. */
interface LoopThread {
  worker: Worker;
  loops: Map<number, EventQueue>;
  /** Stops the thread once no loop has run for {@link THREAD_IDLE_MS}. */
  idle?: NodeJS.Timeout;
}

/** A thread without loops for this long (ms) is stopped: an idle worker keeps no page-loop heap. */
const THREAD_IDLE_MS = 60_000;

let thread: LoopThread | undefined;
let lastId = 0;

/** The process's page-loop thread (started on first use, restarted after it died); undefined without a thread entry. */
function loopThread(): LoopThread | undefined {
  if (thread) return thread;
  const start = threadStarter(__filename);
  if (!start) return undefined;
  const worker = start({ role: 'page-loop' });
  const current: LoopThread = { worker, loops: new Map() };
  worker.on('message', (m: { id: number; event: LoopEvent }) => current.loops.get(m.id)?.push(m.event));
  const died = (message: string) => {
    if (thread === current) thread = undefined;
    clearTimeout(current.idle);
    for (const queue of current.loops.values()) queue.push({ kind: 'failed', failure: { type: 'Error', message, nonRetryable: false } });
    current.loops.clear();
  };
  worker.on('error', (err) => died(`the page-loop thread failed: ${err.message}`));
  worker.on('exit', (code) => died(`the page-loop thread exited with code ${code}`));
  thread = current;
  return current;
}

/** Registers a loop of the shared thread: the thread keeps the process alive while loops run, and is not stopped. */
function addLoop(shared: LoopThread, id: number, queue: EventQueue): void {
  clearTimeout(shared.idle);
  shared.idle = undefined;
  shared.loops.set(id, queue);
  shared.worker.ref();
}

/** Unregisters a loop; without loops the thread no longer holds the process, and stops after a while. */
function removeLoop(shared: LoopThread, id: number): void {
  if (!shared.loops.delete(id) || shared.loops.size > 0) return;
  shared.worker.unref(); // (after the thread's listeners were added: a 'message' listener refs it again)
  shared.idle = setTimeout(() => {
    if (thread === shared) thread = undefined;
    void shared.worker.terminate();
  }, THREAD_IDLE_MS);
  shared.idle.unref();
}

/**
 * Starts a page loop (in the shared thread, or here without a thread entry). `onRetry` is called when a request is
 * retried; `signal` aborts the request in flight (the loop's `next` then throws the signal's reason).
 */
export function startPageLoop(job: PageLoopJob, onRetry: () => void, signal: AbortSignal): PageLoop {
  const queue = new EventQueue(onRetry);
  const id = ++lastId;
  // page checkpoints (`ahead` 0) run here: each page waits for its staging before the next request, so the thread
  // would overlap nothing and only add two messages per page (on a busy 2-core machine ~1 ms of the page's time)
  const shared = job.ahead > 0 ? loopThread() : undefined;
  let send: (message: ToThread) => void;
  if (shared) {
    addLoop(shared, id, queue);
    send = (message) => shared.worker.postMessage(message);
  } else {
    const controller = new AbortController();
    const credits = new Credits(job.state.pages, controller.signal);
    send = (message) => {
      if (message.type === 'ack') credits.take(message.pageNo);
      else if (message.type === 'stop') controller.abort();
    };
    void runLoop(job, (event) => queue.push(event), credits, controller.signal, poolsFor(job.policy));
  }
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    signal.removeEventListener('abort', cancel);
    send({ type: 'stop', id });
    if (shared) removeLoop(shared, id);
  };
  // cancelled: the pages reported so far come first, then `next` throws the signal's reason
  const cancel = () => {
    queue.push({ kind: 'aborted' });
    stop();
  };
  if (shared) send({ type: 'start', id, job });
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  return {
    async next() {
      const event = await queue.take();
      if (event.kind === 'pages' || event.kind === 'rateLimited') return event;
      if (event.kind === 'failed') throw failureOf(event.failure);
      throw signal.reason ?? new Error('the page loop was stopped');
    },
    ack: (pageNo) => send({ type: 'ack', id, pageNo }),
    stop,
  };
}

// As the page-loop thread: run the loops the activities start, each until it ends or is stopped.
if (!isMainThread && parentPort && (workerData as { role?: string } | undefined)?.role === 'page-loop') {
  const port = parentPort;
  const running = new Map<number, { credits: Credits; controller: AbortController }>();
  port.on('message', (m: ToThread) => {
    if (m.type === 'start') {
      const controller = new AbortController();
      const loop = { credits: new Credits(m.job.state.pages, controller.signal), controller };
      running.set(m.id, loop);
      void runLoop(m.job, (event) => port.postMessage({ id: m.id, event }), loop.credits, loop.controller.signal, poolsFor(m.job.policy)).finally(() =>
        running.delete(m.id),
      );
    } else if (m.type === 'ack') running.get(m.id)?.credits.take(m.pageNo);
    else if (m.type === 'stop') running.get(m.id)?.controller.abort();
  });
}
