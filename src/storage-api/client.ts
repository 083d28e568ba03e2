/**
 * The Storage API client: one method per endpoint we use, one input object each, typed results validated with
 * zod. Transport, timeouts and retries live in `http.ts` / `retry-policy.ts`; this file only knows paths,
 * parameters and which calls are idempotent.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { type Readable } from 'node:stream';
import { type Dispatcher } from 'undici';
import { SapiInvalidInputError, SapiInvalidResponseError } from '../errors';
import { createDefaultDispatcher, createHttpTransport, DEFAULT_TIMEOUTS, type HttpTimeouts, type HttpTransport, type HttpTransportOptions } from './http';
import { encodeMultipart } from './multipart';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy';
import {
  bucketListSchema,
  bucketSchema,
  emptySchema,
  fileListSchema,
  fileSchema,
  indexSchema,
  jobListSchema,
  jobSchema,
  preparedFileSchema,
  tableListSchema,
  tableSchema,
  tokenSchema,
  type Bucket,
  type Job,
  type PreparedFile,
  type StorageFile,
  type StorageIndex,
  type Table,
  type TokenInfo,
} from './schemas';
import { metadataListSchema, tableMetadataAnswerSchema, type MetadataEntry, type TableMetadataAnswer } from './typed-schemas';

export interface StorageClientOptions {
  /** Base URL of the service, e.g. `https://connection.keboola.com` (no `/v2/storage`). */
  url: string;
  /** Storage API token, sent as `X-StorageApi-Token`. */
  token: string;
  /** Dev branch: files, buckets and tables go through `/v2/storage/branch/{branchId}/…` (jobs never do). */
  branchId?: string | number;
  /** Sent as `X-KBC-RunId` to group the calls in the service's events. */
  runId?: string;
  /** Importer URL; discovered from the index (`services[id=import]`) when absent. */
  importUrl?: string;
  /** Per-exchange timeouts. Defaults {@link DEFAULT_TIMEOUTS}. */
  timeouts?: Partial<HttpTimeouts>;
  /** Retry policy. Defaults {@link DEFAULT_RETRY_POLICY}. */
  retry?: Partial<RetryPolicy>;
  /** undici dispatcher to use (a `Pool`/`Agent`); by default an `Agent` owned (and closed) by the client. */
  dispatcher?: Dispatcher;
  /** Sockets per origin of the default agent. Default {@link DEFAULT_CONNECTIONS_PER_ORIGIN}. */
  connections?: number;
  /** Called before each retry (logs, metrics, tests). */
  onRetry?: HttpTransportOptions['onRetry'];
}

/** Options every method accepts. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of the calls that create something: a marker the service records as the `runId` of what it creates. */
export interface MarkedCallOptions extends CallOptions {
  /**
   * Sent as `X-KBC-RunId`: the service records it as `runId` on the jobs and files the request creates, so a caller
   * that lost the response can prove which job or file is its own (see `reconcile.ts`). Overrides the client's.
   */
  runId?: string;
}

export interface PrepareFileInput extends MarkedCallOptions {
  name: string;
  sizeBytes?: number;
  tags?: readonly string[];
  isSliced?: boolean;
  isEncrypted?: boolean;
  isPermanent?: boolean;
  isPublic?: boolean;
  notify?: boolean;
  /** Always true: we upload with temporary credentials. Kept in the type for symmetry with the service. */
  federationToken?: true;
}

export interface GetFileInput extends CallOptions {
  fileId: number;
  /** Ask for `s3Path` and read `credentials`. Default false. */
  federationToken?: boolean;
}

export interface ListFilesInput extends CallOptions {
  limit?: number;
  offset?: number;
  tags?: readonly string[];
  sinceId?: number;
  maxId?: number;
  q?: string;
  /** Only files created with this run id (the service's `runId` filter; also checked on our side). */
  runId?: string;
}

export interface UploadViaImporterInput extends MarkedCallOptions {
  /** File name stored in Storage. Default: the base name of `path`. */
  name?: string;
  /** Local file to send. Re-opened on every attempt, so provably-unsent attempts can be retried. */
  path?: string;
  /** A stream to send instead of `path`. Sent once: a stream cannot be replayed. */
  stream?: Readable;
  /** Size of `stream`, for `content-length`. Read from the disk for `path`. */
  sizeBytes?: number;
  tags?: readonly string[];
  isPermanent?: boolean;
  notify?: boolean;
}

