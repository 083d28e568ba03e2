import { Context } from '@temporalio/activity';
import type { RunContext } from '../extractor/page';
import type { ScrollerState } from '../extractor/scroller';
import type { RequestAuth } from '../extractor/http/send-request';
import { mergeTableSchema, type TableSchema } from '../extractor/table-schema';
import type { HttpClientConfig, JobConfig } from '../extractor/types';
import type { ExtractFetchTuning, PendingPage } from '../contracts/extract';
import { markedResumePoint, PageGroupWriter, recoverPageLogs } from '../object-storage/page-group-writer';
import { stageStoreOf } from '../object-storage/stage-store';
import type { ActivityDeps } from './deps';
import { asActivity, lastHeartbeat, throttledHeartbeat } from './context';
import { assertOwnRunKey } from './ownership';
import { secretsOf, startPageLoop, type LoopPage } from './extract-page-loop';
import { recordSpan, tracingOn } from '../observability/spans';

/** Shortest time between two heartbeat calls while pages stream in (ms). */
export const HEARTBEAT_CALL_INTERVAL_MS = 200;

/** Pages a batch fetches beyond the last one staged (the page loop stops there while the staging catches up). */
export const PAGES_AHEAD = 32;

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
  /** Pages to fetch at most (1 in page mode as it ran before page checkpoints). */
  maxPages: number;
  /**
   * Page mode: every page is staged with its resume point before the next one is fetched (a line of the call's page
   * log on a local folder, a group with a checkpoint marker on S3; see `PageGroupWriter`), and a retry resumes from
   * the newest one, so a crash loses at most the page in flight. Default false: pages
   * are staged in groups and a retry resumes from the last heartbeat the server received.
   */
  pageCheckpoints?: boolean;
  /** Time budget (ms): no new page is started after it. */
  maxMs: number;
  fetch?: ExtractFetchTuning;
  /** The configuration's `api.client` (retries, ignored statuses, timeouts, TLS, signing; secrets as references). */
  client?: HttpClientConfig;
  /** The configuration's authentication (references, never values), applied when each request is sent. */
  auth?: RequestAuth;
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
  // --- ge-legacy ---
  /** The run's renamed parent columns after these pages (the input's plus new ones); absent: none so far. */
  parentAliases?: Record<string, string>;
  // --- end ge-legacy ---
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

/** Adds an extracted page to the totals (copy-on-write: checkpoints already taken share `rows` and `warnings`). */
function countPage(totals: FetchPagesTotals, page: LoopPage): void {
  totals.pages++;
  totals.records += page.result.recordCount;
  totals.bytes += page.result.bytes;
  totals.schema = mergeTableSchema(totals.schema, page.schemaDelta);
  if (page.parentAliases) totals.parentAliases = page.parentAliases; // ge-legacy
  totals.rows = { ...totals.rows };
  for (const t of page.tables) if (t.rows > 0) totals.rows[t.name] = (totals.rows[t.name] ?? 0) + t.rows;
}

function addWarnings(totals: FetchPagesTotals, warnings: readonly string[]): void {
  for (const w of warnings) if (!totals.warnings.includes(w)) totals.warnings = [...totals.warnings, w];
}

/**
 * Fetches pages of one job run, from the checkpointed scroller state. The page loop (send → read the page → `nextStep`
 * → rows as JSON lines) runs in the page-loop thread (`extract-page-loop.ts`); here each page's lines go to a
 * {@link PageGroupWriter}, which stages every group of consecutive pages (100 pages, 4 MiB of rows or 1 s, checked
 * after each report of the loop: up to 16 pages more) as one object per table,
 * `<runKey>/r<run>/p<first>-<last>/<table>.jsonl`; once a group (and every group before it) is stored the activity
 * heartbeats `{state, totals}`: the resume point. The loop stops and hands the last page back un-stepped (`pending`,
 * staged as a group of its own) when the page has child runs, when `maxPages`/`maxMs` is reached or on a repeated
 * response, so the workflow decides.
 *
 * No duplicates: a resume point is always the end of a stored group, and a retry (attempt > 1) first deletes every
 * group of this job run that starts after its resume point (written by an attempt that died before its heartbeat
 * reached the server), then fetches those pages again. This holds even when the API answers differently the second
 * time. A long `Retry-After` ends the call with `rateLimitedMs` (the workflow waits on a durable timer).
 */
