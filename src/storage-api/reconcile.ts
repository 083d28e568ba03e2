/**
 * Making non-idempotent async POSTs safe to retry. `tables-async`, `import-async` and `export-async` each create a
 * job; when the response is lost (network error after sending, 5xx, timeout) the job may exist anyway. These
 * helpers find it in `GET jobs` (newest first, walking back page by page to the jobs created before the operation
 * started, however many jobs the project ran meanwhile) and only POST again when the job provably does not exist.
 * A job is adopted only when it provably belongs to this request:
 * - the request carried a marker (`runId`, sent as `X-KBC-RunId`, recorded by the service on the job): a job with
 *   another non-empty `runId` is never ours;
 * - imports: the operation, the source file id (unique to one upload) and the table match;
 * - exports: every parameter that shapes the output matches (columns, limit, gzip); an export with filters, order or
 *   time bounds is adopted only by its marker, since those parameters have no comparable form in a job.
 * Invariants: never two imports of the same file into the same table; never another export's file.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SapiError, SapiErrorCode, SapiInvalidResponseError, SapiStorageError, unlessNotFound } from '../errors';
import {
  type CreateTableAsyncInput,
  type CreateTableDefinitionInput,
  type ExportTableAsyncInput,
  type LoadTableAsyncInput,
  type StorageClient,
} from './client';
import { type Job, type StorageFile } from './schemas';

/**
 * Jobs fetched per `GET jobs` page while reconciling. Default 100. A scan walks back page by page until it reaches
 * jobs created before the operation started (`since`), however many jobs the project ran since: the bound is time,
 * never a count of jobs.
 */
export const DEFAULT_RECONCILE_PAGE_SIZE = 100;
/**
 * Full pages in a row that bring no job older than those already seen before a scan concludes the service ignores
 * `offset` (it would otherwise walk forever) and fails with `SAPI_INVALID_RESPONSE`. Default 20. A page of only newer
 * jobs is what a flood of new jobs between two requests looks like too, hence more than one.
 */
export const RECONCILE_STALLED_PAGES = 20;
/** How far back an import lookup looks when no `since` is given. Default 24 h. */
export const DEFAULT_IMPORT_LOOKBACK_MS = 24 * 60 * 60 * 1000;
/** How far back an export lookup looks when no `since` is given. Default 10 min. */
export const DEFAULT_EXPORT_LOOKBACK_MS = 10 * 60 * 1000;
/** Tolerated clock difference between us and the service when comparing `createdTime` with `since`. 2 min. */
export const CLOCK_SKEW_MS = 2 * 60 * 1000;
/**
 * Waits before each lookup after an ambiguous failure: a request whose response timed out may still be in flight
 * on the service, so we look more than once before concluding it never arrived. Default 0 s, 2 s, 5 s.
 */
export const DEFAULT_RECONCILE_DELAYS_MS: readonly number[] = Object.freeze([0, 2_000, 5_000]);

type JobLister = Pick<StorageClient, 'listJobs'>;

interface ScanOptions {
  client: JobLister;
  /** The marker the creating request carried (`X-KBC-RunId`); a job recording another run id is not ours. */
  runId?: string;
  /** Only jobs created at or after this instant (minus {@link CLOCK_SKEW_MS}) are considered. */
  since?: Date | string | number;
  pageSize?: number;
  signal?: AbortSignal;
}

export type FindJobForImportInput = ScanOptions & { fileId: number } & (
    { operationName: 'tableImport'; tableId: string } | { operationName: 'tableCreate'; bucketId: string; name: string }
  );

export interface FindJobForExportInput extends ScanOptions {
  tableId: string;
  /** The export's parameters: a job without our marker is adopted only when they provably match. */
  params?: Omit<ExportTableAsyncInput, 'signal' | 'tableId' | 'runId'>;
}

