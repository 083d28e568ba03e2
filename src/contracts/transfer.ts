// Inputs, results and progress of the plugin's workflows. Types only: safe for workflow code and for callers.
import type { ReceiptOrigin, ReceiptOutcome, ReceiptsOption } from './receipts';
import type { CallWaiting } from './call-waiting';

/** CSV dialect of a source file (the service's defaults: `,` and `"`). */
export interface CsvDialect {
  delimiter?: string;
  enclosure?: string;
  /** Exclusive with `enclosure`. */
  escapedBy?: string;
}

/** How a workflow polls a Storage job: durable timers with backoff, and a deadline. */
/** A bucket id the service accepts: `in.c-name` or `out.c-name`. */
export const BUCKET_ID_PATTERN = /^(in|out)\.c-[A-Za-z0-9_-]+$/;
/** A table name the service accepts (within its bucket). */
export const TABLE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,96}$/;

/** How long a run waits out an outage of the services it calls, per call, unless told otherwise: 1 hour. */
export const DEFAULT_OUTAGE_BUDGET_MS = 60 * 60 * 1000;

export interface PollingOptions {
  /** First wait (ms). Default 1000. */
  initialMs?: number;
  /** Multiplier between waits. Default 2. */
  factor?: number;
  /** Longest wait (ms). Default 20000. */
  maxMs?: number;
  /**
   * Longest wait as a fraction of the time the job has been waited for (never below `initialMs`). Default 0.25: the
   * job's end is noticed within max(1 s, 25 % of its duration). 0 turns it off (plain ×`factor` backoff).
   */
  elapsedFraction?: number;
  /** Give up when the job has not finished this long after it started (ms). Default 6 h. */
  deadlineMs?: number;
  /**
   * After the job has been waited for this long (ms), the polling moves into one heartbeating activity that polls on
   * the same schedule until the job ends (a few history events per hour instead of about ten per poll). Default
   * 120 000; `-1` keeps every poll in the workflow.
   */
  inActivityAfterMs?: number;
}

/** The Storage job as the workflows see it: the fields they act on, nothing secret. */
export interface JobSummary {
  id: number;
  status: string;
  operationName?: string;
  tableId?: string;
  /** Present when `status` is `error`. */
  error?: { message: string; code?: string; exceptionId?: string };
  /** Selected results: rows for imports, the file for exports. */
  results?: { importedRowsCount?: number; totalRowsCount?: number; warnings?: string[]; fileId?: number; cacheHit?: boolean };
}

/** A typed column of a table `importTableWorkflow` creates (the service's `tables-definition` column). */
export interface TypedColumn {
  /** Letters, digits and underscores, at most 64 characters. */
  name: string;
  definition: {
    /** The backend's type: `VARCHAR`, `NUMBER`, `INTEGER`, `FLOAT`, `BOOLEAN`, `DATE`, `TIMESTAMP`, … */
    type: string;
    /** `255` for strings, `10,2` (precision, scale) for numbers. */
    length?: string;
    /** An empty value is allowed (NULL in non-string columns). Default true. */
    nullable?: boolean;
    default?: string;
  };
}

/** Metadata provider of the entries an import sets, unless `metadataProvider` says otherwise. */
export const DEFAULT_METADATA_PROVIDER = 'sapi-temporal';
/** Table metadata key of a table's description (what the service's UI shows). */
export const DESCRIPTION_METADATA_KEY = 'KBC.description';

export interface ImportTableInput {
  /** Named Storage connection configured on the worker (`SAPI_URL`/`SAPI_TOKEN` is `default`). Never a token. */
  connection?: string;
  /**
   * A path on the worker's host (under its `SAPI_LOCAL_ROOTS`), an `http(s)://` URL (public, or allowed by
   * `SAPI_ALLOWED_URLS`/`SAPI_ALLOWED_NETWORKS`) or an `s3://bucket/key` object (under `SAPI_ALLOWED_OBJECT_PREFIXES`).
   */
  source: string;
  /** Internal: the worker's grant for a CSV an extraction staged (set by `extractWorkflow`; useless elsewhere). */
  sourceGrant?: string;
  /** Several sources uploaded as the slices of one sliced file (headerless CSV parts, give `columns`). */
  slices?: string[];
  /** Bucket id, e.g. `in.c-main`. */
  bucketId: string;
  /** Create the bucket when it does not exist. Default false. */
  createBucket?: boolean;
  /** Table name within the bucket. */
  table: string;
  /** `create` a new table (fails if it exists) or `load` into an existing one. Default `create`. */
  mode?: 'create' | 'load';
  /** With `load`: append (upsert by primary key) instead of replacing. Default false. */
  incremental?: boolean;
  primaryKey?: string[];
  /** Columns of a headerless source (sliced uploads). */
  columns?: string[];
  /**
   * With `create`: make a typed table of these columns (`tables-definition`), then load the source into it. The
   * source's header (or `columns`) must name exactly these columns, in any order. A value that does not fit its type
   * fails the load and the run removes the empty table again.
   */
  typedColumns?: TypedColumn[];
  /** Description of the table, set as its `KBC.description` metadata after the load succeeded. */
  description?: string;
  /** More table metadata (key → value), set after the load succeeded. */
  metadata?: Record<string, string>;
  /** Provider of the metadata entries. Default {@link DEFAULT_METADATA_PROVIDER}. */
  metadataProvider?: string;
  csv?: CsvDialect;
  /** `direct` (S3 multipart with temporary credentials, resumable) or `importer` (one multipart POST). Default `direct`. */
  via?: 'direct' | 'importer';
  /** Compress while uploading. Default false. */
  gzip?: boolean;
  /** Name of the file in Storage. Default: the source's base name. */
  fileName?: string;
  tags?: string[];
  polling?: PollingOptions;
  /**
   * How long a service outage (5xx, 429, connection resets, DNS failures of the Storage API or the object store) is
   * waited out, per call, before the run fails (ms). Default {@link DEFAULT_OUTAGE_BUDGET_MS} (1 hour). A started
   * job is polled through an outage until its deadline (`polling.deadlineMs`) however small this is.
   */
  outageBudgetMs?: number;
  /** Run the transfer on this task queue (a worker on the host that has the local file). Default: the workflow's. */
  transferTaskQueue?: string;
  /**
   * Where the load's receipt goes (a row in a Storage table, docs/using.md#receipts): `{table}` names the table;
   * `false` writes none (the result still carries it). Default: the worker's `SAPI_RECEIPTS_TABLE`, else
   * `in.c-sapi-temporal.receipts`.
   */
  receipts?: ReceiptsOption;
  /** Internal: the extraction this load belongs to and what it read (set by `extractWorkflow`; its receipt names them). */
  receiptOrigin?: ReceiptOrigin;
}

