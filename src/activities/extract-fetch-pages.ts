import { Context } from '@temporalio/activity';
import { ExtractRateLimitedError } from '../extractor/errors';
import { fetchPage, type FetchPageOptions } from '../extractor/http/fetch-page';
import { processPage, type RunContext } from '../extractor/page';
import { nextStep, type ScrollerState } from '../extractor/scroller';
import { mergeTableSchema, type TableSchema } from '../extractor/table-schema';
import type { JobConfig } from '../extractor/types';
import type { ChildSpec, ExtractFetchTuning, PendingPage } from '../workflows/extract-types';
import type { ActivityDeps } from './deps';
import { asActivity, lastHeartbeat } from './context';
import { jobRunPrefix, pageKey, parsePageKey, stageStoreOf } from './stage-store';

/** Staging writes in flight while the next pages are fetched (pages are fetched one after another). */
export const STAGE_WRITES_IN_FLIGHT = 8;

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

/**
 * Fetches pages of one job run, from the checkpointed scroller state: for every page, fetch → `processPage` →
 * stage each table's rows at `<runKey>/r<run>/p<page>/<table>.jsonl` (a re-fetched page overwrites its object) →
 * heartbeat `{state, totals}` once the page and all before it are staged. Between pages it runs the scroller
 * itself; it stops and hands the last page back un-stepped (`pending`) when the page has child runs, when
 * `maxPages`/`maxMs` is reached or on a repeated response, so the workflow decides. A retry resumes from the last
 * heartbeat and first deletes pages an earlier attempt staged beyond it (no duplicates, even if the API changed).
 * A long `Retry-After` ends the call with `rateLimitedMs` (the workflow waits on a durable timer).
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
        // an earlier attempt may have staged pages it never checkpointed: drop them, they are fetched again
        const stale = (await store.list(jobRunPrefix(input.runKey, input.runNo))).filter((key) => (parsePageKey(key)?.pageNo ?? 0) > state.pages);
        await store.delete(stale);
      }

      const beat = () => context.heartbeat(snapshot);
      const interval = Math.max(1_000, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 30_000) / 3));
      const timer = setInterval(beat, interval);
      const options = fetchOptions(input.fetch, context.cancellationSignal, beat);
      const writes: Array<{ done: Promise<void>; snapshot: FetchPagesCheckpoint }> = [];
      const settleOldest = async () => {
        const oldest = writes.shift()!;
        await oldest.done;
        snapshot = oldest.snapshot;
        beat();
      };
      const settleAll = async () => {
        while (writes.length > 0) await settleOldest();
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
            await settleAll();
            return result(null, { rateLimitedMs: err.retryAfterMs, rateLimitMessage: err.message });
          }
          const page = processPage(state, input.job, fetched, input.context);
          totals.fetched++;
          if (page.extract) {
            const tables = page.tables.filter((t) => t.rows.length > 0);
            const done = Promise.all(
              tables.map((t) => store.put(pageKey(input.runKey, input.runNo, pageNo, t.name), t.rows.map((row) => `${JSON.stringify(row)}\n`).join(''))),
            ).then(() => undefined);
            done.catch(() => undefined); // awaited in order below; this only keeps Node from calling it unhandled
            writes.push({ done, snapshot: { state, totals: { ...totals } } });
            totals.pages++;
            totals.records += page.result.recordCount;
            totals.bytes += page.result.bytes;
            totals.schema = mergeTableSchema(totals.schema, page.schemaDelta);
            totals.rows = { ...totals.rows };
            for (const t of tables) totals.rows[t.name] = (totals.rows[t.name] ?? 0) + t.rows.length;
          }
          for (const w of page.warnings) if (!totals.warnings.includes(w)) totals.warnings = [...totals.warnings, w];

          const last =
            !page.extract ||
            page.children.length > 0 ||
            totals.fetched >= input.maxPages ||
            Date.now() - startedAt >= input.maxMs ||
            context.cancellationSignal.aborted;
          if (last) {
            await settleAll();
            const children: ChildSpec[] = page.children.map((c) => ({ jobId: c.job.id, endpoint: c.job.endpoint, parentColumns: c.parentColumns, parent: c.parent }));
            return result({ pageNo, result: page.result, children });
          }
          const step = nextStep(state, page.result, Date.now());
          for (const w of step.warnings) if (!totals.warnings.includes(w)) totals.warnings = [...totals.warnings, w];
          state = step.state;
          // the snapshot taken with this page's write is the state *before* it; the state after it is safe once
          // the write is done: replace that entry's snapshot
          writes[writes.length - 1]!.snapshot = { state, totals: { ...totals } };
          if (writes.length >= STAGE_WRITES_IN_FLIGHT) await settleOldest();
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