/** Finds the job that imports `fileId` (into `tableId`, or as table `name` in `bucketId`), newest first. */
export async function findJobForImport(input: FindJobForImportInput): Promise<Job | undefined> {
  const sinceMs = toMs(input.since, DEFAULT_IMPORT_LOOKBACK_MS);
  return scanJobs(input, sinceMs, (job) => {
    if (job.operationName !== input.operationName) return false;
    if (!sameRun(job, input.runId)) return false;
    if (!sameId(sourceFileId(job), input.fileId)) return false;
    if (input.operationName === 'tableImport') {
      const jobTable = job.tableId ?? stringParam(job, 'tableId');
      return jobTable === undefined || jobTable === null || jobTable === input.tableId;
    }
    const expectedTableId = `${input.bucketId}.${input.name}`;
    const name = stringParam(job, 'name');
    const bucketId = stringParam(job, 'bucketId');
    if (name !== undefined && name !== input.name) return false;
    if (bucketId !== undefined && bucketId !== input.bucketId) return false;
    // tableId is null until the job created the table; the table id follows `<bucketId>.<name>`.
    return job.tableId === undefined || job.tableId === null || job.tableId === expectedTableId;
  });
}

/**
 * Finds the newest `tableExport` job of `tableId` created since `since` that is provably this export: it carries
 * our marker, or (on a service that records no run id) the same output-shaping parameters.
 */
export async function findJobForExport(input: FindJobForExportInput): Promise<Job | undefined> {
  const sinceMs = toMs(input.since, DEFAULT_EXPORT_LOOKBACK_MS);
  return scanJobs(input, sinceMs, (job) => {
    if (job.operationName !== 'tableExport' || (job.tableId ?? stringParam(job, 'tableId')) !== input.tableId) return false;
    if (input.runId !== undefined && job.runId === input.runId) return true;
    if (!sameRun(job, input.runId)) return false;
    return sameExportParams(job, input.params ?? {});
  });
}

/** False when the job records a run id other than `runId` (then another request created it). */
function sameRun(job: Job, runId: string | undefined): boolean {
  if (runId === undefined) return true;
  return job.runId === undefined || job.runId === null || job.runId === '' || job.runId === runId;
}

/** Whether an export job was started with these parameters, as far as they can be compared. */
function sameExportParams(job: Job, params: NonNullable<FindJobForExportInput['params']>): boolean {
  // filters, order and time bounds have no portable form in a job's operationParams: never guess
  if (params.whereFilters?.length || params.orderBy?.length || params.changedSince !== undefined || params.changedUntil !== undefined) return false;
  const op = job.operationParams ?? {};
  if (hasValue(op['whereFilters']) || hasValue(op['orderBy']) || hasValue(op['changedSince']) || hasValue(op['changedUntil'])) return false;
  const columns = (v: unknown): string => (Array.isArray(v) ? v.join(',') : typeof v === 'string' ? v : '');
  if (columns(op['columns']) !== (params.columns ?? []).join(',')) return false;
  const limit = op['limit'];
  if ((limit === undefined || limit === null || limit === '' ? undefined : Number(limit)) !== params.limit) return false;
  const gzip = op['gzip'];
  return (gzip === true || gzip === 1 || gzip === '1' || gzip === 'true') === (params.gzip ?? false);
}

function hasValue(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);
}

/**
 * Walks `GET jobs` newest first until `match` takes a job, a job older than `sinceMs` (minus {@link CLOCK_SKEW_MS})
 * shows up, or the list ends. New jobs created while it walks only push the older ones to higher offsets, so a page
 * may repeat a job but none is skipped.
 */
async function scanJobs(opts: ScanOptions, sinceMs: number, match: (job: Job) => boolean): Promise<Job | undefined> {
  const pageSize = opts.pageSize ?? DEFAULT_RECONCILE_PAGE_SIZE;
  const threshold = sinceMs - CLOCK_SKEW_MS;
  let oldestId = Infinity;
  let stalled = 0;
  for (let offset = 0; ; offset += pageSize) {
    const jobs = await opts.client.listJobs({ limit: pageSize, offset, signal: opts.signal });
    let older = false;
    for (const job of jobs) {
      const created = job.createdTime ? Date.parse(job.createdTime) : NaN;
      if (!Number.isNaN(created) && created < threshold) return undefined; // newest first: everything after is older
      if (match(job)) return job;
      const id = Number(job.id);
      if (id < oldestId) {
        oldestId = id;
        older = true;
      }
    }
    if (jobs.length < pageSize) return undefined;
    stalled = older ? 0 : stalled + 1;
    if (stalled >= RECONCILE_STALLED_PAGES) {
      throw new SapiInvalidResponseError({
        request: { method: 'GET', path: '/v2/storage/jobs' },
        problem: `${stalled} pages in a row (offset up to ${offset}) brought no older job: the service seems to ignore offset, so the job of a lost response cannot be looked for`,
      });
    }
  }
}