export interface CreateBucketInput extends CallOptions {
  name: string;
  stage: 'in' | 'out';
  description?: string;
  backend?: string;
}

export interface CreateTableAsyncInput extends MarkedCallOptions {
  bucketId: string;
  name: string;
  dataFileId: number;
  /** Default `,`. */
  delimiter?: string;
  /** Default `"`. Exclusive with `escapedBy`. */
  enclosure?: string;
  escapedBy?: string;
  primaryKey?: readonly string[];
  /** Columns of a headerless file (a sliced upload): the file's first row is data, not a header. */
  columns?: readonly string[];
}

export interface LoadTableAsyncInput extends MarkedCallOptions {
  tableId: string;
  dataFileId: number;
  /** Append (upsert by primary key) instead of replacing the table. */
  incremental: boolean;
  /** Columns of a headerless file. */
  columns?: readonly string[];
  withoutHeaders?: boolean;
  delimiter?: string;
  enclosure?: string;
  escapedBy?: string;
}

/** A typed column as `tables-definition` takes it. */
export interface ColumnDefinitionInput {
  name: string;
  definition: {
    /** The backend's type name, e.g. `VARCHAR`, `NUMBER`, `INTEGER`, `DATE`, `TIMESTAMP`. */
    type: string;
    /** `255` for strings, `10,2` for numbers. */
    length?: string;
    /** Default true. */
    nullable?: boolean;
    default?: string;
  };
}

export interface CreateTableDefinitionInput extends MarkedCallOptions {
  bucketId: string;
  name: string;
  columns: readonly ColumnDefinitionInput[];
  primaryKeysNames?: readonly string[];
}

/** A metadata `{key, value}` pair. */
export interface MetadataPair {
  key: string;
  value: string;
}

export interface SetTableMetadataInput extends CallOptions {
  tableId: string;
  /** Who sets them (`user`, a component id, …); `storage` is the service's own. */
  provider: string;
  metadata: readonly MetadataPair[];
  /** Column name → pairs. */
  columnsMetadata?: Readonly<Record<string, readonly MetadataPair[]>>;
}

export interface WhereFilter {
  column: string;
  operator?: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
  values: readonly string[];
}

export interface ExportTableAsyncInput extends MarkedCallOptions {
  tableId: string;
  columns?: readonly string[];
  limit?: number;
  whereFilters?: readonly WhereFilter[];
  orderBy?: readonly { column: string; order?: 'ASC' | 'DESC' }[];
  /** ISO timestamp or a relative expression the service understands (`-1 day`). */
  changedSince?: string;
  changedUntil?: string;
  gzip?: boolean;
}

export interface ListJobsInput extends CallOptions {
  /** Default 100. */
  limit?: number;
  offset?: number;
}

