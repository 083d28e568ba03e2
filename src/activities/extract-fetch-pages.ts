import { Context } from '@temporalio/activity';
import { ExtractRateLimitedError } from '../extractor/errors';
import { fetchPage, type FetchPageOptions } from '../extractor/http/fetch-page';
import { processPage, type RunContext } from '../extractor/page';
import { nextStep, type ScrollerState } from '../extractor/scroller';
import { mergeTableSchema, type TableSchema } from '../extractor/table-schema';
import type { JobConfig } from '../extractor/types';
import { cursorOf } from '../contracts/extract-plan';
import type { BatchProgress, ChildSpec, ExtractFetchTuning, PendingPage } from '../contracts/extract';
import type { ActivityDeps } from './deps';
import { asActivity, heartbeat, lastHeartbeat, PROGRESS_SIGNAL_INTERVAL_MS } from './context';
import { jobRunPrefix, pageKey, parsePageKey, stageStoreOf } from '../object-storage/stage-store';

/** Shortest time between two heartbeat calls while pages stream in (ms). */
export const HEARTBEAT_CALL_INTERVAL_MS = 200;
/** A group of consecutive pages is staged (one object per table) once it holds this many pages… */
export const GROUP_MAX_PAGES = 100;
/** …or this many characters of rows… */
export const GROUP_MAX_CHARS = 4 * 1024 * 1024;
/** …or when its first page is this old (ms): the resume point moves at least this often. */
export const GROUP_MAX_MS = 1_000;
/** Staged groups being written while the next pages are fetched. */
export const GROUP_WRITES_IN_FLIGHT = 2;

export interface FetchPagesInput {
  /** Staging key of the extraction. */
  runKey: string;
  /** Job run number (staging key part). */
  runNo: number;
  /** The job as run: endpoint with placeholders filled for a child run. */
  job: JobConfig;
  /** `parent_<field>` columns and the parent context of a child run. */
  context: RunContext;
  /** The checkpointed scroller state; `state.next` is the request to send. */
  state: ScrollerState;
  /** Pages to fetch at most (1 in page mode). */
  maxPages: number;
  /** Time budget (ms): no new page is started after it. */
  maxMs: number;
  fetch?: ExtractFetchTuning;
}

/** What one call produced (pages staged, their totals and the schema they add). */
export interface FetchPagesTotals {
  /** Pages extracted and staged (a repeated response is fetched but not counted). */
  pages: number;
  /** Requests answered (repeats included). */
  fetched: number;
  records: number;
  bytes: number;
  /** Keys of the staged tables (merge into the workflow's schema). */
  schema: TableSchema;
  /** Rows staged per table. */
  rows: Record<string, number>;
  warnings: string[];
}

export interface FetchPagesResult extends FetchPagesTotals {
  /** Scroller state after the last page this call stepped itself (the pending page is not stepped). */
  state: ScrollerState;
  /** The last page fetched, for the workflow to run its children and `nextStep`; null when pagination ended here or a rate limit stopped the call. */
  pending: PendingPage | null;
  /** The API asked to wait this long (ms) before `state.next` is sent again: wait on a durable timer. */
  rateLimitedMs?: number;
  rateLimitMessage?: string;
  /** True when this attempt resumed from an earlier attempt's heartbeat. */
  resumed: boolean;
}

/** Heartbeat details: the resume point (every page up to `state.pages` is staged) and the totals so far. */
export interface FetchPagesCheckpoint {
  state: ScrollerState;
  totals: FetchPagesTotals;
}

const emptyTotals = (): FetchPagesTotals => ({ pages: 0, fetched: 0, records: 0, bytes: 0, schema: {}, rows: {}, warnings: [] });

function fetchOptions(tuning: ExtractFetchTuning | undefined, signal: AbortSignal, onRetry: () => void): FetchPageOptions {
  const options: FetchPageOptions = { signal, onRetry };
  for (const [key, value] of Object.entries(tuning ?? {})) if (value !== undefined) (options as Record<string, unknown>)[key] = value;
  return options;
}

/** Rows of consecutive pages waiting to be staged. */
interface PageGroup {
  first: number;
  last: number;
  /** Table → JSON lines. */
  tables: Map<string, string[]>;
  chars: number;
  startedAt: number;
}