/** How a job was obtained by the *Once helpers. */
export interface StartOnceResult {
  job: Job;
  /** `posted`: our POST answered; `found`: a job created earlier (lost response or previous attempt) was found. */
  via: 'posted' | 'found';
  /** POSTs sent by this call (0–2). */
  posts: number;
}

interface OnceOptions {
  /**
   * Look for an existing job before the first POST. Set it on every activity attempt after the first: a previous
   * attempt may have created the job and crashed before recording it.
   */
  lookupFirst?: boolean;
  /** Start of the operation (e.g. the first attempt's start); bounds the job scan. */
  since?: Date | string | number;
  reconcileDelaysMs?: readonly number[];
  signal?: AbortSignal;
}

export type StartImportOnceInput = OnceOptions &
  ({ operation: 'create'; create: Omit<CreateTableAsyncInput, 'signal'> } | { operation: 'load'; load: Omit<LoadTableAsyncInput, 'signal'> });

type ImportClient = Pick<StorageClient, 'listJobs' | 'createTableAsync' | 'loadTableAsync' | 'getTable'>;

/**
 * Starts `tables-async` (create) or `import-async` (load) at most once per file and table:
 * 1. with `lookupFirst`, return an existing job for this file and table if there is one;
 * 2. POST; on success return the job;
 * 3. on an error that may have reached the service, look the job up (a few times, see
 *    {@link DEFAULT_RECONCILE_DELAYS_MS}); if found, return it;
 * 4. if not found (and, for create, the table does not exist), POST once more; if the table exists without a
 *    job of ours, fail with `SAPI_ALREADY_EXISTS`.
 * Any other error is thrown as is.
 */
export async function startImportOnce(client: ImportClient, input: StartImportOnceInput): Promise<StartOnceResult> {
  const since = defaultSince(input);
  const lookup = (postedAt?: number): Promise<Job | undefined> =>
    input.operation === 'create'
      ? findJobForImport({
          client,
          operationName: 'tableCreate',
          fileId: input.create.dataFileId,
          bucketId: input.create.bucketId,
          name: input.create.name,
          runId: input.create.runId,
          since: after(since, postedAt),
          signal: input.signal,
        })
      : findJobForImport({
          client,
          operationName: 'tableImport',
          fileId: input.load.dataFileId,
          tableId: input.load.tableId,
          runId: input.load.runId,
          since: after(since, postedAt),
          signal: input.signal,
        });
  const post = (): Promise<Job> =>
    input.operation === 'create'
      ? client.createTableAsync({ ...input.create, signal: input.signal })
      : client.loadTableAsync({ ...input.load, signal: input.signal });
  const beforeRepost = async (original: SapiError): Promise<void> => {
    if (input.operation !== 'create') return;
    const tableId = `${input.create.bucketId}.${input.create.name}`;
    if (await tableExists(client, tableId, input.signal)) {
      throw new SapiStorageError({
        code: SapiErrorCode.ALREADY_EXISTS,
        message:
          `table ${tableId} exists but no tableCreate job for file ${input.create.dataFileId} was found after a lost response ` +
          `(${original.message}); load into it instead, or delete it and retry`,
        retryable: false,
        cause: original,
        details: { tableId, fileId: input.create.dataFileId },
      });
    }
  };
  return startOnce({ lookup, post, beforeRepost, options: input });
}

export type StartExportOnceInput = OnceOptions & { export: Omit<ExportTableAsyncInput, 'signal'> };

type ExportClient = Pick<StorageClient, 'listJobs' | 'exportTableAsync'>;