export interface StorageClient {
  /** Base URL as configured (without a trailing slash). */
  readonly url: string;
  readonly branchId?: string;
  /** `GET /v2/storage/tokens/verify`. */
  verifyToken(input?: CallOptions): Promise<TokenInfo>;
  /** `GET /v2/storage` (the index). */
  getIndex(input?: CallOptions): Promise<StorageIndex>;
  /** The importer URL: the option, or `services[id=import].url` from the index (cached). */
  getImportUrl(input?: CallOptions): Promise<string>;
  /** `POST files/prepare` with `federationToken`: a file resource with `uploadParams` and credentials. Not replayed. */
  prepareFile(input: PrepareFileInput): Promise<PreparedFile>;
  /** `GET files/{id}` (with `federationToken=1`: `s3Path` + read credentials). */
  getFile(input: GetFileInput): Promise<StorageFile>;
  /** `GET files`. */
  listFiles(input?: ListFilesInput): Promise<StorageFile[]>;
  /** `DELETE files/{id}`. */
  deleteFile(input: { fileId: number } & CallOptions): Promise<void>;
  /** `POST {importUrl}/upload-file`, multipart field `data`, streamed. Not replayed once it may have been sent. */
  uploadViaImporter(input: UploadViaImporterInput): Promise<StorageFile>;
  /** `POST buckets`. Not replayed. */
  createBucket(input: CreateBucketInput): Promise<Bucket>;
  getBucket(input: { bucketId: string } & CallOptions): Promise<Bucket>;
  listBuckets(input?: CallOptions): Promise<Bucket[]>;
  /** `DELETE buckets/{id}`: fails while the bucket holds tables (no `force`). */
  deleteBucket(input: { bucketId: string } & CallOptions): Promise<void>;
  getTable(input: { tableId: string } & CallOptions): Promise<Table>;
  /** Tables of one bucket, or of the project when `bucketId` is absent. */
  listTables(input?: { bucketId?: string } & CallOptions): Promise<Table[]>;
  /** `DELETE tables/{id}`; returns the job when the service deletes asynchronously. */
  deleteTable(input: { tableId: string } & CallOptions): Promise<{ job?: Job }>;
  /** `POST buckets/{bucketId}/tables-async` → job (`tableCreate`). Not replayed: see `startImportOnce`. */
  createTableAsync(input: CreateTableAsyncInput): Promise<Job>;
  /** `POST buckets/{bucketId}/tables-definition` → job (`tableDefinitionCreate`): an empty typed table. Not replayed: see `startTableDefinitionOnce`. */
  createTableDefinitionAsync(input: CreateTableDefinitionInput): Promise<Job>;
  /** `POST tables/{tableId}/metadata` (JSON): sets entries (same provider and key: updated); answers the table's entries. Idempotent. */
  setTableMetadata(input: SetTableMetadataInput): Promise<TableMetadataAnswer>;
  /** `GET tables/{tableId}/metadata`. */
  listTableMetadata(input: { tableId: string } & CallOptions): Promise<MetadataEntry[]>;
  /** `POST tables/{tableId}/import-async` → job (`tableImport`). Not replayed: see `startImportOnce`. */
  loadTableAsync(input: LoadTableAsyncInput): Promise<Job>;
  /** `POST tables/{tableId}/export-async` → job (`tableExport`). Not replayed: see `startExportOnce`. */
  exportTableAsync(input: ExportTableAsyncInput): Promise<Job>;
  /** `GET jobs/{id}`, or the job's own `url`. */
  getJob(input: { jobId: number | string; url?: string } & CallOptions): Promise<Job>;
  /** `GET jobs?limit=&offset=`, newest first. */
  listJobs(input?: ListJobsInput): Promise<Job[]>;
  /** Closes the default dispatcher (a dispatcher passed in stays open). */
  close(): Promise<void>;
}

/** Largest file the importer accepts: 2 GB. Bigger files go through a direct (multipart) upload. */
export const IMPORTER_MAX_BYTES = 2 * 1024 * 1024 * 1024;

/** Statuses an async POST may answer with; the service uses 202. */
const ASYNC_STATUSES = [200, 201, 202] as const;

