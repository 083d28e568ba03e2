/**
 * Everything an activity does with one fetched page, in one pure call: repeat detection, records, flattened
 * tables, the digest for the scroller and the child runs to execute next. Pure module.
 *
 * Activity sketch:
 * ```ts
 * const fetched = await fetchPage(state.next);
 * const page = processPage(state, job, fetched, { parentColumns, parent });
 * if (page.extract) await writeRows(page.tables);          // e.g. JSON lines per table
 * return { result: page.result, tables: page.schemaDelta, children: page.children, warnings: page.warnings };
 * // the workflow then calls nextStep(state, result, now) — result carries the digest, not the body
 * ```
 */
import { planChildRuns, type ChildRun, type ParentContext } from './children';
import { flattenRecords, type FlatTable } from './flatten';
import { mapRecords } from './mapping';
import { resolveRecords } from './records';
import { applyResponseFilter } from './response-filter';
import { digestPage, type PageResult, type ScrollerState } from './scroller';
import type { CryptoFunctions } from './functions';
import type { JobConfig } from './types';
import { rootColumns, runUserData } from './user-data';
import { finishUserData } from './user-data-functions';

/** Where a job run sits in the job tree (empty for a top-level job). */
export interface RunContext {
  /** `parent_<field>` columns for every row of this run (`ChildRun.parentColumns`). */
  parentColumns?: Record<string, string>;
  /** Context for this run's own children (`ChildRun.parent`); `null` for a top-level job. */
  parent?: ParentContext | null;
  /** Hashing for placeholder functions (activities pass `nodeCryptoFunctions`; never serialized). */
  crypto?: CryptoFunctions;
  /** "Now" for placeholder functions (ms): the job run's start, so a retried page gives the same child runs. */
  nowMs?: number;
  /** The run's renamed parent columns so far (`ProcessedPage.parentAliases` of the pages before, in run order). */
  parentAliases?: Record<string, string>;
}

/** What `processPage` found in a page. */
export interface ProcessedPage {
  /** False when the body repeats the previous response: write nothing, run no children. */
  extract: boolean;
  /** Small, body-free input for `nextStep` (digest, bytes, hash, record count). */
  result: PageResult;
  /** Rows per table (empty when `extract` is false). */
  tables: FlatTable[];
  /** Table names and keys of this page, for `mergeTableSchema` in the workflow (small). */
  schemaDelta: Array<Pick<FlatTable, 'name' | 'keys'>>;
  /** Child runs to execute, in order, before the job's next page. */
  children: ChildRun[];
  warnings: string[];
  /**
   * The run's renamed parent columns after this page, when there are any (the given ones plus this page's): pass
   * them as `RunContext.parentAliases` to every later page of the run, of any job (plain JSON, checkpointed).
   */
  parentAliases?: Record<string, string>;
}

/**
 * A fetched page read up to its rows: what `nextStep` and the child runs need, and `rows()` to flatten its records
 * (the larger part of the work, so a caller can send the next request first).
 */
interface ReadPage extends Omit<ProcessedPage, 'tables' | 'schemaDelta' | 'parentAliases'> {
  /** The tables, their keys and the run's renamed parent columns; `warnings` then holds every warning of the page. */
  rows(): Pick<ProcessedPage, 'tables' | 'schemaDelta' | 'warnings' | 'parentAliases'>;
}

/**
 * Processes one fetched page of `job` whose scroller state is `state` (before `nextStep`). Throws
 * `ExtractorDataError` (ambiguous root arrays) and `PlaceholderMissingError` like the underlying helpers.
 */
export function processPage(
  state: Pick<ScrollerState, 'rules' | 'lastHash'>,
  job: JobConfig,
  fetched: { body: unknown; bytes: number; hash: string },
  context: RunContext = {},
): ProcessedPage {
  const page = readPage(state, job, fetched, context);
  const { rows: _rows, ...head } = page;
  return { ...head, ...page.rows() };
}

/** {@link processPage} in two steps: the page up to its rows, then `rows()`. */
export function readPage(
  state: Pick<ScrollerState, 'rules' | 'lastHash'>,
  job: JobConfig,
  fetched: { body: unknown; bytes: number; hash: string },
  context: RunContext = {},
): ReadPage {
  // hashing calls the workflow left in `userData` (userDataForRun) finished with the run's start as "now"
  job = finishUserData(job, context.crypto, context.nowMs);
  if (state.lastHash !== null && state.lastHash === fetched.hash) {
    return {
      extract: false,
      result: { digest: digestPage(state, fetched.body), bytes: fetched.bytes, hash: fetched.hash, recordCount: 0 },
      children: [],
      warnings: [],
      rows: () => ({ tables: [], schemaDelta: [], warnings: [] }),
    };
  }
  const resolved = resolveRecords(fetched.body, job);
  // like the reference, the scroller, the parser and the mapper all see the records after responseFilter
  const records = applyResponseFilter(resolved.records, job.responseFilter);
  const digest = digestPage(state, fetched.body, records);
  const plan = planChildRuns(job, records, context.parent ?? null, context.crypto, context.nowMs);
  return {
    extract: true,
    result: { digest, bytes: fetched.bytes, hash: fetched.hash, recordCount: records.length },
    children: plan.runs,
    warnings: [...resolved.warnings, ...plan.warnings],
    rows: () => {
      const parserWarnings: string[] = [];
      const parentAliases = { ...(context.parentAliases ?? {}) };
      // a mapped data type goes through its mapping; otherwise the JSON parser, with the run's user data columns
      const tables = job.mapping
        ? mapRecords(records, job.mapping, runUserData(job, context.parent))
        : flattenRecords(records, {
            dataType: job.dataType,
            parentColumns: rootColumns(job, context.parentColumns),
            parentValues: runUserData(job, context.parent),
            warnings: parserWarnings,
            legacy: job.legacyJsonParser,
            parentAliases,
          });
      return {
        tables,
        schemaDelta: tables.map((t) => ({ name: t.name, keys: t.keys })),
        warnings: [...resolved.warnings, ...parserWarnings, ...plan.warnings],
        ...(Object.keys(parentAliases).length > 0 ? { parentAliases } : {}),
      };
    },
  };
}