export interface ImportTableResult {
  tableId: string;
  fileId: number;
  jobId: number;
  importedRowsCount: number;
  /** Bytes uploaded (after gzip when `gzip`). */
  bytes: number;
  /** sha256 of the source as read (hex). */
  sha256?: string;
  /** True when the run created a typed table. */
  typed?: boolean;
  /** Table metadata entries the run set (description and key/value pairs). */
  metadataSet?: number;
  /** The load's receipt and whether it was written (absent from runs started before receipts existed). */
  receipt?: ReceiptOutcome;
}

export type ImportPhase =
  'starting' | 'checking' | 'bucket' | 'preparing' | 'uploading' | 'defining' | 'importing' | 'metadata' | 'done' | 'failed' | 'cancelled';

export interface TransferProgress {
  phase: ImportPhase | ExportPhase;
  /** Bytes transferred so far (last report from the transfer activity). */
  bytes: number;
  totalBytes?: number;
  fileId?: number;
  jobId?: number;
  jobStatus?: string;
  tableId?: string;
  /** Slices finished / total, for sliced transfers. */
  slicesDone?: number;
  slices?: number;
  /** While a Storage job is polled: when polling gives up (ms since epoch; `extendDeadline` moves it). */
  deadlineAt?: number;
  /** Asked to cancel (the reason), until the run has ended. */
  cancelling?: string;
  /** While a call waits an outage out (Temporal retries it): which, its last failure and since when. */
  waitingFor?: CallWaiting;
  error?: string;
}

export interface ExportTableInput {
  connection?: string;
  /** e.g. `in.c-main.orders`. */
  tableId: string;
  /**
   * A path on the worker's host (under its `SAPI_LOCAL_ROOTS`) or an `s3://bucket/key` destination (under its
   * `SAPI_ALLOWED_OBJECT_PREFIXES`); see docs/security.md.
   */
  destination: string;
  /** Replace a local destination that exists. Default false: an existing file fails the run before the export starts. */
  overwrite?: boolean;
  columns?: string[];
  limit?: number;
  whereFilters?: Array<{ column: string; operator?: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'; values: string[] }>;
  orderBy?: Array<{ column: string; order?: 'ASC' | 'DESC' }>;
  changedSince?: string;
  /** Ask the service for gzipped output; the download is decompressed unless `keepGzip`. */
  gzip?: boolean;
  keepGzip?: boolean;
  /** Prepend a header row built from the table's columns to headerless sliced exports. Default true. */
  header?: boolean;
  polling?: PollingOptions;
  /**
   * How long a service outage (5xx, 429, connection resets, DNS failures of the Storage API or the object store) is
   * waited out, per call, before the run fails (ms). Default {@link DEFAULT_OUTAGE_BUDGET_MS} (1 hour). A started
   * job is polled through an outage until its deadline (`polling.deadlineMs`) however small this is.
   */
  outageBudgetMs?: number;
  transferTaskQueue?: string;
}

export interface ExportTableResult {
  path: string;
  bytes: number;
  sha256: string;
  fileId: number;
  jobId: number;
  sliced: boolean;
  slices: number;
}

export type ExportPhase = 'starting' | 'checking' | 'exporting' | 'downloading' | 'done' | 'failed' | 'cancelled';

/** The transfer progress a transfer activity heartbeats beside its resume point (the CLI and the UI read it). */
export interface ProgressReport {
  bytes: number;
  totalBytes?: number;
  slicesDone?: number;
  slices?: number;
}

/**
 * Added to the details of an activity failure by a step that created something before it failed (e.g. the bucket of
 * `prepareImport`), so the workflow removes it. Internal between the plugin's activities and workflows.
 */
export interface CreatedBeforeFailure {
  sapiCreated: { bucketId?: string };
}
