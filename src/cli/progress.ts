// Progress of a running workflow: its `progress` query polled on an interval, drawn as a bar on stderr (a terminal)
// or written as plain lines (CI, cron, a log file); and the retries of its activities, from Temporal's description.
import { SingleBar } from 'cli-progress';
// one byte format for the CLI and the Temporal UI (decimal units: `643.2 MB`); the workflows use it too
import { formatBytes } from '../contracts/search-attributes';
import { oneLine, printable } from './failure';
import type { RunProgress } from '../live-progress';

export { formatBytes };

/** How often the CLI asks a running workflow for its progress (ms). */
const PROGRESS_POLL_MS = 500;
/** How often the CLI reads the workflow's description: retrying activities, and the live progress the step in flight heartbeats (ms). */
export const RETRY_POLL_MS = 2_000;
/** Plain progress (not a TTY): at most one line this often while the phase stays the same (ms). */
const PLAIN_PROGRESS_INTERVAL_MS = 10_000;
/**
 * Plain progress: at least one line this often, whatever the phase (ms). A phase where nothing the CLI sees changes
 * (the Storage job importing, a worker not picking the run up yet) repeats its line with the time spent in it.
 */
const PLAIN_STILL_INTERVAL_MS = 15_000;
/** Longest last-failure message on the bar (characters); plain lines carry up to {@link PLAIN_FAILURE_CHARS}. */
const BAR_FAILURE_CHARS = 80;
const PLAIN_FAILURE_CHARS = 400;

export type { RunProgress } from '../live-progress';

/** An activity Temporal is retrying: the step, which attempt it is on, and why the last one failed. */
export interface ActivityRetry {
  /** The activity's id within the workflow (one step may run several activities of a type). */
  activityId?: string;
  activity: string;
  /** 2 for the first retry. */
  attempt: number;
  /** `[TYPE] message` of the last failed attempt. */
  lastFailure?: string;
  /** When the next attempt is scheduled (epoch ms), while waiting for it. */
  nextAttemptAt?: number;
}

/** Something that shows progress; {@link progressBar} on a terminal, {@link plainProgress} elsewhere. */
export interface ProgressView {
  update(progress: RunProgress): void;
  /** The activities being retried now (empty when none). */
  retries(retries: readonly ActivityRetry[]): void;
  stop(): void;
}

/**
 * Calls `query` every `intervalMs` (never two at once) and hands each answer to `onProgress`; failed queries are
 * skipped (a workflow no worker has picked up yet cannot answer). Returns the function that stops polling.
 */
