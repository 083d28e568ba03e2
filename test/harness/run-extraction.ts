/**
 * An extraction in process, without Temporal, on the durable run's own traversal (`src/extractor/traversal.ts`):
 * `nextJobRunToFetch` picks the job run (top-level jobs in order, a page's child runs before its next page, stop
 * reasons), `applyChildBatch` opens each child run, and each run's pages go through `processPage` and `nextStep` as the
 * `fetchPages` activity takes them. The conformance suite, the Generic-Extractor examples and the benchmark's
 * "plain loop" baseline run on it, so what they prove holds for the traversal the workflow uses.
 */
import { findJob, storageColumnNames } from '../../src/contracts/extract-plan';
import type { ChildSpec } from '../../src/extractor/checkpoint';
import { iterationConfigs } from '../../src/extractor/config-iterations';
import type { FlatTable } from '../../src/extractor/flatten';
import { functionScopeOf } from '../../src/extractor/functions';
import { nodeCryptoFunctions } from '../../src/extractor/http/node-functions';
import { requestAuthOf, type RequestAuth } from '../../src/extractor/http/send-request';
import { configMappedTables, mappedPrimaryKeys } from '../../src/extractor/mapping';
import { processPage } from '../../src/extractor/page';
import { parentAliasesOf, parserStateOf, parserStructOf, schemaFromStruct, seedSchema } from '../../src/extractor/parser-struct';
import { runTimesOf, withRunTimes, type ExtractRunState } from '../../src/extractor/run-state';
import { createScrollerState, nextStep, type StopReason } from '../../src/extractor/scroller';
import { columnNamesFor } from '../../src/extractor/table-names';
import { alignRow, createTableSchema, mergeTableSchema, type TableSchema } from '../../src/extractor/table-schema';
import { applyChildBatch, nextJobRunToFetch, type Traversal } from '../../src/extractor/traversal';
import type { ExtractorConfig, ExtractRunTimes, HttpClientConfig, JobConfig, RequestDescriptor } from '../../src/extractor/types';
import { userDataForRun } from '../../src/extractor/user-data-functions';

/** A fetched response: decoded body, body size in bytes, hash of the raw body. */
export interface FetchedPage {
  body: unknown;
  bytes: number;
  hash: string;
  status?: number;
}

/** Dependencies and options of `runExtraction`. */
export interface RunExtractionOptions {
  /**
   * Sends one request (e.g. `createPageFetcher()` from `./http/fetch-page`, or a fake); the second argument is the
   * configuration's `api.client` (retries, ignored statuses, TLS, signing), the third the authentication
   * of the iteration being run (`null`: none), as `createRequestSender` takes them.
   */
  fetchPage: (request: RequestDescriptor, client: HttpClientConfig, auth?: RequestAuth | null) => Promise<FetchedPage>;
  /** This run's times for `{"time": …}` functions (default: previousStart 0, currentStart the extraction's start). */
  runTimes?: ExtractRunTimes;
  /** The previous run's state: its `json_parser.struct` seeds the tables' columns (`parser-struct.ts`). */
  runState?: ExtractRunState | null;
  /** Clock in ms (default `Date.now`), for `forceStop.time`. */
  now?: () => number;
  /** Called with every extracted page's tables (e.g. to stream them somewhere). */
  onPage?: (tables: FlatTable[], job: JobConfig) => void | Promise<void>;
  /** Keep rows in memory for the result (default true; turn off for big benchmark runs). */
  keepRows?: boolean;
  /** Keep every request descriptor for the result (default true; turn off for big benchmark runs). */
  keepRequests?: boolean;
}

/** One output table: columns (Storage-safe, unique, the parser's order) and complete rows keyed by column. */
export interface ExtractedTable {
  columns: string[];
  rows: Array<Record<string, string>>;
  /** A mapped table's primary key (column names as in `columns`); absent when it has none. */
  primaryKey?: string[];
}

/** Summary of one job run (a child job runs once per parent row). */
export interface JobRunSummary {
  jobId: string;
  /** URL of the run's first request. */
  url: string;
  pages: number;
  records: number;
  bytes: number;
  stopReason: StopReason | null;
}

/** Result of `runExtraction`. */
export interface ExtractionResult {
  tables: Record<string, ExtractedTable>;
  /** Every request sent, in order (empty with `keepRequests: false`). */
  requests: RequestDescriptor[];
  warnings: string[];
  runs: JobRunSummary[];
  /** Pages extracted in all. */
  pages: number;
  /** `config.incrementalOutput`: the tables are meant to be loaded incrementally (manifest `incremental`). */
  incremental: boolean;
  /** The run's times as given (`null`: not given). */
  runTimes: ExtractRunTimes | null;
  /** The `json_parser.*` keys the next run's state gets: the parser structure with this run's tables. */
  parserState: Record<string, unknown>;
}

/**
 * Runs every job of the configuration (each iteration in turn, into the same tables) and returns the tables, the
 * requests sent and the warnings. The clock is read where the durable run reads it: when a job run starts and when
 * a page is stepped.
 */
