// Load receipts: one row per table load that ended well, in the run's result and in a Storage table. Types
// and pure helpers only: safe for workflow code, activities and the CLI.

/** The Storage table receipts go to unless the input or the worker names another: `in.c-sapi-temporal.receipts`. */
export const DEFAULT_RECEIPTS_TABLE = 'in.c-sapi-temporal.receipts';

/** The worker setting (`SAPI_RECEIPTS_TABLE`) value that turns receipts off on that worker. */
export const RECEIPTS_OFF = 'off';

/** A Storage table id: `in.c-bucket.table` / `out.c-bucket.table`. */
export const RECEIPTS_TABLE_PATTERN = /^(in|out)\.c-[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{1,96}$/;

/**
 * Where a run writes its receipts: `false` writes none (the result still carries them); a table id names the Storage
 * table. Default: the worker's `SAPI_RECEIPTS_TABLE`, else {@link DEFAULT_RECEIPTS_TABLE}.
 */
export type ReceiptsOption = false | { table?: string };

/** What a load read: a file (its path or URL), or an API with the window its run covered. */
export interface ReceiptSource {
  /** `file`: an import's source; `api`: an extraction's staged pages. */
  kind: 'file' | 'api';
  /** The path or URL of the file (slices joined by `,`), or the API's base URL. */
  location: string;
  /**
   * The range a run covered: for an extraction its incremental window (`previousStart` → `currentStart`, Unix
   * seconds, as the configuration's `time.previousStart`/`time.currentStart`), the state key and the pages fetched.
   */
  range?: Record<string, string | number>;
}

/** The run a load belongs to when another workflow started it (an extraction's import child). */
export interface ReceiptOrigin {
  workflowId: string;
  /** First run id of the origin's chain. */
  runId: string;
  source: ReceiptSource;
}

/** One receipt: a row of the receipts table. */
export interface LoadReceipt {
  /** `<workflow id>/<run id>/<table id>/<job id>`: the row's primary key, the same in every attempt of its write. */
  receiptId: string;
  /** The workflow that loaded (an import; an extraction's import child). */
  workflowId: string;
  /** The first run id of its chain (a continue-as-new while polling keeps it). */
  runId: string;
  /** The extraction that started the load, or the import itself. */
  originWorkflowId: string;
  originRunId: string;
  /** The worker build that wrote the receipt (empty when the worker is not versioned). */
  buildId: string;
  tableId: string;
  /** `create` (a new table), `full` (its rows replaced) or `incremental` (appended / upserted). */
  mode: 'create' | 'full' | 'incremental';
  /** Rows the job imported. */
  rows: number;
  /** Bytes uploaded. */
  bytes: number;
  fileId: number;
  jobId: number;
  source: ReceiptSource;
  /** When the run began (ISO 8601, workflow time). */
  startedAt: string;
  /**
   * When its job was seen ended well (ISO 8601): workflow time, or the worker's clock when the short path's activity
   * saw the job end within its own call (and wrote the receipt there).
   */
  endedAt: string;
}

/**
 * What became of a load's receipt: `written` into `table`; `off` (the input or the worker turned receipts off);
 * `failed` (its write failed after its own retries: the load stands, `error` says why).
 */
export interface ReceiptOutcome {
  receipt: LoadReceipt;
  status: 'written' | 'off' | 'failed';
  /** The receipts table (absent when off). */
  table?: string;
  error?: string;
}

/**
 * What a receipt holds before its load ended: the run's facts (ids, build, mode, file, source, start), known to the
 * workflow before the job starts. The short path hands it to the activity that starts the job, which completes it
 * with {@link completeReceipt} when it sees the job end well.
 */
export type ReceiptDraft = Omit<LoadReceipt, 'receiptId' | 'tableId' | 'rows' | 'bytes' | 'jobId' | 'endedAt'>;

/** The facts of a load that ended well that complete a {@link ReceiptDraft}. */
export interface ReceiptFacts {
  tableId: string;
  rows: number;
  bytes: number;
  jobId: number;
  /** When the job was seen ended well (ISO 8601). */
  endedAt: string;
}

/** A draft and the load's end as the receipt: the same receipt, with the same key, whichever side completes it. */
export function completeReceipt(draft: ReceiptDraft, facts: ReceiptFacts): LoadReceipt {
  const { tableId, rows, bytes, jobId } = facts;
  return {
    receiptId: receiptIdOf({ workflowId: draft.workflowId, runId: draft.runId, tableId, jobId }),
    workflowId: draft.workflowId,
    runId: draft.runId,
    originWorkflowId: draft.originWorkflowId,
    originRunId: draft.originRunId,
    buildId: draft.buildId,
    tableId,
    mode: draft.mode,
    rows,
    bytes,
    fileId: draft.fileId,
    jobId,
    source: draft.source,
    startedAt: draft.startedAt,
    endedAt: facts.endedAt,
  };
}

/** The receipt row's primary key: deterministic, so a repeated write is an upsert of the same row. */
export function receiptIdOf(r: Pick<LoadReceipt, 'workflowId' | 'runId' | 'tableId' | 'jobId'>): string {
  return `${r.workflowId}/${r.runId}/${r.tableId}/${r.jobId}`;
}

/** The receipts table's columns, in order; `receipt_id` is its primary key. */
export const RECEIPT_COLUMNS = [
  'receipt_id',
  'workflow_id',
  'run_id',
  'origin_workflow_id',
  'origin_run_id',
  'build_id',
  'table_id',
  'mode',
  'rows',
  'bytes',
  'file_id',
  'job_id',
  'source_kind',
  'source',
  'source_range',
  'started_at',
  'ended_at',
] as const;

export type ReceiptColumn = (typeof RECEIPT_COLUMNS)[number];

/** A receipt as the receipts table's row (every value a string). */
export function receiptRow(r: LoadReceipt): Record<ReceiptColumn, string> {
  return {
    receipt_id: r.receiptId,
    workflow_id: r.workflowId,
    run_id: r.runId,
    origin_workflow_id: r.originWorkflowId,
    origin_run_id: r.originRunId,
    build_id: r.buildId,
    table_id: r.tableId,
    mode: r.mode,
    rows: String(r.rows),
    bytes: String(r.bytes),
    file_id: String(r.fileId),
    job_id: String(r.jobId),
    source_kind: r.source.kind,
    source: r.source.location,
    source_range: r.source.range ? JSON.stringify(r.source.range) : '',
    started_at: r.startedAt,
    ended_at: r.endedAt,
  };
}

/** A receipts table row back as a receipt (unknown columns ignored, missing ones empty). */
export function receiptFromRow(row: Partial<Record<string, string>>): LoadReceipt {
  const text = (c: ReceiptColumn) => row[c] ?? '';
  let range: Record<string, string | number> | undefined;
  try {
    range = text('source_range') ? (JSON.parse(text('source_range')) as Record<string, string | number>) : undefined;
  } catch {
    range = { raw: text('source_range') };
  }
  const mode = text('mode');
  return {
    receiptId: text('receipt_id'),
    workflowId: text('workflow_id'),
    runId: text('run_id'),
    originWorkflowId: text('origin_workflow_id'),
    originRunId: text('origin_run_id'),
    buildId: text('build_id'),
    tableId: text('table_id'),
    mode: mode === 'create' || mode === 'incremental' ? mode : 'full',
    rows: Number(text('rows') || 0),
    bytes: Number(text('bytes') || 0),
    fileId: Number(text('file_id') || 0),
    jobId: Number(text('job_id') || 0),
    source: { kind: text('source_kind') === 'api' ? 'api' : 'file', location: text('source'), ...(range ? { range } : {}) },
    startedAt: text('started_at'),
    endedAt: text('ended_at'),
  };
}

/** Problems of a `receipts` input option, each naming the field. */
export function receiptsOptionProblems(value: unknown, field: string): string[] {
  if (value === undefined || value === false) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [`${field} must be false or {table?: "in.c-bucket.table"}, got ${JSON.stringify(value)}`];
  const unknown = Object.keys(value).filter((k) => k !== 'table');
  if (unknown.length) return [`${field}: unsupported ${unknown.join(', ')} (it takes table)`];
  const table = (value as { table?: unknown }).table;
  if (table !== undefined && (typeof table !== 'string' || !RECEIPTS_TABLE_PATTERN.test(table)))
    return [`${field}.table must be a table id like ${DEFAULT_RECEIPTS_TABLE}, got ${JSON.stringify(table)}`];
  return [];
}
