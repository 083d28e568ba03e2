// Progress of a running workflow: its `progress` query polled on an interval, drawn as a bar on stderr (a terminal)
// or written as plain lines (CI, cron, a log file); and the retries of its activities, from Temporal's description.
import { SingleBar } from 'cli-progress';
import { oneLine, printable } from './failure';

/** How often the CLI asks a running workflow for its progress (ms). */
export const PROGRESS_POLL_MS = 500;
/** How often the CLI reads the workflow's description: retrying activities, and the live progress the step in flight heartbeats (ms). */
export const RETRY_POLL_MS = 2_000;
/** Plain progress (not a TTY): at most one line this often while the phase stays the same (ms). */
export const PLAIN_PROGRESS_INTERVAL_MS = 10_000;
/** Longest last-failure message on the bar (characters); plain lines carry up to {@link PLAIN_FAILURE_CHARS}. */
const BAR_FAILURE_CHARS = 80;
const PLAIN_FAILURE_CHARS = 400;

/**
 * What the `progress` query answers: a transfer's `TransferProgress` or an extraction's progress (pages,
 * records; its `jobId` is absent). Only the fields the CLI shows.
 */
export interface RunProgress {
  phase: string;
  bytes: number;
  totalBytes?: number;
  slicesDone?: number;
  slices?: number;
  fileId?: number;
  jobId?: number;
  jobStatus?: string;
  pages?: number;
  records?: number;
}

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

/** The text fields of a progress line: phase, pages and records, bytes (of total, with percent), slices and the Storage job. */
export function progressFields(progress: RunProgress): { phase: string; transferred: string; job: string } {
  const parts: string[] = [];
  if (progress.pages !== undefined) parts.push(`pages ${progress.pages}`, `records ${progress.records ?? 0}`);
  if (progress.totalBytes) {
    const percent = Math.min(100, Math.floor((progress.bytes / progress.totalBytes) * 100));
    parts.push(`${formatBytes(progress.bytes)} / ${formatBytes(progress.totalBytes)} (${percent}%)`);
  } else if (progress.bytes > 0) {
    parts.push(formatBytes(progress.bytes));
  }
  if (progress.slices && progress.slices > 1) parts.push(`slices ${progress.slicesDone ?? 0}/${progress.slices}`);
  const job = progress.jobId === undefined ? '' : `job ${progress.jobId}${progress.jobStatus ? ` ${progress.jobStatus}` : ''}`;
  return { phase: progress.phase, transferred: parts.join(', '), job };
}

/** A one-line bar on `stream` (a TTY): phase, bytes against the total when known, and the Storage job's status. */
export function progressBar(stream: NodeJS.WriteStream, label: string): ProgressView {
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
  return {
    update(progress) {
      const [value, total] = barPosition(progress);
      payload = { ...payload, ...progressFields(progress) };
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
export function plainRetryLine(label: string, retry: ActivityRetry, now: number = Date.now()): string {
  return printable(`${label}: ${formatRetry(retry, PLAIN_FAILURE_CHARS, now)}`);
}

/** `retrying uploadFile, attempt 3, last failure: [SAPI_SERVER_ERROR] 500 … (next attempt in 4 s)`, the failure cut to `maxChars`. */
export function formatRetry(retry: ActivityRetry, maxChars = PLAIN_FAILURE_CHARS, now: number = Date.now()): string {
  const failure = retry.lastFailure === undefined ? '' : `, last failure: ${truncate(printable(oneLine(retry.lastFailure)), maxChars)}`;
  const next = retry.nextAttemptAt !== undefined && retry.nextAttemptAt > now ? ` (next attempt in ${formatDuration(retry.nextAttemptAt - now)})` : '';
  return `retrying ${retry.activity}, attempt ${retry.attempt}${failure}${next}`;
}

/** A pending activity as Temporal describes it (`describe().raw.pendingActivities`), reduced to what the CLI reads. */
export interface PendingActivitySeen {
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
      const nextMs = next ? (typeof seconds === 'object' && seconds !== null ? seconds.toNumber() : Number(seconds ?? 0)) * 1000 + Math.floor((next.nanos ?? 0) / 1e6) : 0;
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
export interface PlainProgressOptions {
  intervalMs?: number;
  now?(): number;
}

/**
 * Progress as plain lines for a stream that is not a terminal (CI, cron, a log file): a line at each change of
 * phase or Storage job status, else at most one every {@link PLAIN_PROGRESS_INTERVAL_MS} while the numbers move,
 * and a line for each new retry attempt. No control characters, no redrawing.
 */
export function plainProgress(write: (line: string) => void, label: string, options: PlainProgressOptions = {}): ProgressView {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? PLAIN_PROGRESS_INTERVAL_MS;
  let lastStage: string | undefined;
  let lastLine: string | undefined;
  let lastAt = 0;
  const seenAttempts = new Map<string, number>();
  let stopped = false;
  return {
    update(progress) {
      if (stopped) return;
      const line = plainProgressLine(label, progress);
      const stage = `${progress.phase}|${progress.jobStatus ?? ''}`;
      const due = stage !== lastStage || (line !== lastLine && now() - lastAt >= intervalMs);
      if (!due) return;
      write(`${line}\n`);
      lastStage = stage;
      lastLine = line;
      lastAt = now();
    },
    retries(retries) {
      if (stopped) return;
      for (const retry of retries) {
        const key = retry.activityId ?? retry.activity;
        if ((seenAttempts.get(key) ?? 0) >= retry.attempt) continue;
        seenAttempts.set(key, retry.attempt);
        write(`${plainRetryLine(label, retry, now())}\n`);
      }
    },
    stop() {
      stopped = true;
    },
  };
}

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** Phases after the bytes moved: the bar is full even when the total was never known. */
const PAST_TRANSFER: ReadonlySet<string> = new Set(['defining', 'importing', 'metadata', 'done']);

/** `[value, total]` of the bar: bytes of the total when known, else empty until the transfer is over. */
export function barPosition(progress: RunProgress): [number, number] {
  if (progress.totalBytes) return [Math.min(progress.bytes, progress.totalBytes), progress.totalBytes];
  return PAST_TRANSFER.has(progress.phase) ? [1, 1] : [0, 1];
}

/** `1536` → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** `2345` → `2.3 s`, `125000` → `2 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