export function pollProgress<T = RunProgress>(query: () => Promise<T>, onProgress: (progress: T) => void, intervalMs = PROGRESS_POLL_MS): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const progress = await query();
      if (!stopped) onProgress(progress);
    } catch {
      // not answerable yet, or the workflow just ended: the next tick (or the result) tells
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Phases in which bytes move: rate and time left are shown only then. */
const MOVING_PHASES: ReadonlySet<string> = new Set(['uploading', 'downloading', 'extracting', 'fetching']);

/** How fast the bytes move, and how long the rest will take at that pace. */
interface Speed {
  /** Bytes per second over the last {@link RATE_WINDOW_MS}. */
  bytesPerSecond: number;
  /** Time left (ms) when the total is known and the pace is not zero. */
  etaMs?: number;
}

/** The window the rate is measured over (ms): long enough to smooth the heartbeats' steps, short enough to follow a change of pace. */
const RATE_WINDOW_MS = 10_000;

/**
 * Measures the rate of a growing byte count from timed samples (the progress answers), over the last
 * {@link RATE_WINDOW_MS}; the time left from the total when known. Bytes that go down (a retry starting over) restart it.
 */
export class RateMeter {
  private samples: Array<[at: number, bytes: number]> = [];

  constructor(private readonly windowMs: number = RATE_WINDOW_MS) {}

  /** Adds a sample and returns the speed, undefined until two samples a second apart show bytes moving. */
  sample(bytes: number, totalBytes: number | undefined, now: number): Speed | undefined {
    const last = this.samples.at(-1);
    if (last && bytes < last[1]) this.samples = [];
    if (!last || now > last[0] || bytes !== last[1]) this.samples.push([now, bytes]);
    while (this.samples.length > 2 && now - this.samples[1]![0] >= this.windowMs) this.samples.shift();
    const [firstAt, firstBytes] = this.samples[0]!;
    const elapsed = now - firstAt;
    if (elapsed < 1_000 || bytes <= firstBytes) return undefined;
    const bytesPerSecond = ((bytes - firstBytes) * 1000) / elapsed;
    const etaMs = totalBytes !== undefined && totalBytes > bytes ? ((totalBytes - bytes) / bytesPerSecond) * 1000 : undefined;
    return { bytesPerSecond, etaMs };
  }
}

/** `12.5 MB/s, 1 min 5 s left`. */
function formatSpeed(speed: Speed): string {
  const left = speed.etaMs === undefined ? '' : `, ${formatEta(speed.etaMs)} left`;
  return `${formatBytes(Math.round(speed.bytesPerSecond))}/s${left}`;
}

/** A time left as people say it: `8 s`, `2 min 5 s`, `1 h 20 min`. */
export function formatEta(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/**
 * The text fields of a progress line: phase, pages and records, bytes (of the total, with percent; else slices with
 * theirs), the rate and time left while bytes move, and the Storage job.
 */
export function progressFields(progress: RunProgress, speed?: Speed): { phase: string; transferred: string; job: string } {
  const parts: string[] = [];
  if (progress.pages !== undefined) parts.push(`pages ${progress.pages}`, `records ${progress.records ?? 0}`);
  if (progress.totalBytes) {
    parts.push(
      `${formatBytes(Math.min(progress.bytes, progress.totalBytes))} / ${formatBytes(progress.totalBytes)} (${percentOf(progress.bytes, progress.totalBytes)}%)`,
    );
  } else if (progress.bytes > 0) {
    parts.push(formatBytes(progress.bytes));
  }
  if (progress.slices && progress.slices > 1) {
    const done = progress.slicesDone ?? 0;
    parts.push(`slices ${done}/${progress.slices}${progress.totalBytes ? '' : ` (${percentOf(done, progress.slices)}%)`}`);
  }
  if (speed && MOVING_PHASES.has(progress.phase)) parts.push(formatSpeed(speed));
  const job = progress.jobId === undefined ? '' : `job ${progress.jobId}${progress.jobStatus ? ` ${progress.jobStatus}` : ''}`;
  return { phase: progress.phase, transferred: parts.join(', '), job };
}

function percentOf(part: number, whole: number): number {
  return Math.min(100, Math.floor((part / whole) * 100));
}

/**
 * A one-line bar on `stream` (a TTY): phase, bytes against the total when known (with percent), slices, rate and
 * time left, and the Storage job's status.
 */
export function progressBar(stream: NodeJS.WriteStream, label: string, now: () => number = Date.now): ProgressView {
  const bar = new SingleBar({
    stream,
    format: `${label} {phase} [{bar}] {transferred} {job}{retry}`,
    barsize: 24,
    hideCursor: true,
    clearOnComplete: false,
    linewrap: false,
  });
  let payload = { ...progressFields({ phase: 'starting', bytes: 0 }), retry: '' };
  bar.start(1, 0, payload);
  let stopped = false;
  const meter = new RateMeter();
  return {
    update(progress) {
      const [value, total] = barPosition(progress);
      payload = { ...payload, ...progressFields(progress, meter.sample(progress.bytes, progress.totalBytes, now())) };
      bar.setTotal(total);
      bar.update(value, payload);
    },
    retries(retries) {
      payload = { ...payload, retry: retries.map((retry) => ` | ${formatRetry(retry, BAR_FAILURE_CHARS)}`).join('') };
      bar.update(payload);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}

/** One plain progress line: `import: uploading, 1.5 MiB / 3.0 MiB (50%), job 12 processing`; no control characters. */
export function plainProgressLine(label: string, progress: RunProgress): string {
  const { phase, transferred, job } = progressFields(progress);
  return printable(`${label}: ${[phase, transferred, job].filter(Boolean).join(', ')}`);
}

/** One plain retry line: `import: retrying uploadFile, attempt 3, last failure: [SAPI_SERVER_ERROR] … (next attempt in 4 s)`. */
function plainRetryLine(label: string, retry: ActivityRetry, now: number = Date.now()): string {
  return printable(`${label}: ${formatRetry(retry, PLAIN_FAILURE_CHARS, now)}`);
}

/** `retrying uploadFile, attempt 3, last failure: [SAPI_SERVER_ERROR] 500 … (next attempt in 4 s)`, the failure cut to `maxChars`. */
export function formatRetry(retry: ActivityRetry, maxChars = PLAIN_FAILURE_CHARS, now: number = Date.now()): string {
  const failure = retry.lastFailure === undefined ? '' : `, last failure: ${truncate(printable(oneLine(retry.lastFailure)), maxChars)}`;
  const next = retry.nextAttemptAt !== undefined && retry.nextAttemptAt > now ? ` (next attempt in ${formatDuration(retry.nextAttemptAt - now)})` : '';
  return `retrying ${retry.activity}, attempt ${retry.attempt}${failure}${next}`;
}

/** A pending activity as Temporal describes it (`describe().raw.pendingActivities`), reduced to what the CLI reads. */
interface PendingActivitySeen {
  activityId?: string | null;
  activityType?: { name?: string | null } | null;
  attempt?: number | null;
  lastFailure?: { message?: string | null; applicationFailureInfo?: { type?: string | null } | null } | null;
  nextAttemptScheduleTime?: { seconds?: number | { toNumber(): number } | string | null; nanos?: number | null } | null;
}

/** The pending activities past their first attempt, as {@link ActivityRetry}s (activities on attempt 1 are not retrying). */
export function activityRetries(pending: readonly PendingActivitySeen[] | null | undefined): ActivityRetry[] {
  return (pending ?? [])
    .filter((activity) => (activity.attempt ?? 1) > 1)
    .map((activity) => {
      const type = activity.lastFailure?.applicationFailureInfo?.type;
      const message = activity.lastFailure?.message;
      const next = activity.nextAttemptScheduleTime;
      const seconds = next?.seconds;
      const nextMs = next
        ? (typeof seconds === 'object' && seconds !== null ? seconds.toNumber() : Number(seconds ?? 0)) * 1000 + Math.floor((next.nanos ?? 0) / 1e6)
        : 0;
      return {
        activityId: activity.activityId ?? undefined,
        activity: activity.activityType?.name || 'activity',
        attempt: activity.attempt ?? 1,
        lastFailure: message || type ? `${type ? `[${type}] ` : ''}${message ?? ''}`.trim() : undefined,
        nextAttemptAt: nextMs > 0 ? nextMs : undefined,
      };
    });
}

/** How {@link plainProgress} writes and keeps time; tests pass fakes. */
interface PlainProgressOptions {
  intervalMs?: number;
  /** Longest silence (ms): default {@link PLAIN_STILL_INTERVAL_MS}. */
  stillMs?: number;
  now?(): number;
  /** False: no timer of its own; the caller calls `tick()` (tests with a fake clock). Default true. */
  timer?: boolean;
}

/** {@link plainProgress}'s view: `tick()` writes the line of a long silence when one is due (its own timer calls it every second). */
interface PlainProgressView extends ProgressView {
  tick(): void;
}

/**
 * Progress as plain lines for a stream that is not a terminal (CI, cron, a log file): a line at each change of
 * phase or Storage job status, else at most one every {@link PLAIN_PROGRESS_INTERVAL_MS} while the numbers move,
 * a line for each new retry attempt, and never a silence longer than {@link PLAIN_STILL_INTERVAL_MS}: the last line
 * again with the time spent in its phase (`import: importing, job 12 processing (45.0 s in this phase)`). No control
 * characters, no redrawing.
 */
export function plainProgress(write: (line: string) => void, label: string, options: PlainProgressOptions = {}): PlainProgressView {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? PLAIN_PROGRESS_INTERVAL_MS;
  const stillMs = options.stillMs ?? PLAIN_STILL_INTERVAL_MS;
  let lastStage: string | undefined;
  // before the first answer: the run is starting (no worker has picked it up yet, or it is not answering yet)
  let lastLine = plainProgressLine(label, { phase: 'starting', bytes: 0 });
  let lastAt = now();
  let stageAt = lastAt;
  const seenAttempts = new Map<string, number>();
  let stopped = false;
  const say = (line: string) => {
    write(`${line}\n`);
    lastAt = now();
  };
  const view: PlainProgressView = {
    update(progress) {
      if (stopped) return;
      const line = plainProgressLine(label, progress);
      const stage = `${progress.phase}|${progress.jobStatus ?? ''}`;
      const changed = stage !== lastStage;
      const due = changed || (line !== lastLine && now() - lastAt >= intervalMs);
      if (!due) return;
      if (changed) stageAt = now();
      say(line);
      lastStage = stage;
      lastLine = line;
    },
    retries(retries) {
      if (stopped) return;
      for (const retry of retries) {
        const key = retry.activityId ?? retry.activity;
        if ((seenAttempts.get(key) ?? 0) >= retry.attempt) continue;
        seenAttempts.set(key, retry.attempt);
        say(plainRetryLine(label, retry, now()));
      }
    },
    tick() {
      if (stopped || now() - lastAt < stillMs) return;
      say(`${lastLine} (${formatDuration(now() - stageAt)} in this phase)`);
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
  const timer = options.timer === false ? undefined : setInterval(() => view.tick(), 1_000);
  timer?.unref();
  return view;
}

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** Phases after the bytes moved: the bar is full even when the total was never known. */
const PAST_TRANSFER: ReadonlySet<string> = new Set(['defining', 'importing', 'metadata', 'done']);

/** `[value, total]` of the bar: full once the transfer is over, else bytes of the total when known, else slices done of all. */
export function barPosition(progress: RunProgress): [number, number] {
  if (PAST_TRANSFER.has(progress.phase)) return [1, 1];
  if (progress.totalBytes) return [Math.min(progress.bytes, progress.totalBytes), progress.totalBytes];
  if (progress.slices && progress.slices > 1) return [Math.min(progress.slicesDone ?? 0, progress.slices), progress.slices];
  return [0, 1];
}

/** `2345` → `2.3 s`, `125000` → `2 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
