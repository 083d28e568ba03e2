/**
 * Stages the rows of one job run's pages in the stage store, in groups of consecutive pages: one object per table
 * and group (`<runKey>/r<run>/p<first>-<last>/<table>.jsonl`, see `pageKey`), one JSON object per row and line.
 *
 * The writer also keeps the run's resume point (any JSON value, e.g. `{state, totals}`): each group is staged with
 * the resume point it completes, and that point is taken only once the group and every group before it are stored.
 * Groups are written while the next pages are fetched; a failed write is reported by {@link PageGroupWriter.settle}
 * (or by the next {@link PageGroupWriter.flush} that waits for it) and never moves the resume point, so a resume point
 * is always the end of a stored group.
 *
 * Page checkpoints (`markers`): every group is also staged with a marker object, `<group>/.checkpoint.json`, holding
 * its resume point and the tables it wrote, so the staging store itself holds the resume point of every stored
 * group, whether or not a heartbeat carrying it reached the server (the SDK sends heartbeats at most every 80 % of
 * the heartbeat timeout). A retry resumes from the newest complete marker ({@link markedResumePoint}).
 *
 * On a store that can append (a local folder), page checkpoints go to one log per call instead
 * (`<runKey>/r<run>/l<firstPage>-a<attempt>.log`): each flushed group is one line, `{tag, first, last, alone,
 * tables, checkpoint}`, written whole before the next page is fetched (one write, ~15 µs, where a folder and two files
 * per page took ~1 ms). {@link PageGroupWriter.settle} turns the log into groups with their markers and deletes it,
 * and so does {@link recoverPageLogs} for the log of an attempt that died (a torn last line is dropped: that group
 * was never taken as the resume point), so every reader of groups sees the same layout whichever way they were made.
 */
import { type AppendLog, type ObjectStore } from './object-store';
import { groupCheckpointKey, isPageLogKey, jobRunPrefix, pageKey, pageLogKey, parseGroupKey, parsePageLogKey, readText } from './stage-store';

/** A group of consecutive pages is staged (one object per table) once it holds this many pages… */
const GROUP_MAX_PAGES = 100;
/** …or this many characters of rows… */
const GROUP_MAX_CHARS = 4 * 1024 * 1024;
/** …or when its first page is this old (ms): the resume point moves at least this often. */
const GROUP_MAX_MS = 1_000;
/** Staged groups being written while the next pages are fetched. */
const GROUP_WRITES_IN_FLIGHT = 2;

/** The rows one page adds to one table, as JSON lines (one `JSON.stringify(row)` and `\n` per row). */
export interface PageTableLines {
  name: string;
  text: string;
}

/** Options of {@link PageGroupWriter}; the limits default to the `GROUP_*` constants. */
interface PageGroupWriterOptions<C> {
  store: ObjectStore;
  /** Staging key of the extraction. */
  runKey: string;
  /** Job run number (staging key part). */
  runNo: number;
  /** The resume point before any group is stored (what a retry resumes from until then). */
  checkpoint: C;
  /** Called whenever a staged group settles, with the resume point as it stands (it may not have moved). */
  onAdvance?: (checkpoint: C) => void;
  /** Pages per group. Default {@link GROUP_MAX_PAGES}. */
  maxPages?: number;
  /** Characters of rows per group. Default {@link GROUP_MAX_CHARS}. */
  maxChars?: number;
  /** Age of a group's first page (ms) after which it is full. Default {@link GROUP_MAX_MS}. */
  maxMs?: number;
  /** Groups written at once; {@link PageGroupWriter.flush} waits beyond this. Default {@link GROUP_WRITES_IN_FLIGHT}. */
  writesInFlight?: number;
  /** Clock (ms) for the group age. Default `Date.now`. */
  now?: () => number;
  /**
   * Stage a checkpoint marker with every group (see the module doc); `tag` names the call that wrote it (markers of
   * another tag are never resumed from); `attempt` (default 1) names the call's page log, when the store has one.
   */
  markers?: { tag: string; attempt?: number };
}

/** One line of a page log: a flushed group (see the module doc). */
interface PageLogRecord<C> {
  tag: string;
  first: number;
  last: number;
  /** Staged as a group of its own (`flush(…, { alone: true })`), never merged with the lines around it. */
  alone?: true;
  /** Table → its JSON lines. */
  tables: Record<string, string>;
  checkpoint: C;
}

/** File name of a group's checkpoint marker (see `groupCheckpointKey`). */
const MARKER_NAME = '.checkpoint.json';

/** What a checkpoint marker holds. */
interface CheckpointMarker<C> {
  tag: string;
  checkpoint: C;
  /** Tables of the group: the marker counts only when each of them is stored. */
  tables: string[];
}

/** Rows of consecutive pages waiting to be staged. */
interface PageGroup {
  first: number;
  last: number;
  /** Table → JSON lines (pages' runs of lines). */
  tables: Map<string, string[]>;
  chars: number;
  startedAt: number;
}

