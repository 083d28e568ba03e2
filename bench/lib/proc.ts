/**
 * Memory and CPU of a process from Linux `/proc`: resident set size (VmRSS), its high-water mark (VmHWM, which
 * `echo 5 > /proc/<pid>/clear_refs` resets), CPU time (utime + stime). A sampler polls VmRSS every 100 ms so a
 * scenario gets the peak of *its* window and a timeline (for "is memory flat over a long run?").
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** The memory fields of `/proc/<pid>/status`, in KiB (anon/file split and threads when the kernel reports them). */
export interface ProcMemory {
  rssKiB: number;
  hwmKiB: number;
  /** Anonymous memory (heaps, buffers) of the RSS. */
  rssAnonKiB?: number;
  /** File-backed pages of the RSS (code, mapped files). */
  rssFileKiB?: number;
  threads?: number;
}

/** Parses `VmRSS` and `VmHWM` out of `/proc/<pid>/status` text (values are in kB, meaning KiB). */
export function parseProcStatus(text: string): ProcMemory {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    if (!match) throw new Error(`/proc status has no ${name} line (is the process a zombie or a kernel thread?)`);
    return Number(match[1]);
  };
  const optional = (name: string, unit = '\\s*kB') => {
    const match = new RegExp(`^${name}:\\s+(\\d+)${unit}`, 'm').exec(text);
    return match ? Number(match[1]) : undefined;
  };
  const memory: ProcMemory = { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
  const anon = optional('RssAnon');
  const file = optional('RssFile');
  const threads = optional('Threads', '');
  if (anon !== undefined) memory.rssAnonKiB = anon;
  if (file !== undefined) memory.rssFileKiB = file;
  if (threads !== undefined) memory.threads = threads;
  return memory;
}

/**
 * CPU time in clock ticks (utime + stime, fields 14 and 15) from `/proc/<pid>/stat`. The command name (field 2)
 * may hold spaces and parentheses, so the fields are counted from the last `)`.
 */
export function parseProcStatTicks(text: string): number {
  const { user, system } = parseProcStatTimes(text);
  return user + system;
}

/** User and system CPU time in clock ticks (fields 14 and 15 of `/proc/<pid>/stat`). */
export function parseProcStatTimes(text: string): { user: number; system: number } {
  const end = text.lastIndexOf(')');
  if (end < 0) throw new Error(`unexpected /proc stat line: ${JSON.stringify(text.slice(0, 80))}`);
  const fields = text.slice(end + 2).trim().split(/\s+/);
  // fields[0] is field 3 (state), so field n is fields[n - 3]
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`unexpected /proc stat fields: ${JSON.stringify(text.slice(0, 120))}`);
  return { user: utime, system: stime };
}

/** Clock ticks per second of `/proc/<pid>/stat` (USER_HZ; 100 on every Linux we run on). */
export const CLOCK_TICKS_PER_SECOND = 100;