/**
 * Fetches pages of one job run, from the checkpointed scroller state: for every page, fetch → `processPage` →
 * rows buffered per table; every group of consecutive pages (≤ 100 pages, 4 MiB of rows, 1 s) is staged as one
 * object per table, `<runKey>/r<run>/p<first>-<last>/<table>.jsonl`, and once it (and every group before it) is
 * stored the activity heartbeats `{state, totals}`: the resume point. Between pages it runs the scroller itself;
 * it stops and hands the last page back un-stepped (`pending`, staged as a group of its own) when the page has
 * child runs, when `maxPages`/`maxMs` is reached or on a repeated response, so the workflow decides.
 *
 * No duplicates: a resume point is always the end of a stored group, and a retry (attempt > 1) first deletes every
 * group of this job run that starts after its resume point (written by an attempt that died before its heartbeat
 * reached the server), then fetches those pages again. This holds even when the API answers differently the second
 * time. A long `Retry-After` ends the call with `rateLimitedMs` (the workflow waits on a durable timer).
 */
export function fetchPages(deps: ActivityDeps) {
  return (input: FetchPagesInput): Promise<FetchPagesResult> =>
    asActivity(async () => {
      const context = Context.current();
      const store = stageStoreOf(deps);
      const previous = lastHeartbeat<FetchPagesCheckpoint>();
      const resumed = previous !== undefined && previous.state.jobId === input.state.jobId && previous.state.pages >= input.state.pages;
      let state: ScrollerState = resumed ? previous.state : input.state;
      const totals: FetchPagesTotals = resumed ? previous.totals : emptyTotals();
      let snapshot: FetchPagesCheckpoint = { state, totals: { ...totals } };

      if (context.info.attempt > 1) {
        // an earlier attempt may have staged groups it never checkpointed: drop them, their pages are fetched again
        const keys = await store.list(jobRunPrefix(input.runKey, input.runNo));
        await store.delete(keys.filter((key) => (parsePageKey(key)?.firstPage ?? 0) > state.pages));
      }

      // `snapshot` moves with every stored group; it reaches the SDK at most every HEARTBEAT_CALL_INTERVAL_MS (the
      // SDK throttles what it sends to the server further), on a timer while a slow page is fetched, and at the end
      let lastBeatAt = 0;
      const beat = (force = false) => {
        const now = Date.now();
        if (!force && now - lastBeatAt < HEARTBEAT_CALL_INTERVAL_MS) return;
        lastBeatAt = now;
        heartbeat(snapshot, context);
      };
      // a long batch tells its workflow how far it got, so the `progress` query is live (best effort)
      const batch = `${input.runNo}:${input.state.pages}`;
      let lastReportAt = Date.now();
      const report = () => {
        const now = Date.now();
        if (now - lastReportAt < PROGRESS_SIGNAL_INTERVAL_MS) return;
        lastReportAt = now;
        const { workflowExecution } = context.info;
        let client;
        try {
          client = context.client;
        } catch {
          return; // no client in this context (MockActivityEnvironment)
        }
        if (!workflowExecution || !client) return;
        const t = snapshot.totals;
        const progress: BatchProgress = { batch, page: snapshot.state.pages, pages: t.pages, records: t.records, bytes: t.bytes, rows: t.rows, cursor: cursorOf(snapshot.state) };
        client.workflow.getHandle(workflowExecution.workflowId, workflowExecution.runId).signal('extractProgress', progress).catch(() => undefined);
      };
      const timer = setInterval(() => beat(true), Math.max(1_000, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 30_000) / 3)));
      const options = { ...fetchOptions(input.fetch, context.cancellationSignal, () => beat(true)), dispatcher: deps.http.extractor };

      // stored groups in order; the resume point moves to a group's snapshot once it and all before it are stored
      const writes: Array<{ done: Promise<void>; stored: boolean; snapshot: FetchPagesCheckpoint }> = [];
      const advance = () => {
        while (writes[0]?.stored) snapshot = writes.shift()!.snapshot;
        beat();
        report();
      };
      const settleOldest = async () => {
        const oldest = writes[0]!;
        await oldest.done;
        oldest.stored = true; // (its own handler may have run first and shifted it already)
        advance();
      };
      const settleAll = async () => {
        while (writes.length > 0) await settleOldest();
        beat(true);
      };
      let group: PageGroup | null = null;
      /** Stores the group; once stored (with all before it), `after` becomes the resume point. */
      const stage = async (after: FetchPagesCheckpoint) => {
        const g = group;
        group = null;
        if (g && g.tables.size > 0) {
          const done = Promise.all(
            [...g.tables].map(([table, lines]) => store.put(pageKey(input.runKey, input.runNo, g.first, g.last, table), lines.join(''))),
          ).then(() => undefined);
          const entry = { done, stored: false, snapshot: after };
          done.then(
            () => {
              entry.stored = true;
              advance();
            },
            () => undefined, // awaited in order by settleOldest; this only keeps Node from calling it unhandled
          );
          writes.push(entry);
        } else {
          writes.push({ done: Promise.resolve(), stored: true, snapshot: after });
          advance();
        }
        while (writes.length > GROUP_WRITES_IN_FLIGHT) await settleOldest();
      };
      const addRows = (pageNo: number, tables: ReadonlyArray<{ name: string; rows: ReadonlyArray<Record<string, string>> }>) => {
        group ??= { first: pageNo, last: pageNo, tables: new Map(), chars: 0, startedAt: Date.now() };
        group.last = pageNo;
        for (const t of tables) {
          if (t.rows.length === 0) continue;
          let lines = group.tables.get(t.name);
          if (!lines) group.tables.set(t.name, (lines = []));
          for (const row of t.rows) {
            const line = `${JSON.stringify(row)}\n`;
            lines.push(line);
            group.chars += line.length;
          }
        }
      };
      const warn = (warnings: readonly string[]) => {
        for (const w of warnings) if (!totals.warnings.includes(w)) totals.warnings = [...totals.warnings, w];
      };
      const startedAt = Date.now();
      const result = (pending: PendingPage | null, extra: Partial<FetchPagesResult> = {}): FetchPagesResult => ({ ...totals, state, pending, resumed, ...extra });

      try {
        while (state.next) {
          const pageNo = state.pages + 1;
          let fetched;
          try {
            fetched = await fetchPage(state.next, options);
          } catch (err) {
            if (!(err instanceof ExtractRateLimitedError)) throw err;
            await stage({ state, totals: { ...totals } });
            await settleAll();
            return result(null, { rateLimitedMs: err.retryAfterMs, rateLimitMessage: err.message });
          }
          const page = processPage(state, input.job, fetched, input.context);
          const last =
            !page.extract ||
            page.children.length > 0 ||
            totals.fetched + 1 >= input.maxPages ||
            Date.now() - startedAt >= input.maxMs ||
            context.cancellationSignal.aborted;
          if (last) {
            // the group so far ends at the previous page (stepped); the un-stepped last page is a group of its own,
            // so a retry that resumes before it deletes exactly that group
            const before: FetchPagesCheckpoint = { state, totals: { ...totals } };
            await stage(before);
            if (page.extract) addRows(pageNo, page.tables);
            await stage(before);
          } else {
            addRows(pageNo, page.tables);
          }
          totals.fetched++;
          if (page.extract) {
            totals.pages++;
            totals.records += page.result.recordCount;
            totals.bytes += page.result.bytes;
            totals.schema = mergeTableSchema(totals.schema, page.schemaDelta);
            totals.rows = { ...totals.rows };
            for (const t of page.tables) if (t.rows.length > 0) totals.rows[t.name] = (totals.rows[t.name] ?? 0) + t.rows.length;
          }
          warn(page.warnings);
          if (last) {
            await settleAll();
            const children: ChildSpec[] = page.children.map((c) => ({ jobId: c.job.id, endpoint: c.job.endpoint, parentColumns: c.parentColumns, parent: c.parent }));
            return result({ pageNo, result: page.result, children });
          }
          const step = nextStep(state, page.result, Date.now());
          warn(step.warnings);
          state = step.state;
          const g = group as PageGroup | null;
          if (!state.next || (g && (g.last - g.first + 1 >= GROUP_MAX_PAGES || g.chars >= GROUP_MAX_CHARS || Date.now() - g.startedAt >= GROUP_MAX_MS))) {
            await stage({ state, totals: { ...totals } });
          }
        }
        await settleAll();
        return result(null);
      } finally {
        clearInterval(timer);
        // never leave a write running unobserved when failing
        await Promise.allSettled(writes.map((w) => w.done));
      }
    });
}