/** A staged group: its write, whether it is stored, and the resume point it completes. */
interface GroupWrite<C> {
  done: Promise<void>;
  stored: boolean;
  checkpoint: C;
}

/** Buffers the rows of consecutive pages of one job run and stages each group once, in order (see the module doc). */
export class PageGroupWriter<C> {
  private current: C;
  private group: PageGroup | null = null;
  /** Staged groups not yet taken as the resume point, oldest first. */
  private readonly writes: GroupWrite<C>[] = [];
  private readonly maxPages: number;
  private readonly maxChars: number;
  private readonly maxMs: number;
  private readonly writesInFlight: number;
  private readonly now: () => number;
  /** The call's page log (markers on a store that can append), opened by the first flush. */
  private log: { key: string; writer: Promise<AppendLog> } | undefined;

  constructor(private readonly options: PageGroupWriterOptions<C>) {
    this.current = options.checkpoint;
    this.maxPages = options.maxPages ?? GROUP_MAX_PAGES;
    this.maxChars = options.maxChars ?? GROUP_MAX_CHARS;
    this.maxMs = options.maxMs ?? GROUP_MAX_MS;
    this.writesInFlight = options.writesInFlight ?? GROUP_WRITES_IN_FLIGHT;
    this.now = options.now ?? Date.now;
  }

  /** The resume point: every page of every group staged with it, and before it, is stored. */
  get checkpoint(): C {
    return this.current;
  }

  /** True when the group being buffered reached its page, size or age limit (time to {@link flush}). */
  get full(): boolean {
    const g = this.group;
    return g !== null && (g.last - g.first + 1 >= this.maxPages || g.chars >= this.maxChars || this.now() - g.startedAt >= this.maxMs);
  }

  /**
   * Deletes the groups of this job run that start after page `page`: an earlier attempt that died before its resume
   * point reached the server may have staged them; their pages are fetched again.
   */
  async discardAfter(page: number): Promise<void> {
    const { store, runKey, runNo } = this.options;
    const keys = await store.list(jobRunPrefix(runKey, runNo));
    await store.delete(keys.filter((key) => (parseGroupKey(key)?.firstPage ?? 0) > page));
  }

  /**
   * Adds page `pageNo`'s rows, as JSON lines (one `JSON.stringify(row)` and `\n` each; '' for none), to the group
   * being buffered (a page without rows still extends the group's range).
   */
  addLines(pageNo: number, tables: readonly PageTableLines[]): void {
    const group = (this.group ??= { first: pageNo, last: pageNo, tables: new Map(), chars: 0, startedAt: this.now() });
    group.last = pageNo;
    for (const t of tables) {
      if (t.text === '') continue;
      let lines = group.tables.get(t.name);
      if (!lines) group.tables.set(t.name, (lines = []));
      lines.push(t.text);
      group.chars += t.text.length;
    }
  }

  /**
   * Stages the buffered group (one object per table; nothing when it has no rows); `after` becomes the resume point
   * once the group and every group before it are stored. Waits while more than `writesInFlight` groups are being
   * written, and throws the failure of the oldest one it waited for. `alone`: the group is never merged with others
   * when a page log is turned into groups (the resume point it carries is not the end of its pages).
   */
  async flush(after: C, { alone = false }: { alone?: boolean } = {}): Promise<void> {
    const g = this.group;
    this.group = null;
    const { store, runKey, runNo, markers } = this.options;
    if (g && markers && store.openLog) {
      if (!this.log) {
        const key = pageLogKey(runKey, runNo, g.first, markers.attempt ?? 1);
        this.log = { key, writer: store.openLog(key) };
      }
      const record: PageLogRecord<C> = {
        tag: markers.tag,
        first: g.first,
        last: g.last,
        ...(alone ? { alone: true as const } : {}),
        tables: Object.fromEntries([...g.tables].map(([table, lines]) => [table, lines.join('')])),
        checkpoint: after,
      };
      await (await this.log.writer).append(`${JSON.stringify(record)}\n`);
      this.current = after;
      this.options.onAdvance?.(after);
      return;
    }
    if (g && (g.tables.size > 0 || markers)) {
      const puts = [...g.tables].map(([table, lines]) => store.put(pageKey(runKey, runNo, g.first, g.last, table), lines.join('')));
      if (markers) {
        const marker: CheckpointMarker<C> = { tag: markers.tag, checkpoint: after, tables: [...g.tables.keys()] };
        puts.push(store.put(groupCheckpointKey(runKey, runNo, g.first, g.last), JSON.stringify(marker)));
      }
      const done = Promise.all(puts).then(() => undefined);
      const write: GroupWrite<C> = { done, stored: false, checkpoint: after };
      done.then(
        () => {
          write.stored = true;
          this.advance();
        },
        () => undefined, // awaited in order by settleOldest; this only keeps Node from calling it unhandled
      );
      this.writes.push(write);
    } else {
      this.writes.push({ done: Promise.resolve(), stored: true, checkpoint: after });
      this.advance();
    }
    while (this.writes.length > this.writesInFlight) await this.settleOldest();
  }