export function fetchPages(deps: ActivityDeps) {
  return (input: FetchPagesInput): Promise<FetchPagesResult> =>
    asActivity(async () => {
      // another run's staging key is refused before anything is read or staged (forged run state)
      await assertOwnRunKey(input.runKey, 'runKey');
      const context = Context.current();
      const store = stageStoreOf(deps);
      const batch = `${input.runNo}:${input.state.pages}`;
      // the resume point: the newest of the last heartbeat the server received and (page checkpoints) the newest
      // complete marker an earlier attempt of this call staged
      let previous = lastHeartbeat<FetchPagesCheckpoint>();
      if (input.pageCheckpoints && context.info.attempt > 1) {
        await recoverPageLogs(store, input.runKey, input.runNo);
        const marked = await markedResumePoint<FetchPagesCheckpoint>(store, input.runKey, input.runNo, batch, input.state.pages);
        if (marked && (previous === undefined || marked.state.pages > previous.state.pages)) previous = marked;
      }
      const from = previous !== undefined && previous.state.jobId === input.state.jobId && previous.state.pages >= input.state.pages ? previous : undefined;
      const resumed = from !== undefined;
      let state: ScrollerState = from?.state ?? input.state;
      const totals: FetchPagesTotals = from?.totals ?? emptyTotals();
      const checkpoint = (): FetchPagesCheckpoint => ({ state, totals: { ...totals } });

      // the resume point reaches the SDK at most every HEARTBEAT_CALL_INTERVAL_MS as groups are stored, on a timer
      // while a slow page is fetched, on a request's retry and at the end; it is the batch's live progress too (the CLI
      // adds the pending call's heartbeat to the `progress` query's answer: no history event per report)
      const beat = throttledHeartbeat(HEARTBEAT_CALL_INTERVAL_MS, context);
      const writer = new PageGroupWriter<FetchPagesCheckpoint>({
        store,
        runKey: input.runKey,
        runNo: input.runNo,
        checkpoint: checkpoint(),
        onAdvance: (resumePoint) => {
          // the resume point is the progress too: readers of the pending activity's heartbeat see {state, totals}
          beat(resumePoint);
        },
        // page checkpoints: each page is its own group, stored with its marker before the next page is fetched
        ...(input.pageCheckpoints ? { maxPages: 1, writesInFlight: 0, markers: { tag: batch, attempt: context.info.attempt } } : {}),
      });
      // an earlier attempt may have staged groups it never checkpointed: drop them, their pages are fetched again
      if (context.info.attempt > 1) await writer.discardAfter(state.pages);
      const beatNow = () => beat(writer.checkpoint, true);
      const timer = setInterval(beatNow, Math.max(1_000, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 30_000) / 3)));
      const settle = async () => {
        await writer.settle();
        beatNow();
      };
      const result = (pending: PendingPage | null, extra: Partial<FetchPagesResult> = {}): FetchPagesResult => ({ ...totals, state, pending, resumed, ...extra });
      const trace = tracingOn();
      const take = (page: LoopPage) => {
        if (page.trace) recordPageSpan(input.job, page);
        totals.fetched++;
        if (page.extract) countPage(totals, page);
        addWarnings(totals, page.warnings);
        addWarnings(totals, page.stepWarnings);
      };
      // the pages are fetched and processed in the page-loop thread (see extract-page-loop.ts); this thread stages them
      const pages = startPageLoop(
        {
          job: input.job,
          context: { parentColumns: input.context.parentColumns, parent: input.context.parent },
          // renamed parent columns of the pages before (of this call, or of the run as the workflow gave them)
          parentAliases: totals.parentAliases ?? input.context.parentAliases,
          state,
          fetched: totals.fetched,
          maxPages: input.maxPages,
          maxMs: input.maxMs,
          startedAt: Date.now(),
          fetch: input.fetch,
          client: input.client,
          auth: input.auth,
          secrets: secretsOf(process.env, deps.settings.extractSecretEnvPrefix),
          ahead: input.pageCheckpoints ? 0 : PAGES_AHEAD,
          policy: deps.settings.policy,
          trace,
        },
        beatNow,
        context.cancellationSignal,
      );

      try {
        while (state.next) {
          const reported = await pages.next();
          if (reported.kind === 'rateLimited') {
            await writer.flush(checkpoint());
            await settle();
            return result(null, { rateLimitedMs: reported.retryAfterMs, rateLimitMessage: reported.message });
          }
          for (const page of reported.pages) {
            writer.addLines(page.pageNo, page.tables);
            take(page);
          }
          state = reported.state;
          const pending = reported.pending;
          if (pending) {
            // the group so far ends at the previous page (stepped); the un-stepped last page is a group of its own,
            // so a retry that resumes before it deletes exactly that group
            const before = checkpoint();
            await writer.flush(before);
            if (pending.extract) writer.addLines(pending.pageNo, pending.tables);
            await writer.flush(before, { alone: true });
            take(pending);
            await settle();
            return result({ pageNo: pending.pageNo, result: pending.result, children: pending.children });
          }
          if (!state.next || writer.full) await writer.flush(checkpoint());
          const lastPage = reported.pages.at(-1);
          if (lastPage) pages.ack(lastPage.pageNo);
        }
        await settle();
        return result(null);
      } finally {
        pages.stop();
        clearInterval(timer);
        await writer.drain(); // never leave a write running unobserved when failing
      }
    });
}

/**
 * The span of one extracted page (`extract page`, under the activity's span): from its request to its rows
 * flattened, as the page-loop thread measured it (see `PageTrace`). The URL without its query.
 */
function recordPageSpan(job: JobConfig, page: LoopPage): void {
  const t = page.trace!;
  const attributes = {
    'sapi.page_number': page.pageNo,
    'sapi.extract_job': job.id,
    'sapi.extract_endpoint': job.endpoint.split('?')[0],
    'sapi.rows': page.tables.reduce((sum, table) => sum + table.rows, 0),
    'sapi.response_bytes': t.bytes,
    'sapi.response_ms': t.answeredAtMs - t.sentAtMs,
    'sapi.attempts': t.attempts,
    'http.request.method': t.method,
    'http.response.status_code': t.status,
    'server.address': t.host,
    'url.path': t.path,
  };
  recordSpan('extract page', attributes, t.sentAtMs, t.doneAtMs);
}
