/**
 * A plain in-process extraction loop over the pure pieces (scroller, records, flatten, children, table schema).
 * Used by the conformance suite and as the benchmark baseline "plain loop without Temporal". Not workflow code.
 */
import type { ParentContext } from './children';
import type { FlatTable } from './flatten';
import { configMappedTables, mappedPrimaryKeys } from './mapping';
import { functionScopeOf } from './functions';
import { userDataForRun } from './user-data-functions'; // ge-iter
import { iterationConfigs } from './config-iterations'; // ge-iter
import { requestAuthOf, type RequestAuth } from './http/send-request'; // ge-iter
import { parentAliasesOf, parserStateOf, parserStructOf, schemaFromStruct, seedSchema } from './parser-struct'; // ge-iter
import { nodeCryptoFunctions } from './http/node-functions';
import { processPage } from './page';
import { createScrollerState, nextStep, type StopReason } from './scroller';
import { alignRow, createTableSchema, mergeTableSchema, type TableSchema } from './table-schema';
import { columnNamesFor } from './table-names';
import { storageColumnNames } from '../contracts/extract-plan';
import { runTimesOf, withRunTimes, type ExtractRunState } from './run-state';
import type { ExtractorConfig, ExtractRunTimes, HttpClientConfig, JobConfig, RequestDescriptor } from './types';

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
   * configuration's `api.client` (retries, ignored statuses, TLS, signing), the third (ge-iter) the authentication
   * of the iteration being run (`null`: none), as `createRequestSender` takes them.
   */
  fetchPage: (request: RequestDescriptor, client: HttpClientConfig, auth?: RequestAuth | null) => Promise<FetchedPage>;
  // --- ge-state (begin) ---
  /** This run's times for `{"time": …}` functions (default: previousStart 0, currentStart the extraction's start). */
  runTimes?: ExtractRunTimes;
  // --- ge-state (end) ---
  // --- ge-iter (begin) ---
  /** The previous run's state: its `json_parser.struct` seeds the tables' columns (`parser-struct.ts`). */
  runState?: ExtractRunState | null;
  // --- ge-iter (end) ---
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
  // --- ge-state (begin) ---
  /** `config.incrementalOutput`: the tables are meant to be loaded incrementally (manifest `incremental`). */
  incremental: boolean;
  /** The run's times as given (`null`: not given). */
  runTimes: ExtractRunTimes | null;
  // --- ge-state (end) ---
  /** (ge-iter) The `json_parser.*` keys the next run's state gets: the parser structure with this run's tables. */
  parserState: Record<string, unknown>;
}

/**
 * Runs every job of the configuration (top-level jobs in order, each fresh; children after each parent page),
 * and returns the tables, the requests sent and the warnings.
 */
export async function runExtraction(configIn: ExtractorConfig, options: RunExtractionOptions): Promise<ExtractionResult> {
  const now = options.now ?? Date.now;
  // ge-state's run times when given (or already in the configuration), else the reference's first run:
  // previousStart 0 and currentStart the extraction's start (the first job run's start: no extra clock reading)
  const givenRunTimes = options.runTimes ?? configIn.config.runTimes ?? null;
  let runTimes = givenRunTimes;
  let config = givenRunTimes ? withRunTimes(configIn, givenRunTimes) : configIn;
  const keepRows = options.keepRows ?? true;
  const keepRequests = options.keepRequests ?? true;
  const requests: RequestDescriptor[] = [];
  const warnings: string[] = [];
  const runs: JobRunSummary[] = [];
  const rows = new Map<string, Array<Record<string, string>>>();
  let schema: TableSchema = createTableSchema();
  let pages = 0;
  // renamed parent columns, for the rest of the run (ge-iter: and those the previous run's state kept)
  let parentAliases: Record<string, string> | undefined = parentAliasesOf(options.runState);

  const runJob = async (jobIn: JobConfig, parent: ParentContext | null, parentColumns: Record<string, string>) => {
    const startedAtMs = now();
    if (!runTimes) runTimes = runTimesOf(null, startedAtMs);
    if (!config.config.runTimes) config = withRunTimes(config, runTimes);
    let state = createScrollerState(jobIn, config.api, startedAtMs, functionScopeOf(config));
    const job = userDataForRun(jobIn, functionScopeOf(config), state.startedAtMs); // ge-iter: user functions in userData
    const summary: JobRunSummary = { jobId: job.id, url: state.next?.url ?? '', pages: 0, records: 0, bytes: 0, stopReason: null };
    runs.push(summary);
    while (state.next) {
      const request = state.next;
      if (keepRequests) requests.push(request);
      const fetched = await options.fetchPage(request, config.api.client, requestAuthOf(config) ?? null);
      const page = processPage(state, job, fetched, { parentColumns, parent, crypto: nodeCryptoFunctions, nowMs: state.startedAtMs, parentAliases });
      parentAliases = page.parentAliases ?? parentAliases;
      warnings.push(...page.warnings);
      if (page.extract) {
        pages++;
        schema = mergeTableSchema(schema, page.schemaDelta);
        if (keepRows) {
          for (const t of page.tables) {
            const list = rows.get(t.name) ?? [];
            for (const row of t.rows) list.push(row);
            rows.set(t.name, list);
          }
        }
        await options.onPage?.(page.tables, job);
        for (const run of page.children) await runJob(run.job, run.parent, run.parentColumns);
      }
      // After the children, like the reference: their time counts against the parent's forceStop.time.
      const step = nextStep(state, page.result, now());
      warnings.push(...step.warnings);
      state = step.state;
      Object.assign(summary, { pages: state.pages, records: state.records, bytes: state.bytes, stopReason: state.stopReason });
    }
  };

  // ge-iter: every iteration (or the configuration once), in order, into the same tables; one run's times for all
  for (const iteration of iterationConfigs(configIn)) {
    config = runTimes ? withRunTimes(iteration, runTimes) : iteration;
    for (const job of config.config.jobs) await runJob(job, null, {});
  }

  // ge-iter: the previous run's parser structure keeps its columns (and their order) in the tables this run wrote
  schema = seedSchema(schema, schemaFromStruct(parserStructOf(options.runState)));
  // --- ge-features: every mapped table exists, even without rows (the reference writes its header) ---
  schema = mergeTableSchema(schema, configMappedTables(config).map((t) => ({ name: t.name, keys: t.columns })));
  // --- end ge-features ---
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
    // --- ge-features: a mapped table's primary key, named like its columns ---
    const primaryKey = (primaryKeys[name] ?? []).map((k) => columns[keys.indexOf(k)]).filter((c): c is string => c !== undefined);
    if (primaryKey.length > 0) tables[name].primaryKey = primaryKey;
    // --- end ge-features ---
  }
  const parserState = parserStateOf(schema, configIn, options.runState, parentAliases); // ge-iter
  return { tables, requests, warnings, runs, pages, incremental: config.config.incrementalOutput, runTimes: givenRunTimes, parserState };
}