  /**
   * Waits for every staged group, in order; throws the first failure (the resume point stays before that group). A
   * page log is then turned into groups and deleted.
   */
  async settle(): Promise<void> {
    while (this.writes.length > 0) await this.settleOldest();
    const log = this.log;
    if (log) {
      this.log = undefined;
      await (await log.writer).close();
      await convertPageLog(this.options.store, log.key);
    }
  }

  /** Waits for every write still running, failed or not: never leave a write running unobserved when failing. */
  async drain(): Promise<void> {
    await Promise.allSettled(this.writes.map((w) => w.done));
    const log = this.log;
    this.log = undefined;
    if (log) await log.writer.then((w) => w.close()).catch(() => undefined); // left for the retry's recoverPageLogs
  }

  private async settleOldest(): Promise<void> {
    const oldest = this.writes[0]!;
    await oldest.done;
    oldest.stored = true; // (its own handler may have run first and shifted it already)
    this.advance();
  }

  /** Takes the resume point of every stored group at the head of the queue. */
  private advance(): void {
    while (this.writes[0]?.stored) this.current = this.writes.shift()!.checkpoint;
    this.options.onAdvance?.(this.current);
  }
}

/**
 * The resume point of the newest group of job run `runNo` that starts after page `page` and whose checkpoint marker
 * (tagged `tag`) and tables are all stored; `undefined` when there is none.
 */
export async function markedResumePoint<C>(store: ObjectStore, runKey: string, runNo: number, tag: string, page: number): Promise<C | undefined> {
  const keys = await store.list(jobRunPrefix(runKey, runNo));
  const stored = new Set(keys);
  const candidates = keys
    .filter((key) => key.endsWith(`/${MARKER_NAME}`) && (parseGroupKey(key)?.firstPage ?? 0) > page)
    .sort((a, b) => parseGroupKey(b)!.lastPage - parseGroupKey(a)!.lastPage);
  for (const key of candidates) {
    const marker = JSON.parse(await readText(store, key)) as CheckpointMarker<C>;
    const group = key.slice(0, -MARKER_NAME.length);
    if (marker.tag === tag && marker.tables.every((table) => stored.has(`${group}${table}.jsonl`))) return marker.checkpoint;
  }
  return undefined;
}

/**
 * Turns every page log of job run `runNo` (of attempts that died before their {@link PageGroupWriter.settle}) into
 * groups with their markers, and deletes it; call it before {@link markedResumePoint} on a retry.
 */
export async function recoverPageLogs(store: ObjectStore, runKey: string, runNo: number): Promise<void> {
  if (!store.openLog) return;
  for (const key of (await store.list(jobRunPrefix(runKey, runNo))).filter(isPageLogKey)) await convertPageLog(store, key);
}

/**
 * Stages the groups of a page log and deletes it. Consecutive lines make one group (their tables concatenated, the
 * marker with the last line's resume point), a line flushed `alone` one of its own. Only whole lines count: a last
 * line the writer did not finish was never the resume point. Running it again on the same log stages the same keys.
 */
async function convertPageLog(store: ObjectStore, key: string): Promise<void> {
  const parsed = parsePageLogKey(key);
  if (!parsed) throw new Error(`not a page log key: ${key}`);
  const records: PageLogRecord<unknown>[] = [];
  const text = await readText(store, key);
  for (let at = 0, end = text.indexOf('\n'); end !== -1; at = end + 1, end = text.indexOf('\n', at)) {
    try {
      records.push(JSON.parse(text.slice(at, end)) as PageLogRecord<unknown>);
    } catch {
      break;
    }
  }
  const groups: PageLogRecord<unknown>[][] = [];
  for (const record of records) {
    const open = groups.at(-1);
    if (open && !record.alone && !open[0]!.alone) open.push(record);
    else groups.push([record]);
  }
  await Promise.all(
    groups.map((group) => {
      const first = group[0]!.first;
      const last = group.at(-1)!;
      const tables = new Map<string, string[]>();
      for (const record of group)
        for (const [table, lines] of Object.entries(record.tables)) (tables.get(table) ?? tables.set(table, []).get(table)!).push(lines);
      const marker: CheckpointMarker<unknown> = { tag: last.tag, checkpoint: last.checkpoint, tables: [...tables.keys()] };
      return Promise.all([
        ...[...tables].map(([table, lines]) => store.put(pageKey(parsed.runKey, parsed.runNo, first, last.last, table), lines.join(''))),
        store.put(groupCheckpointKey(parsed.runKey, parsed.runNo, first, last.last), JSON.stringify(marker)),
      ]);
    }),
  );
  await store.delete([key]);
}