/**
 * Like {@link startImportOnce} for `export-async`: a lost response is reconciled by the newest export of the table
 * since `since` that carries our marker (or provably the same parameters, see {@link findJobForExport}).
 */
export async function startExportOnce(client: ExportClient, input: StartExportOnceInput): Promise<StartOnceResult> {
  const since = defaultSince(input);
  const { tableId, runId, ...params } = input.export;
  return startOnce({
    lookup: (postedAt) => findJobForExport({ client, tableId, runId, params, since: after(since, postedAt), signal: input.signal }),
    post: () => client.exportTableAsync({ ...input.export, signal: input.signal }),
    beforeRepost: async () => undefined,
    options: input,
  });
}

export interface FindJobForTableDefinitionInput extends ScanOptions {
  bucketId: string;
  name: string;
}

/**
 * Finds the `tableDefinitionCreate` job of table `name` in `bucketId`, newest first: with a marker only a job that
 * records it (or no run id, on a service that records none). A table name is unique in its bucket, so a job for it
 * in the window is the one a lost response hid.
 */
export async function findJobForTableDefinition(input: FindJobForTableDefinitionInput): Promise<Job | undefined> {
  const sinceMs = toMs(input.since, DEFAULT_IMPORT_LOOKBACK_MS);
  const tableId = `${input.bucketId}.${input.name}`;
  return scanJobs(input, sinceMs, (job) => {
    if (job.operationName !== 'tableDefinitionCreate' || !sameRun(job, input.runId)) return false;
    if (input.runId === undefined || job.runId !== input.runId) {
      // without our marker on the job, the table it names must be ours
      const name = stringParam(job, 'name');
      const bucketId = stringParam(job, 'bucketId');
      if (name !== undefined && name !== input.name) return false;
      if (bucketId !== undefined && bucketId !== input.bucketId) return false;
    }
    return job.tableId === undefined || job.tableId === null || job.tableId === tableId;
  });
}

export type StartTableDefinitionOnceInput = OnceOptions & { definition: Omit<CreateTableDefinitionInput, 'signal'> };

type DefinitionClient = Pick<StorageClient, 'listJobs' | 'createTableDefinitionAsync' | 'getTable'>;

/**
 * Like {@link startImportOnce} for `tables-definition`: a lost response is reconciled by the job of this table that
 * carries our marker; when none shows up and the table exists, fails with `SAPI_ALREADY_EXISTS` instead of posting
 * again.
 */
export async function startTableDefinitionOnce(client: DefinitionClient, input: StartTableDefinitionOnceInput): Promise<StartOnceResult> {
  const since = defaultSince(input);
  const { bucketId, name, runId } = input.definition;
  const tableId = `${bucketId}.${name}`;
  return startOnce({
    lookup: (postedAt) => findJobForTableDefinition({ client, bucketId, name, runId, since: after(since, postedAt), signal: input.signal }),
    post: () => client.createTableDefinitionAsync({ ...input.definition, signal: input.signal }),
    beforeRepost: async (original) => {
      if (await tableExists(client, tableId, input.signal)) {
        throw new SapiStorageError({
          code: SapiErrorCode.ALREADY_EXISTS,
          message: `table ${tableId} exists but no tableDefinitionCreate job of this run was found after a lost response (${original.message}); load into it instead, or delete it and retry`,
          retryable: false,
          cause: original,
          details: { tableId },
        });
      }
    },
    options: input,
  });
}