/** Creates a Storage API client. Settings are merged with the exported defaults once and frozen. */
export function createStorageClient(options: StorageClientOptions): StorageClient {
  if (!options.url || !/^https?:\/\//i.test(options.url)) {
    throw new SapiInvalidInputError(`storage url must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  }
  if (!options.token) throw new SapiInvalidInputError('storage token is required (set it in the connection settings)');
  const timeouts: HttpTimeouts = Object.freeze({ ...DEFAULT_TIMEOUTS, ...options.timeouts });
  const retry: RetryPolicy = Object.freeze({ ...DEFAULT_RETRY_POLICY, ...options.retry });
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createDefaultDispatcher({ connectMs: timeouts.connectMs, connections: options.connections });
  const http: HttpTransport = createHttpTransport({
    url: options.url,
    token: options.token,
    runId: options.runId,
    timeouts,
    retry,
    dispatcher,
    onRetry: options.onRetry,
  });
  const branchId = options.branchId === undefined ? undefined : String(options.branchId);
  const seg = encodeURIComponent;
  /** Path of a branch-scoped resource (files, buckets, tables). */
  const scoped = (rest: string): string => (branchId !== undefined ? `/v2/storage/branch/${seg(branchId)}/${rest}` : `/v2/storage/${rest}`);
  let importUrl: Promise<string> | undefined = options.importUrl ? Promise.resolve(options.importUrl.replace(/\/+$/, '')) : undefined;

  async function getIndex(input: CallOptions = {}): Promise<StorageIndex> {
    return (await http.request({ method: 'GET', path: '/v2/storage', schema: indexSchema, signal: input.signal })).data;
  }

  const client: StorageClient = {
    url: http.baseUrl,
    branchId,

    async verifyToken(input = {}) {
      return (await http.request({ method: 'GET', path: '/v2/storage/tokens/verify', schema: tokenSchema, signal: input.signal })).data;
    },

    getIndex,

    async getImportUrl(input = {}) {
      if (!importUrl) {
        importUrl = getIndex(input).then((index) => {
          const svc = index.services.find((s) => s.id === 'import');
          if (!svc) {
            throw new SapiInvalidResponseError({
              request: { method: 'GET', path: '/v2/storage' },
              problem: `no importer in services (found: ${index.services.map((s) => s.id).join(', ') || 'none'}); set importUrl explicitly`,
            });
          }
          return svc.url.replace(/\/+$/, '');
        });
        // Do not cache a failure.
        importUrl.catch(() => (importUrl = undefined));
      }
      return importUrl;
    },

    async prepareFile(input) {
      requireNonEmpty('prepareFile', 'name', input.name);
      const res = await http.request({
        method: 'POST',
        path: scoped('files/prepare'),
        json: compact({
          name: input.name,
          sizeBytes: input.sizeBytes,
          tags: input.tags,
          isSliced: input.isSliced,
          isEncrypted: input.isEncrypted,
          isPermanent: input.isPermanent,
          isPublic: input.isPublic,
          notify: input.notify,
          federationToken: true,
        }),
        schema: preparedFileSchema,
        idempotent: false,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },

    async getFile(input) {
      requireId('getFile', 'fileId', input.fileId);
      const res = await http.request({
        method: 'GET',
        path: scoped(`files/${input.fileId}`),
        query: { federationToken: input.federationToken ? 1 : undefined },
        schema: fileSchema,
        signal: input.signal,
      });
      return res.data;
    },

    async listFiles(input = {}) {
      const res = await http.request({
        method: 'GET',
        path: scoped('files'),
        query: { limit: input.limit, offset: input.offset, tags: input.tags, sinceId: input.sinceId, maxId: input.maxId, q: input.q, runId: input.runId },
        schema: fileListSchema,
        signal: input.signal,
      });
      return input.runId === undefined ? res.data : res.data.filter((file) => file.runId === input.runId);
    },

    async deleteFile(input) {
      requireId('deleteFile', 'fileId', input.fileId);
      await http.request({ method: 'DELETE', path: scoped(`files/${input.fileId}`), schema: emptySchema, signal: input.signal });
    },

    async uploadViaImporter(input) {
      if ((input.path === undefined) === (input.stream === undefined)) {
        throw new SapiInvalidInputError('uploadViaImporter needs exactly one of path or stream');
      }
      const name = input.name ?? (input.path ? basename(input.path) : undefined);
      requireNonEmpty('uploadViaImporter', 'name', name);
      let size = input.sizeBytes;
      if (input.path) {
        try {
          size = (await stat(input.path)).size;
        } catch (err) {
          throw new SapiInvalidInputError(`uploadViaImporter: cannot read ${input.path}: ${(err as Error).message}`);
        }
      }
      if (size !== undefined && size > IMPORTER_MAX_BYTES) {
        throw new SapiInvalidInputError(`uploadViaImporter: ${name} has ${size} bytes, the importer accepts at most ${IMPORTER_MAX_BYTES}; use a direct upload (prepare + multipart)`);
      }
      const base = await client.getImportUrl(input);
      const fields = {
        name,
        tags: input.tags,
        isPermanent: input.isPermanent,
        notify: input.notify,
        branchId,
      };
      let streamUsed = false;
      const res = await http.request({
        method: 'POST',
        path: `${base}/upload-file`,
        body: () => {
          let content: Readable;
          if (input.path) content = createReadStream(input.path);
          else {
            if (streamUsed) throw new SapiInvalidInputError('uploadViaImporter: a stream body cannot be sent twice; pass path to allow retries');
            streamUsed = true;
            content = input.stream as Readable;
          }
          return encodeMultipart(fields, { field: 'data', filename: name as string, size, content });
        },
        schema: fileSchema,
        idempotent: false,
        // A stream can be sent only once; a path is re-opened for each (provably unsent) retry.
        retries: input.path !== undefined,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },

    async createBucket(input) {
      requireNonEmpty('createBucket', 'name', input.name);
      const res = await http.request({
        method: 'POST',
        path: scoped('buckets'),
        json: compact({ name: input.name, stage: input.stage, description: input.description, backend: input.backend }),
        schema: bucketSchema,
        idempotent: false,
        signal: input.signal,
      });
      return res.data;
    },

    async getBucket(input) {
      requireNonEmpty('getBucket', 'bucketId', input.bucketId);
      return (await http.request({ method: 'GET', path: scoped(`buckets/${seg(input.bucketId)}`), schema: bucketSchema, signal: input.signal })).data;
    },

    async deleteBucket(input) {
      requireNonEmpty('deleteBucket', 'bucketId', input.bucketId);
      const res = await http.request({ method: 'DELETE', path: scoped(`buckets/${seg(input.bucketId)}`), schema: emptySchema, signal: input.signal });
      if (res.status === 202) {
        // an asynchronous delete answers with a job: wait for it briefly, it is a tiny operation
        const parsed = jobSchema.safeParse(res.data);
        if (parsed.success) await waitBriefly(client, parsed.data, input.signal);
      }
    },

    async listBuckets(input = {}) {
      return (await http.request({ method: 'GET', path: scoped('buckets'), schema: bucketListSchema, signal: input.signal })).data;
    },

    async getTable(input) {
      requireNonEmpty('getTable', 'tableId', input.tableId);
      return (await http.request({ method: 'GET', path: scoped(`tables/${seg(input.tableId)}`), schema: tableSchema, signal: input.signal })).data;
    },

    async listTables(input = {}) {
      const path = input.bucketId !== undefined ? scoped(`buckets/${seg(input.bucketId)}/tables`) : scoped('tables');
      return (await http.request({ method: 'GET', path, schema: tableListSchema, signal: input.signal })).data;
    },

    async deleteTable(input) {
      requireNonEmpty('deleteTable', 'tableId', input.tableId);
      const res = await http.request({ method: 'DELETE', path: scoped(`tables/${seg(input.tableId)}`), schema: emptySchema, signal: input.signal });
      if (res.status === 202) {
        const parsed = jobSchema.safeParse(res.data);
        if (parsed.success) return { job: parsed.data };
      }
      return {};
    },

    async createTableAsync(input) {
      requireNonEmpty('createTableAsync', 'bucketId', input.bucketId);
      requireNonEmpty('createTableAsync', 'name', input.name);
      requireId('createTableAsync', 'dataFileId', input.dataFileId);
      if (input.enclosure !== undefined && input.escapedBy !== undefined) {
        throw new SapiInvalidInputError('createTableAsync: enclosure and escapedBy are exclusive; pass one of them');
      }
      const res = await http.request({
        method: 'POST',
        path: scoped(`buckets/${seg(input.bucketId)}/tables-async`),
        json: compact({
          name: input.name,
          dataFileId: input.dataFileId,
          delimiter: input.delimiter,
          enclosure: input.enclosure,
          escapedBy: input.escapedBy,
          primaryKey: input.primaryKey?.length ? input.primaryKey.join(',') : undefined,
          columns: input.columns?.length ? input.columns : undefined,
        }),
        schema: jobSchema,
        idempotent: false,
        expect: ASYNC_STATUSES,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },

    async createTableDefinitionAsync(input) {
      requireNonEmpty('createTableDefinitionAsync', 'bucketId', input.bucketId);
      requireNonEmpty('createTableDefinitionAsync', 'name', input.name);
      if (!input.columns.length) throw new SapiInvalidInputError('createTableDefinitionAsync: columns must list at least one {name, definition: {type}}');
      const res = await http.request({
        method: 'POST',
        path: scoped(`buckets/${seg(input.bucketId)}/tables-definition`),
        json: {
          name: input.name,
          primaryKeysNames: input.primaryKeysNames ?? [],
          columns: input.columns.map((c) => ({ name: c.name, definition: compact({ ...c.definition }) })),
        },
        schema: jobSchema,
        idempotent: false,
        expect: ASYNC_STATUSES,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },

    async setTableMetadata(input) {
      requireNonEmpty('setTableMetadata', 'tableId', input.tableId);
      requireNonEmpty('setTableMetadata', 'provider', input.provider);
      const res = await http.request({
        method: 'POST',
        path: scoped(`tables/${seg(input.tableId)}/metadata`),
        json: compact({
          provider: input.provider,
          metadata: input.metadata.map(({ key, value }) => ({ key, value })),
          columnsMetadata: input.columnsMetadata && Object.keys(input.columnsMetadata).length ? input.columnsMetadata : undefined,
        }),
        schema: tableMetadataAnswerSchema,
        // same provider and key overwrite the value: sending it again ends in the same state
        idempotent: true,
        signal: input.signal,
      });
      return res.data;
    },

    async listTableMetadata(input) {
      requireNonEmpty('listTableMetadata', 'tableId', input.tableId);
      return (await http.request({ method: 'GET', path: scoped(`tables/${seg(input.tableId)}/metadata`), schema: metadataListSchema, signal: input.signal })).data;
    },

    async loadTableAsync(input) {
      requireNonEmpty('loadTableAsync', 'tableId', input.tableId);
      requireId('loadTableAsync', 'dataFileId', input.dataFileId);
      if (input.enclosure !== undefined && input.escapedBy !== undefined) {
        throw new SapiInvalidInputError('loadTableAsync: enclosure and escapedBy are exclusive; pass one of them');
      }
      const res = await http.request({
        method: 'POST',
        path: scoped(`tables/${seg(input.tableId)}/import-async`),
        json: compact({
          dataFileId: input.dataFileId,
          incremental: input.incremental,
          columns: input.columns,
          withoutHeaders: input.withoutHeaders,
          delimiter: input.delimiter,
          enclosure: input.enclosure,
          escapedBy: input.escapedBy,
        }),
        schema: jobSchema,
        idempotent: false,
        expect: ASYNC_STATUSES,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },

    async exportTableAsync(input) {
      requireNonEmpty('exportTableAsync', 'tableId', input.tableId);
      const res = await http.request({
        method: 'POST',
        path: scoped(`tables/${seg(input.tableId)}/export-async`),
        json: compact({
          columns: input.columns?.length ? input.columns.join(',') : undefined,
          limit: input.limit,
          whereFilters: input.whereFilters,
          orderBy: input.orderBy,
          changedSince: input.changedSince,
          changedUntil: input.changedUntil,
          gzip: input.gzip,
        }),
        schema: jobSchema,
        idempotent: false,
        expect: ASYNC_STATUSES,
        runId: input.runId,
        signal: input.signal,
      });
      return res.data;
    },

    async getJob(input) {
      // Jobs are never branch-scoped. A job's own `url` is used when it points at the same service.
      const path = input.url && sameOrigin(input.url, options.url) ? input.url : `/v2/storage/jobs/${seg(String(input.jobId))}`;
      return (await http.request({ method: 'GET', path, schema: jobSchema, signal: input.signal })).data;
    },

    async listJobs(input = {}) {
      const res = await http.request({
        method: 'GET',
        path: '/v2/storage/jobs',
        query: { limit: input.limit ?? 100, offset: input.offset },
        schema: jobListSchema,
        signal: input.signal,
      });
      return res.data;
    },

    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
  return client;
}

/** Polls a short job (a bucket delete) until it ends, for at most ~30 s; fails when it ends in error. */
async function waitBriefly(client: Pick<StorageClient, 'getJob'>, job: Job, signal?: AbortSignal): Promise<void> {
  let current = job;
  for (let i = 0; i < 60 && (current.status === 'waiting' || current.status === 'processing'); i++) {
    await new Promise((r) => setTimeout(r, 500));
    signal?.throwIfAborted();
    current = await client.getJob({ jobId: current.id, signal });
  }
  if (current.status === 'error') {
    const error = current.error;
    throw new SapiInvalidResponseError({ request: { method: 'DELETE', path: `job ${current.id}` }, problem: `job ${current.id} failed: ${typeof error === 'string' ? error : error?.message}` });
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

function requireNonEmpty(method: string, field: string, value: string | undefined): void {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SapiInvalidInputError(`${method}: ${field} is required (got ${JSON.stringify(value)})`);
  }
}

function requireId(method: string, field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new SapiInvalidInputError(`${method}: ${field} must be a positive integer (got ${JSON.stringify(value)})`);
  }
}

function compact<T extends Record<string, unknown>>(obj: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}
