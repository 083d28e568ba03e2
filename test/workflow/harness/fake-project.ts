// A Storage project, its files, an object store and an extracted API, in memory: the activities of the workflow tier.
// Every fake is typed against the real activity (`SapiActivities`), so a changed activity interface fails to compile
// here. The fakes keep the outcome a user cares about (tables and their rows, files, buckets, downloads, staged
// pages, run state) so tests assert that, and every call (name, input, attempt, server time) so tests can wait for
// one (`waitFor`) instead of waiting for time to pass. Time is the test server's (skipped) time: an attempt's
// `currentAttemptScheduledTimestampMs`.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SapiActivities } from '../../../src/activities';
import type { PreparedUpload } from '../../../src/activities/prepare-file';
import type { FetchChildrenInput, FetchPagesInput } from '../../../src/activities/extract-fetch-pages';
import { SMALL_IMPORT_MAX_BYTES } from '../../../src/activities/prepare-import';
import { SapiErrorCode, toApplicationFailure } from '../../../src/errors';
import type { JobSummary } from '../../../src/contracts/transfer';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import type { ExtractRunState } from '../../../src/extractor/run-state';
import { completeReceipt, type LoadReceipt, type ReceiptOutcome } from '../../../src/contracts/receipts';

export type ActivityName = keyof SapiActivities;
type Input<N extends ActivityName> = Parameters<SapiActivities[N]>[0];

/** One attempt of an activity, as the fake saw it. */
export interface Call<N extends ActivityName = ActivityName> {
  name: N;
  input: Input<N>;
  attempt: number;
  /** Server time (ms) this attempt was scheduled at: skipped time counts. */
  at: number;
  /** The run that called it (a continue-as-new starts a new one). */
  runId: string;
  /** How it ended: undefined while running. */
  outcome?: 'ok' | 'failed';
}

/** Runs before an activity acts; throws to fail the attempt. */
export type Fault = (call: Call) => void;

export interface FakeTable {
  rows: number;
  typed: boolean;
  columns: string[];
  metadata: Record<string, string>;
}

export interface FakeFile {
  name: string;
  /** Rows of what was uploaded (undefined: prepared, nothing uploaded yet). */
  rows?: number;
  bytes?: number;
  /** Exported from this table. */
  exportOf?: string;
}

export interface FakeJob {
  id: number;
  operationName: 'tableCreate' | 'tableImport' | 'tableDefinition' | 'tableExport';
  tableId: string;
  fileId?: number;
  incremental?: boolean;
  columns?: string[];
  /** Server time it was created at. */
  createdAt: number;
  /** It ends this long after it was created (server time), unless held. */
  runsMs: number;
  /** Stays `processing` until released (`release`). */
  held: boolean;
  /** It ends in `error` with this message. */
  failWith?: string;
  /** Its end, once seen (the effect is applied once). */
  ended?: JobSummary;
}

/** A source the fake's files can be uploaded from. */
export interface FakeSource {
  rows: number;
  bytes: number;
}

const HEADER = ['id', 'name'];

/**
 * Heartbeats (a held activity stays alive past its heartbeat timeout) until `done`; a cancel of the activity ends
 * the wait with the SDK's cancellation, as a real activity ends on it.
 */
async function heartbeatUntil(done: Promise<void>): Promise<void> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), 1000);
  try {
    await Promise.race([done, context.cancelled]);
  } finally {
    clearInterval(timer);
  }
}

/** A retryable failure as the real clients raise it for a 503 (maintenance: no `Retry-After`). */
export function unavailable(what: string): ApplicationFailure {
  return ApplicationFailure.retryable(`${what} failed: 503 Service Unavailable`, SapiErrorCode.MAINTENANCE);
}

/** A fault failing every attempt scheduled in [from, until) (server time) with a 503, like a Storage API outage. */
export function outage(from: number, until: number): Fault {
  return (call) => {
    if (call.at >= from && call.at < until) throw unavailable(call.name);
  };
}