export async function runExtraction(configIn: ExtractorConfig, options: RunExtractionOptions): Promise<ExtractionResult> {
  const now = options.now ?? Date.now;
  const keepRows = options.keepRows ?? true;
  const keepRequests = options.keepRequests ?? true;
  // the run's times as given (or already in the configuration), else the reference's first run: previousStart 0 and
  // currentStart the extraction's start (the first job run's start: one clock reading for both)
  const firstReading = now();
  const givenRunTimes = options.runTimes ?? configIn.config.runTimes ?? null;
  const runTimes = givenRunTimes ?? runTimesOf(null, firstReading);
  const requests: RequestDescriptor[] = [];
  const warnings: string[] = [];
  const runs: JobRunSummary[] = [];
  const summaries = new Map<number, JobRunSummary>();
  const rows = new Map<string, Array<Record<string, string>>>();
  let schema: TableSchema = createTableSchema();
  let pages = 0;
  // renamed parent columns, for the rest of the run (and those the previous run's state kept)
  let parentAliases: Record<string, string> | undefined = parentAliasesOf(options.runState);
  // the child lists `fetchPages` stages, kept here by key
  const childLists = new Map<string, ChildSpec[]>();
  const t: Traversal = { nextJob: 0, nextRunNo: 0, frames: [], stopReasons: {} };
  let reading: number | undefined = firstReading;

  let config = configIn;
  for (const iteration of iterationConfigs(configIn)) {
    config = withRunTimes(iteration, runTimes);
    t.nextJob = 0;
    for (;;) {
      // a batch of child runs needs no clock (the child run's start reads it); a job run to start or a page to step does
      const top = t.frames[t.frames.length - 1];
      const ref = top?.pending?.children;
      const taken = ref && ref.next < ref.count ? undefined : (reading ?? now());
      reading = undefined;
      const next = nextJobRunToFetch(t, config, taken ?? Number.NaN);
      warnings.push(...next.warnings);
      if (next.children) {
        const batch = next.children;
        const spec = childLists.get(batch.ref.key)![batch.ref.next]!;
        const state = createScrollerState({ ...findJob(config, spec.jobId), endpoint: spec.endpoint }, config.api, taken ?? now(), functionScopeOf(config));
        applyChildBatch(t, batch, { done: 0, stopReasons: {}, open: { spec, state, pending: null } });
        continue;
      }
      const frame = next.frame;
      if (!frame) break;
      let summary = summaries.get(frame.runNo);
      if (!summary) {
        summary = { jobId: frame.jobId, url: frame.state.next?.url ?? '', pages: 0, records: 0, bytes: 0, stopReason: null };
        summaries.set(frame.runNo, summary);
        runs.push(summary);
      }
      // user functions in userData, evaluated at the run's start (as the workflow does)
      const job = userDataForRun({ ...findJob(config, frame.jobId), endpoint: frame.endpoint }, functionScopeOf(config), frame.state.startedAtMs);
      // the run's pages as fetchPages takes them: stepped here until a page has child runs or the run ends
      while (frame.state.next) {
        const request = frame.state.next;
        if (keepRequests) requests.push(request);
        const fetched = await options.fetchPage(request, config.api.client, requestAuthOf(config) ?? null);
        const page = processPage(frame.state, job, fetched, {
          parentColumns: frame.parentColumns,
          parent: frame.parent,
          crypto: nodeCryptoFunctions,
          nowMs: frame.state.startedAtMs,
          parentAliases,
        });
        parentAliases = page.parentAliases ?? parentAliases;
        warnings.push(...page.warnings);
        if (page.extract) {
          pages++;
          schema = mergeTableSchema(schema, page.schemaDelta);
          if (keepRows) {
            for (const table of page.tables) {
              const list = rows.get(table.name) ?? [];
              for (const row of table.rows) list.push(row);
              rows.set(table.name, list);
            }
          }
          await options.onPage?.(page.tables, job);
          if (page.children.length > 0) {
            // the traversal runs the children, then steps this page: their time counts against forceStop.time
            const key = `r${frame.runNo}-p${pages}`;
            childLists.set(
              key,
              page.children.map((run) => ({ jobId: run.job.id, endpoint: run.job.endpoint, parentColumns: run.parentColumns, parent: run.parent })),
            );
            frame.pending = { pageNo: pages, result: page.result, children: { key, count: page.children.length, next: 0 } };
            break;
          }
        }
        const step = nextStep(frame.state, page.result, now());
        warnings.push(...step.warnings);
        frame.state = step.state;
        Object.assign(summary, { pages: frame.state.pages, records: frame.state.records, bytes: frame.state.bytes, stopReason: frame.state.stopReason });
      }
    }
  }

  // the previous run's parser structure keeps its columns (and their order) in the tables this run wrote
  schema = seedSchema(schema, schemaFromStruct(parserStructOf(options.runState)));
  // every mapped table exists, even without rows (the reference writes its header)
  schema = mergeTableSchema(
    schema,
    configMappedTables(config).map((t) => ({ name: t.name, keys: t.columns })),
  );
  const tables: Record<string, ExtractedTable> = {};
  const primaryKeys = mappedPrimaryKeys(config);
  for (const [name, keys] of Object.entries(schema)) {
    // the names the durable load gives Storage (`-` → `_`, unique ignoring case), so both paths agree
    const columns = storageColumnNames(columnNamesFor(keys));
    tables[name] = {
      columns,
      rows: (rows.get(name) ?? []).map((row) => {
        const values = alignRow(keys, row);
        return Object.fromEntries(columns.map((c, i) => [c, values[i]]));
      }),
    };
    // a mapped table's primary key, named like its columns
    const primaryKey = (primaryKeys[name] ?? []).map((k) => columns[keys.indexOf(k)]).filter((c): c is string => c !== undefined);
    if (primaryKey.length > 0) tables[name].primaryKey = primaryKey;
  }
  const parserState = parserStateOf(schema, configIn, options.runState, parentAliases);
  return { tables, requests, warnings, runs, pages, incremental: config.config.incrementalOutput, runTimes: givenRunTimes, parserState };
}
