// Progress of a running transfer: the workflow's `progress` query polled on an interval, drawn as a bar on stderr.
import { SingleBar } from 'cli-progress';
import type { TransferProgress } from '../contracts/transfer';

/** How often the CLI asks a running workflow for its progress (ms). */
export const PROGRESS_POLL_MS = 500;

/** Something that shows progress; {@link progressBar} on a terminal. */
export interface ProgressView {
  update(progress: TransferProgress): void;
  stop(): void;
}

/**
 * Calls `query` every `intervalMs` (never two at once) and hands each answer to `onProgress`; failed queries are
 * skipped (a workflow no worker has picked up yet cannot answer). Returns the function that stops polling.
 */
export function pollProgress(query: () => Promise<TransferProgress>, onProgress: (progress: TransferProgress) => void, intervalMs = PROGRESS_POLL_MS): () => void {
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

/** The text fields of a progress line: phase, bytes (of total, with percent), slices and the Storage job. */
export function progressFields(progress: TransferProgress): { phase: string; transferred: string; job: string } {
  const parts: string[] = [];
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
    format: `${label} {phase} [{bar}] {transferred} {job}`,
    barsize: 24,
    hideCursor: true,
    clearOnComplete: false,
    linewrap: false,
  });
  bar.start(1, 0, progressFields({ phase: 'starting', bytes: 0 }));
  let stopped = false;
  return {
    update(progress) {
      const [value, total] = barPosition(progress);
      bar.setTotal(total);
      bar.update(value, progressFields(progress));
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}

/** Phases after the bytes moved: the bar is full even when the total was never known. */
const PAST_TRANSFER: ReadonlySet<string> = new Set(['importing', 'done']);

/** `[value, total]` of the bar: bytes of the total when known, else empty until the transfer is over. */
export function barPosition(progress: TransferProgress): [number, number] {
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