export class FakeProject {
  readonly buckets = new Set<string>(['in.c-main']);
  readonly tables = new Map<string, FakeTable>();
  readonly files = new Map<number, FakeFile>();
  readonly jobs = new Map<number, FakeJob>();
  readonly sources = new Map<string, FakeSource>([['/data/small.csv', { rows: 2, bytes: 20 }]]);
  /** Local files the exports wrote: destination → rows. */
  readonly downloads = new Map<string, { fileId: number; rows: number }>();
  /** The extracted API: endpoint → pages (10 rows each). */
  readonly api = new Map<string, number>();
  /** Staged rows: runKey → table → rows. */
  readonly staged = new Map<string, Map<string, number>>();
  readonly runStates = new Map<string, ExtractRunState>();
  /** The receipts table: receipt id → receipt (a repeated write upserts), and the table each went to. */
  readonly receipts = new Map<string, { receipt: LoadReceipt; table: string }>();
  /** The worker's receipts setting (`SAPI_RECEIPTS_TABLE`): null is `off`. */
  receiptsTable: string | null = 'in.c-sapi-temporal.receipts';
  readonly calls: Call[] = [];
  /** How long a new job runs (server time, ms); 0: it has ended when first looked at. */
  jobRunsMs = 0;
  /** New jobs stay `processing` until `release`. */
  holdJobs = false;
  /** The next `fetchPages` is answered with this Retry-After (ms) and stages nothing. */
  rateLimitOnce?: number;
  /** The next job that starts ends in `error` with this message. */
  nextJobFails?: string;
  private readonly faults = new Map<ActivityName, Fault[]>();
  private readonly waiters: Array<{ match: (call: Call) => boolean; resolve: (call: Call) => void }> = [];
  private readonly gates = new Map<ActivityName, { opened: Promise<void>; open: () => void }>();
  private nextId = 100;

  /** Calls of `name` wait (heartbeating) until `open(name)`: hold a step, act meanwhile, then let it go on. */
  hold(name: ActivityName): this {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    this.gates.set(name, { opened, open });
    return this;
  }

  /** Lets the held calls of `name` (and later ones) go on. */
  open(name: ActivityName): void {
    this.gates.get(name)?.open();
    this.gates.delete(name);
  }

  /** Fails attempts of `name` as `fault` decides (faults of one activity run in the order they were added). */
  fail(name: ActivityName, fault: Fault): this {
    this.faults.set(name, [...(this.faults.get(name) ?? []), fault]);
    return this;
  }

  /** Fails the first `times` attempts of `name` with `failure`. */
  failTimes(name: ActivityName, times: number, failure: () => Error): this {
    let left = times;
    return this.fail(name, () => {
      if (left-- > 0) throw failure();
    });
  }

  /** Lets the held jobs end (as they would have when their time came). */
  release(): void {
    this.holdJobs = false;
    for (const job of this.jobs.values()) job.held = false;
  }

  /** Attempts of `name` seen so far. */
  callsOf<N extends ActivityName>(name: N): Call<N>[] {
    return this.calls.filter((c): c is Call<N> => c.name === name);
  }

  /** Resolves with the first call (seen or to come) that matches: an event to wait for, not a time. */
  waitFor<N extends ActivityName>(name: N, match: (call: Call<N>) => boolean = () => true): Promise<Call<N>> {
    const test = (call: Call) => call.name === name && match(call as Call<N>);
    const seen = this.calls.find(test);
    if (seen) return Promise.resolve(seen as Call<N>);
    return new Promise((resolve) => this.waiters.push({ match: test, resolve: resolve as (call: Call) => void }));
  }