export function readMemory(pid: number): ProcMemory | undefined {
  try {
    return parseProcStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** CPU seconds the process used so far; undefined when it is gone. */
export function readCpuSeconds(pid: number): number | undefined {
  return readCpuTimes(pid)?.total;
}

/** User, system and total CPU seconds the process used so far; undefined when it is gone. */
export function readCpuTimes(pid: number): { user: number; system: number; total: number } | undefined {
  try {
    const { user, system } = parseProcStatTimes(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return { user: user / CLOCK_TICKS_PER_SECOND, system: system / CLOCK_TICKS_PER_SECOND, total: (user + system) / CLOCK_TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** Resets the process's VmHWM to its current RSS (Linux ≥ 4.0, same user). Returns false when not permitted. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** One RSS sample: ms since the sampler started, RSS in KiB, and the process's CPU seconds so far (user + system, and each). */
export interface RssSample {
  tMs: number;
  rssKiB: number;
  cpuS?: number;
  userS?: number;
  sysS?: number;
}

/** Which CPU counter of the samples {@link cpuSecondsWithin} reads. */
export type CpuCounter = 'total' | 'user' | 'system';

const counterOf: Record<CpuCounter, (s: RssSample) => number | undefined> = {
  total: (s) => s.cpuS,
  user: (s) => s.userS,
  system: (s) => s.sysS,
};

export interface RssWindow {
  /** Highest of the VmRSS samples and the VmHWM at stop (VmHWM catches spikes between samples when reset worked). */
  peakKiB: number;
  /** VmRSS when the window started. */
  startKiB: number;
  endKiB: number;
  /** Whether VmHWM was reset at the start (then it bounds the window's true peak). */
  hwmReset: boolean;
  samples: RssSample[];
  durationMs: number;
  /** When the sampler started (epoch ms): `tMs` of the samples counts from here. */
  startedAtMs: number;
}

/**
 * CPU seconds the sampled process spent between two moments (epoch ms, e.g. an activity's start and end from the
 * history), in all or only in user or system mode (`counter`): its CPU counter read at each moment, interpolated between the samples around it (at most one sampling
 * interval apart), so that the work just before the start and just after the end is not counted (taking the outer
 * samples added up to 0.2 s per window: +0.37 s/GB on a 256 MiB download). A moment outside the samples takes the
 * nearest one; undefined when there are fewer than two samples or the window is reversed.
 */
export function cpuSecondsWithin(window: RssWindow, fromMs: number, toMs: number, counter: CpuCounter = 'total'): number | undefined {
  const read = counterOf[counter];
  const samples = window.samples.filter((s) => read(s) !== undefined);
  if (samples.length < 2 || toMs < fromMs) return undefined;
  const cpuAt = (ms: number): number => {
    const t = ms - window.startedAtMs;
    const next = samples.findIndex((s) => s.tMs >= t);
    if (next <= 0) return read(next === 0 ? samples[0]! : samples.at(-1)!)!;
    const a = samples[next - 1]!;
    const b = samples[next]!;
    return b.tMs === a.tMs ? read(b)! : read(a)! + ((read(b)! - read(a)!) * (t - a.tMs)) / (b.tMs - a.tMs);
  };
  return Math.round((cpuAt(toMs) - cpuAt(fromMs)) * 100) / 100;
}

/** Samples a process's VmRSS every `intervalMs` between `start()` and `stop()`. */
export class RssSampler {
  private timer?: NodeJS.Timeout;
  private samples: RssSample[] = [];
  private startedAt = 0;
  private hwmReset = false;
  private startKiB = 0;

  constructor(
    readonly pid: number,
    private readonly intervalMs = 100,
    /** Keep at most this many samples (older ones are thinned by half when full). */
    private readonly maxSamples = 20_000,
  ) {}

  start(): this {
    this.samples = [];
    this.startedAt = Date.now();
    this.hwmReset = resetPeak(this.pid);
    this.startKiB = readMemory(this.pid)?.rssKiB ?? 0;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): RssWindow {
    clearInterval(this.timer);
    this.sample();
    const memory = readMemory(this.pid);
    const sampledPeak = this.samples.reduce((m, s) => Math.max(m, s.rssKiB), 0);
    const peakKiB = this.hwmReset && memory ? Math.max(sampledPeak, memory.hwmKiB) : sampledPeak;
    return {
      peakKiB,
      startKiB: this.startKiB,
      endKiB: memory?.rssKiB ?? this.samples.at(-1)?.rssKiB ?? 0,
      hwmReset: this.hwmReset,
      samples: this.samples,
      durationMs: Date.now() - this.startedAt,
      startedAtMs: this.startedAt,
    };
  }

  private sample(): void {
    const memory = readMemory(this.pid);
    if (!memory) return;
    const cpu = readCpuTimes(this.pid);
    this.samples.push({ tMs: Date.now() - this.startedAt, rssKiB: memory.rssKiB, cpuS: cpu?.total, userS: cpu?.user, sysS: cpu?.system });
    if (this.samples.length > this.maxSamples) this.samples = this.samples.filter((_, i) => i % 2 === 0);
  }
}

/**
 * Reduces an RSS timeline to `buckets` equal time slices, each with its highest sample (MB), for a compact
 * "memory over time" line. Empty slices repeat the previous value.
 */
export function rssTimeline(samples: readonly RssSample[], buckets = 10): number[] {
  if (samples.length === 0) return [];
  const endMs = samples.at(-1)!.tMs || 1;
  const out: Array<number | undefined> = Array.from({ length: buckets }, () => undefined);
  for (const s of samples) {
    const i = Math.min(buckets - 1, Math.floor((s.tMs / endMs) * buckets));
    out[i] = Math.max(out[i] ?? 0, s.rssKiB);
  }
  let last = out.find((v) => v !== undefined) ?? 0;
  return out.map((v) => {
    last = v ?? last;
    return Math.round((last * 1024) / 1_000_000);
  });
}

/** KiB → MB (decimal), rounded to 0.1. */
export function kibToMb(kib: number): number {
  return Math.round((kib * 1024) / 100_000) / 10;
}

/** A process's memory now, in MB (decimal), for the JSON: RSS, anon/file split, threads. */
export function memorySnapshot(pid: number): { rssMb: number; anonMb?: number; fileMb?: number; threads?: number } | undefined {
  const m = readMemory(pid);
  if (!m) return undefined;
  return {
    rssMb: kibToMb(m.rssKiB),
    ...(m.rssAnonKiB !== undefined ? { anonMb: kibToMb(m.rssAnonKiB) } : {}),
    ...(m.rssFileKiB !== undefined ? { fileMb: kibToMb(m.rssFileKiB) } : {}),
    ...(m.threads !== undefined ? { threads: m.threads } : {}),
  };
}

/** Resident memory of a process grouped by what it maps (KiB), from `/proc/<pid>/smaps`. */
export interface RssBreakdown {
  totalKiB: number;
  /** Anonymous mappings: V8 heaps (every isolate), malloc arenas (node, the Rust core), thread stacks. */
  anonymousKiB: number;
  /** `[heap]`: the main malloc arena (brk). */
  brkHeapKiB: number;
  /** The node executable's own pages (code, read-only data). */
  nodeBinaryKiB: number;
  /** Native addons (`*.node`) by file name: e.g. the Temporal core bridge. */
  addonsKiB: Record<string, number>;
  /** Other shared libraries and mapped files. */
  otherFilesKiB: number;
}

/** Parses `/proc/<pid>/smaps` text into an {@link RssBreakdown}; `nodePath` names the node executable. */
export function parseSmaps(text: string, nodePath: string): RssBreakdown {
  const out: RssBreakdown = { totalKiB: 0, anonymousKiB: 0, brkHeapKiB: 0, nodeBinaryKiB: 0, addonsKiB: {}, otherFilesKiB: 0 };
  let path = '';
  for (const line of text.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+\s+\S+\s+\S+\s+\S+\s+\d+\s*(.*)$/.exec(line);
    if (header) {
      path = header[1]!.trim();
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const kib = Number(rss[1]);
    out.totalKiB += kib;
    if (path === '' || path.startsWith('[anon') || path === '[stack]') out.anonymousKiB += kib;
    else if (path === '[heap]') out.brkHeapKiB += kib;
    else if (path === nodePath) out.nodeBinaryKiB += kib;
    else if (path.endsWith('.node')) {
      const name = path.split('/').pop()!;
      out.addonsKiB[name] = (out.addonsKiB[name] ?? 0) + kib;
    } else out.otherFilesKiB += kib;
  }
  return out;
}

export function readRssBreakdown(pid: number): RssBreakdown | undefined {
  try {
    return parseSmaps(readFileSync(`/proc/${pid}/smaps`, 'utf8'), process.execPath);
  } catch {
    return undefined;
  }
}