async function startOnce(args: {
  /**
   * Looks for the job; `postedAt`: after an ambiguous POST sent at that instant, whose job (if any) was created after
   * it (less {@link CLOCK_SKEW_MS}), so the walk back stops there rather than at the operation's start.
   */
  lookup: (postedAt?: number) => Promise<Job | undefined>;
  post: () => Promise<Job>;
  beforeRepost: (original: SapiError) => Promise<void>;
  options: OnceOptions;
}): Promise<StartOnceResult> {
  const { lookup, post, beforeRepost, options } = args;
  if (options.lookupFirst) {
    const existing = await lookup();
    if (existing) return { job: existing, via: 'found', posts: 0 };
  }
  let posts = 0;
  let lastError: SapiError | undefined;
  for (let round = 0; round < 2; round++) {
    if (round === 1 && lastError) await beforeRepost(lastError);
    posts++;
    const postedAt = Date.now();
    try {
      return { job: await post(), via: 'posted', posts };
    } catch (err) {
      if (!(err instanceof SapiError) || !err.mayHaveReachedService) throw err;
      lastError = err;
    }
    // the job of a lost answer was created after the POST was sent: a long upload or outage before it does not
    // lengthen the walk back (an earlier attempt's job was looked for before posting, with lookupFirst)
    const found = await lookAgain(() => lookup(postedAt), options.reconcileDelaysMs, options.signal);
    if (found) return { job: found, via: 'found', posts };
  }
  // Two ambiguous failures and no job: give up with the last (retryable) error; the activity retries with lookupFirst.
  throw lastError as SapiError;
}

/**
 * Runs `lookup` after each delay ({@link DEFAULT_RECONCILE_DELAYS_MS}) until it finds something: after an ambiguous
 * failure the request may still be in flight on the service, so one look is not enough to conclude it never arrived.
 */
export async function lookAgain<T>(
  lookup: () => Promise<T | undefined>,
  delaysMs: readonly number[] = DEFAULT_RECONCILE_DELAYS_MS,
  signal?: AbortSignal,
): Promise<T | undefined> {
  for (const delay of delaysMs) {
    if (delay > 0) await sleep(delay, undefined, signal ? { signal } : undefined);
    const found = await lookup();
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The files created by a request that carried `runId` (see `X-KBC-RunId`), looked for again after each delay until
 * one shows up: what a caller whose create (prepare, importer upload) failed ambiguously made, if anything.
 */
export async function findFilesOfRun(
  client: Pick<StorageClient, 'listFiles'>,
  runId: string,
  options: { delaysMs?: readonly number[]; signal?: AbortSignal } = {},
): Promise<StorageFile[]> {
  const lookup = async () => {
    const files = await client.listFiles({ runId, limit: 100, signal: options.signal });
    return files.length > 0 ? files : undefined;
  };
  return (await lookAgain(lookup, options.delaysMs ?? [0], options.signal)) ?? [];
}

/** The later of `since` and `postedAt` (`since` when no POST was sent). */
function after(since: Date | string | number | undefined, postedAt: number | undefined): Date | string | number | undefined {
  if (postedAt === undefined) return since;
  if (since === undefined) return postedAt;
  const sinceMs = since instanceof Date ? since.getTime() : typeof since === 'number' ? since : Date.parse(since);
  return Number.isNaN(sinceMs) || sinceMs < postedAt ? postedAt : since;
}

/** Without `since`: a first attempt only reconciles its own POSTs (now); a retry looks back the default window. */
function defaultSince(options: OnceOptions): Date | string | number | undefined {
  return options.since ?? (options.lookupFirst ? undefined : Date.now());
}

async function tableExists(client: Pick<StorageClient, 'getTable'>, tableId: string, signal?: AbortSignal): Promise<boolean> {
  return (await unlessNotFound(() => client.getTable({ tableId, signal }))) !== undefined;
}

function sourceFileId(job: Job): unknown {
  const params = job.operationParams;
  if (!params) return undefined;
  const source = params['source'];
  if (source && typeof source === 'object' && 'fileId' in source) return (source as { fileId: unknown }).fileId;
  // Some operations put it at the top level.
  return params['fileId'] ?? params['dataFileId'];
}

function stringParam(job: Job, name: string): string | undefined {
  const v = job.operationParams?.[name];
  return typeof v === 'string' ? v : undefined;
}

function sameId(a: unknown, b: number): boolean {
  return (typeof a === 'number' || typeof a === 'string') && String(a) === String(b);
}

function toMs(since: Date | string | number | undefined, lookbackMs: number): number {
  if (since === undefined) return Date.now() - lookbackMs;
  if (since instanceof Date) return since.getTime();
  if (typeof since === 'number') return since;
  const ms = Date.parse(since);
  return Number.isNaN(ms) ? Date.now() - lookbackMs : ms;
}