  /** The activities, typed against the real ones: register them on the test worker. */
  activities(): SapiActivities {
    const acts: SapiActivities = {
      registeredSearchAttributes: async () => ({ registered: [] }),
      checkImportTarget: async (input) => this.checkTarget(input),
      inspectSource: async (input) => {
        for (const source of input.sources) this.source(source);
        return { bytes: input.sources.reduce((sum, s) => sum + this.source(s).bytes, 0), columns: HEADER };
      },
      ensureBucket: async ({ bucketId }) => {
        const created = !this.buckets.has(bucketId);
        this.buckets.add(bucketId);
        return { bucketId, created };
      },
      prepareImport: async (input) => {
        const target = this.checkTarget({ ...input, createBucket: input.createBucket });
        const source = this.source(input.source);
        const createdBucket = !target.bucketExists;
        if (createdBucket) this.buckets.add(input.bucketId);
        return {
          typed: target.typed ?? false,
          bytes: source.bytes,
          createdBucket,
          target: this.prepare(input.fileName),
          small: source.bytes <= SMALL_IMPORT_MAX_BYTES,
        };
      },
      prepareFile: async (input) => this.prepare(input.name),
      uploadFile: async (input) => {
        const source = this.source(input.source);
        this.upload(input.target.fileId, source);
        return { bytes: source.bytes, sourceBytes: source.bytes, parts: 1, partsUploaded: 1, resumed: false };
      },
      uploadSlices: async (input) => {
        const slices = input.sources.map((s) => this.source(s));
        const total = { rows: slices.reduce((n, s) => n + s.rows, 0), bytes: slices.reduce((n, s) => n + s.bytes, 0) };
        this.upload(input.target.fileId, total);
        return { bytes: total.bytes, sourceBytes: total.bytes, parts: slices.length, partsUploaded: slices.length, resumed: false };
      },
      uploadViaImporter: async (input) => {
        const source = this.source(input.source);
        const fileId = this.prepare(input.name ?? 'data.csv').fileId;
        this.upload(fileId, source);
        return { fileId, bytes: source.bytes, sha256: 'f'.repeat(64) };
      },
      uploadAndStartJob: async (input) => {
        const source = this.source(input.source);
        this.upload(input.target.fileId, source);
        const tableId = `${input.bucketId}.${input.name}`;
        const job = this.startJob(input.mode === 'create' ? 'tableCreate' : 'tableImport', tableId, {
          fileId: input.target.fileId,
          incremental: input.incremental,
        });
        // the activity's own short wait: a job that ends at once is returned ended, with its receipt written there
        const seen = this.look(job, job.createdAt);
        return {
          bytes: source.bytes,
          job: seen,
          ...(input.receipt && seen.status === 'success' ? { receipt: this.receiptInside(input, seen, source.bytes) } : {}),
        };
      },
      createTableAsync: async (input) => this.summary(this.startJob('tableCreate', `${input.bucketId}.${input.name}`, { fileId: input.fileId })),
      loadTableAsync: async (input) => this.summary(this.startJob('tableImport', input.tableId, { fileId: input.fileId, incremental: input.incremental })),
      createTableDefinition: async (input) =>
        this.summary(this.startJob('tableDefinition', `${input.bucketId}.${input.name}`, { columns: input.columns.map((c) => c.name) })),
      exportTableAsync: async (input) => {
        if (!this.tables.has(input.tableId)) throw ApplicationFailure.nonRetryable(`table ${input.tableId} not found`, SapiErrorCode.NOT_FOUND);
        return this.summary(this.startJob('tableExport', input.tableId, {}));
      },
      getJob: async ({ jobId }) => {
        const job = this.jobs.get(jobId);
        if (!job) throw ApplicationFailure.nonRetryable(`job ${jobId} not found`, SapiErrorCode.NOT_FOUND);
        return this.look(job, Context.current().info.currentAttemptScheduledTimestampMs);
      },
      // an activity runs in real time, not skipped time: it answers as a busy worker's does (one look), and the
      // workflow waits a poll interval on its timer before asking again
      awaitJob: async ({ jobId }) => {
        const job = this.jobs.get(jobId);
        if (!job) throw ApplicationFailure.nonRetryable(`job ${jobId} not found`, SapiErrorCode.NOT_FOUND);
        return this.look(job, Context.current().info.currentAttemptScheduledTimestampMs);
      },
      writeReceipt: async ({ receipt, table }) => this.writeReceiptRow(receipt, table),
      setTableMetadata: async (input) => {
        const table = this.tables.get(input.tableId);
        if (!table) throw ApplicationFailure.nonRetryable(`table ${input.tableId} not found`, SapiErrorCode.NOT_FOUND);
        const entries = { ...(input.metadata ?? {}), ...(input.description !== undefined ? { 'KBC.description': input.description } : {}) };
        Object.assign(table.metadata, entries);
        return { entries: Object.keys(entries).length };
      },
      cleanUpImport: async (input) => {
        const result: Awaited<ReturnType<SapiActivities['cleanUpImport']>> = { fileDeleted: false, bucketDeleted: false, kept: [] };
        if (input.tableId) result.tableDeleted = this.tables.delete(input.tableId);
        if (input.fileId !== undefined) result.fileDeleted = this.files.delete(input.fileId);
        if (input.bucketId) {
          if ([...this.tables.keys()].some((t) => t.startsWith(`${input.bucketId}.`))) result.kept.push(`bucket ${input.bucketId} holds tables`);
          else result.bucketDeleted = this.buckets.delete(input.bucketId);
        }
        return result;
      },
      checkDestination: async (input) => {
        if (this.downloads.has(input.destination) && !input.overwrite) {
          throw ApplicationFailure.nonRetryable(`${input.destination} exists: pass overwrite`, SapiErrorCode.ALREADY_EXISTS);
        }
      },
      getFileDetails: async ({ fileId }) => ({ fileId, name: this.files.get(fileId)?.name ?? 'x', isSliced: false, tags: [] }),
      downloadFile: async (input) => {
        const file = this.files.get(input.fileId);
        if (!file) throw ApplicationFailure.nonRetryable(`file ${input.fileId} not found`, SapiErrorCode.NOT_FOUND);
        this.downloads.set(input.destination, { fileId: input.fileId, rows: file.rows ?? 0 });
        return { path: input.destination, bytes: file.bytes ?? 0, sha256: 'f'.repeat(64), sliced: false, slices: 1 };
      },
      // the extraction: the configuration is parsed for real (pure); the API is `api`, the staging `staged`
      validateExtractConfig: async (input) => {
        try {
          return parseExtractorConfig(input.config);
        } catch (err) {
          throw toApplicationFailure(err); // the activities' own mapping of our errors to coded failures
        }
      },
      fetchPages: (async (input: FetchPagesInput | FetchChildrenInput) => {
        // the fake API's jobs have no child jobs: no page hands back children, so no batch of child runs is asked for
        if ('children' in input) throw new Error('the fake project serves no child jobs');
        const limited = this.rateLimitOnce;
        if (limited !== undefined) {
          this.rateLimitOnce = undefined;
          const totals = { pages: 0, fetched: 1, records: 0, bytes: 0, schema: {}, rows: {}, warnings: [] };
          return { ...totals, state: input.state, pending: null, rateLimitedMs: limited, rateLimitMessage: '429 Too Many Requests', resumed: false };
        }
        const endpoint = input.job.endpoint;
        const total = this.api.get(endpoint) ?? 1;
        const done = input.state.pages;
        const pages = Math.max(0, Math.min(input.maxPages, total - done));
        const table = endpoint.replace(/[^A-Za-z0-9_]/g, '_');
        const rows = pages * 10;
        const staged = this.staged.get(input.runKey) ?? new Map<string, number>();
        staged.set(table, (staged.get(table) ?? 0) + rows);
        this.staged.set(input.runKey, staged);
        const last = done + pages >= total;
        return {
          pages,
          fetched: pages,
          records: rows,
          bytes: rows * 10,
          schema: { [table]: HEADER },
          rows: rows > 0 ? { [table]: rows } : {},
          warnings: [],
          state: { ...input.state, pages: done + pages, records: input.state.records + rows, next: last ? null : input.state.next },
          pending: null,
          resumed: false,
        };
      }) as unknown as SapiActivities['fetchPages'],
      buildTableCsv: async (input) => {
        const rows = this.staged.get(input.runKey)?.get(input.table) ?? 0;
        const uri = `s3://staging/${input.runKey}/${input.table}.csv`;
        this.sources.set(uri, { rows, bytes: rows * 10 });
        return { uri, grant: 'grant', rows, bytes: rows * 10, pages: 1 };
      },
      findTable: async ({ tableId }) => {
        const table = this.tables.get(tableId);
        return table ? { exists: true, columns: table.columns } : { exists: false, columns: [] };
      },
      readRunState: async ({ stateKey }) => ({ state: this.runStates.get(stateKey) ?? null, uri: `s3://state/${stateKey}.json` }),
      writeRunState: async ({ stateKey, state }) => {
        this.runStates.set(stateKey, state);
        return { uri: `s3://state/${stateKey}.json` };
      },
      cleanStaging: async ({ runKey }) => {
        const removed = this.staged.get(runKey)?.size ?? 0;
        this.staged.delete(runKey);
        return { removed, prefix: `staging/${runKey}/` };
      },
    };
    // every call recorded and passed through the faults first
    const tracked = {} as Record<string, (input: unknown) => Promise<unknown>>;
    for (const [name, fn] of Object.entries(acts) as Array<[ActivityName, (input: unknown) => Promise<unknown>]>) {
      tracked[name] = async (input: unknown) => {
        const info = Context.current().info;
        const call: Call = {
          name,
          input: input as never,
          attempt: info.attempt,
          at: info.currentAttemptScheduledTimestampMs,
          runId: info.workflowExecution?.runId ?? '',
        };
        this.calls.push(call);
        for (const waiter of this.waiters.filter((w) => w.match(call))) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(call);
        }
        try {
          const gate = this.gates.get(name);
          if (gate) await heartbeatUntil(gate.opened);
          for (const fault of this.faults.get(name) ?? []) fault(call);
          const result = await fn(input);
          call.outcome = 'ok';
          return result;
        } catch (err) {
          call.outcome = 'failed';
          throw err;
        }
      };
    }
    return tracked as unknown as SapiActivities;
  }

  /** The receipts table's upsert (`writeReceipt`'s, and the short path's own). */
  private writeReceiptRow(receipt: LoadReceipt, table: string | undefined): { status: 'written' | 'off'; table?: string } {
    const target = table ?? this.receiptsTable;
    if (target === null) return { status: 'off' };
    this.receipts.set(receipt.receiptId, { receipt, table: target });
    return { status: 'written', table: target };
  }

  /**
   * The receipt `uploadAndStartJob` writes when it saw its job end well: the faults of `writeReceipt` apply to this
   * write too (they stand for the receipts table failing), and a failure comes back as `failed`, not as the call's.
   */
  private receiptInside(input: Parameters<SapiActivities['uploadAndStartJob']>[0], job: JobSummary, bytes: number): ReceiptOutcome {
    const request = input.receipt!;
    const info = Context.current().info;
    const receipt = completeReceipt(request.draft, {
      tableId: job.tableId ?? `${input.bucketId}.${input.name}`,
      rows: job.results?.importedRowsCount ?? 0,
      bytes,
      jobId: job.id,
      endedAt: new Date(info.currentAttemptScheduledTimestampMs).toISOString(),
    });
    const table = request.table;
    try {
      const call: Call = {
        name: 'writeReceipt',
        input: { receipt, table },
        attempt: 1,
        at: info.currentAttemptScheduledTimestampMs,
        runId: info.workflowExecution?.runId ?? '',
      };
      for (const fault of this.faults.get('writeReceipt') ?? []) fault(call);
      const written = this.writeReceiptRow(receipt, table);
      return written.status === 'off' ? { receipt, status: 'off' } : { receipt, status: 'written', table: written.table! };
    } catch (err) {
      return { receipt, status: 'failed', ...(table !== undefined ? { table } : {}), error: err instanceof Error ? err.message : String(err) };
    }
  }

  private source(uri: string): FakeSource {
    const source = this.sources.get(uri);
    if (!source) throw ApplicationFailure.nonRetryable(`source ${uri} is not readable`, SapiErrorCode.INVALID_INPUT);
    return source;
  }

  private checkTarget(input: { bucketId: string; table: string; mode: 'create' | 'load'; createBucket: boolean }) {
    const bucketExists = this.buckets.has(input.bucketId);
    if (!bucketExists && !input.createBucket) throw ApplicationFailure.nonRetryable(`bucket ${input.bucketId} not found`, SapiErrorCode.NOT_FOUND);
    const table = this.tables.get(`${input.bucketId}.${input.table}`);
    if (input.mode === 'load' && !table) throw ApplicationFailure.nonRetryable(`table ${input.bucketId}.${input.table} not found`, SapiErrorCode.NOT_FOUND);
    if (input.mode === 'create' && table) throw ApplicationFailure.nonRetryable(`table ${input.bucketId}.${input.table} exists`, SapiErrorCode.ALREADY_EXISTS);
    return { bucketExists, columns: table?.columns, typed: table?.typed };
  }

  private prepare(name: string): PreparedUpload {
    const fileId = this.nextId++;
    this.files.set(fileId, { name });
    return {
      fileId,
      provider: 'aws',
      bucket: 'files',
      key: `${fileId}/${name}`,
      region: 'us-east-1',
      isSliced: false,
      expiration: '2099-01-01T00:00:00Z',
      sealedCredentials: 'sealed',
    };
  }

  private upload(fileId: number, source: FakeSource): void {
    const file = this.files.get(fileId);
    if (!file) throw ApplicationFailure.nonRetryable(`file ${fileId} not found`, SapiErrorCode.NOT_FOUND);
    Object.assign(file, source);
  }

  private startJob(operationName: FakeJob['operationName'], tableId: string, extra: Partial<FakeJob>): FakeJob {
    const job: FakeJob = {
      id: this.nextId++,
      operationName,
      tableId,
      createdAt: Context.current().info.currentAttemptScheduledTimestampMs,
      runsMs: this.jobRunsMs,
      held: this.holdJobs,
      failWith: this.nextJobFails,
      ...extra,
    };
    this.nextJobFails = undefined;
    this.jobs.set(job.id, job);
    return job;
  }

  private summary(job: FakeJob): JobSummary {
    return { id: job.id, status: 'waiting', operationName: job.operationName, tableId: job.tableId };
  }

  /** The job as seen at `now` (server time): ended (its effect applied once) when its time came and it is not held. */
  private look(job: FakeJob, now: number): JobSummary {
    if (job.ended) return job.ended;
    if (job.held || now < job.createdAt + job.runsMs) return { ...this.summary(job), status: 'processing' };
    if (job.failWith) {
      job.ended = { ...this.summary(job), status: 'error', error: { message: job.failWith, code: 'storage.tableImportFailed' } };
      return job.ended;
    }
    const rows = job.fileId !== undefined ? (this.files.get(job.fileId)?.rows ?? 0) : 0;
    const results: JobSummary['results'] = {};
    if (job.operationName === 'tableCreate') {
      this.tables.set(job.tableId, { rows, typed: false, columns: HEADER, metadata: {} });
      results.importedRowsCount = rows;
    } else if (job.operationName === 'tableDefinition') {
      this.tables.set(job.tableId, { rows: 0, typed: true, columns: job.columns ?? HEADER, metadata: {} });
    } else if (job.operationName === 'tableImport') {
      const table = this.tables.get(job.tableId);
      if (!table) throw ApplicationFailure.nonRetryable(`table ${job.tableId} not found`, SapiErrorCode.NOT_FOUND);
      table.rows = job.incremental ? table.rows + rows : rows;
      results.importedRowsCount = rows;
    } else {
      const table = this.tables.get(job.tableId)!;
      const fileId = this.nextId++;
      this.files.set(fileId, { name: `${job.tableId}.csv`, rows: table.rows, bytes: table.rows * 10, exportOf: job.tableId });
      results.fileId = fileId;
    }
    job.ended = { ...this.summary(job), status: 'success', results };
    return job.ended;
  }
}
