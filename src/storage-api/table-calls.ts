/**
 * Storage API calls on buckets and the tables in them: create, read, list, delete; the asynchronous loads and
 * exports (each answers a job; none is replayed, see `reconcile.ts`); table metadata.
 */
import { z } from 'zod';
import type { TypedColumn } from '../contracts/transfer';
import { SapiInvalidInputError } from '../errors';
import { type CallContext, type CallOptions, compact, type MarkedCallOptions, requireId, requireNonEmpty, seg } from './calls';
import { type JobCalls, waitBriefly } from './job-calls';
import { bucketListSchema, bucketSchema, emptySchema, jobSchema, tableListSchema, tableSchema, type Bucket, type Job, type Table } from './schemas';
import { type QueryValue } from './http';
import { metadataListSchema, tableMetadataAnswerSchema, type MetadataEntry, type TableMetadataAnswer } from './typed-schemas';

export interface CreateBucketInput extends MarkedCallOptions {
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

/** A typed column as `tables-definition` takes it: the shape `importTableWorkflow`'s `typedColumns` has. */
export type ColumnDefinitionInput = TypedColumn;

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

/** The JSON answer of `data-preview`: columns, and rows of cells. */
const previewSchema = z.looseObject({
  columns: z.array(z.string()),
  rows: z.array(
    z.array(
      z.looseObject({
        columnName: z.string(),
        value: z
          .string()
          .nullable()
          .transform((v) => v ?? ''),
      }),
    ),
  ),
});

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

export interface PreviewTableInput extends CallOptions {
  tableId: string;
  columns?: readonly string[];
  whereFilters?: readonly WhereFilter[];
  orderBy?: readonly { column: string; order?: 'ASC' | 'DESC' }[];
  /** Rows answered: 0–1000 (the service's bound). Default 100. */
  limit?: number;
}

/** A table's rows as `data-preview` answers them: every value a string. */
export interface TablePreview {
  columns: string[];
  rows: Array<Record<string, string>>;
}

/** The most rows one `data-preview` answers. */
export const PREVIEW_MAX_ROWS = 1000;

export interface TableCalls {
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
  /** `GET tables/{tableId}/data-preview?format=json`: up to {@link PREVIEW_MAX_ROWS} rows, filtered and ordered. */
  previewTable(input: PreviewTableInput): Promise<TablePreview>;
}

/** Statuses an async POST may answer with; the service uses 202. */
const ASYNC_STATUSES = [200, 201, 202] as const;

/** The bucket and table calls; `jobs` waits for the job of an asynchronous bucket delete. */
export function tableCalls(ctx: CallContext, jobs: Pick<JobCalls, 'getJob'>): TableCalls {
  const { http, scoped } = ctx;

  /** `POST` of a call that starts a job and answers it; never replayed (a lost answer is settled by `reconcile.ts`). */
  const startJob = async (path: string, json: unknown, input: MarkedCallOptions): Promise<Job> =>
    (await http.request({ method: 'POST', path, json, schema: jobSchema, idempotent: false, expect: ASYNC_STATUSES, runId: input.runId, signal: input.signal }))
      .data;

  const requireOneQuote = (method: string, input: { enclosure?: string; escapedBy?: string }): void => {
    if (input.enclosure !== undefined && input.escapedBy !== undefined) {
      throw new SapiInvalidInputError(`${method}: enclosure and escapedBy are exclusive; pass one of them`);
    }
  };

  return {
    async createBucket(input) {
      requireNonEmpty('createBucket', 'name', input.name);
      const res = await http.request({
        method: 'POST',
        path: scoped('buckets'),
        json: compact({ name: input.name, stage: input.stage, description: input.description, backend: input.backend }),
        schema: bucketSchema,
        idempotent: false,
        runId: input.runId,
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
        if (parsed.success) await waitBriefly(jobs, parsed.data, input.signal);
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
      requireOneQuote('createTableAsync', input);
      return startJob(
        scoped(`buckets/${seg(input.bucketId)}/tables-async`),
        compact({
          name: input.name,
          dataFileId: input.dataFileId,
          delimiter: input.delimiter,
          enclosure: input.enclosure,
          escapedBy: input.escapedBy,
          primaryKey: input.primaryKey?.length ? input.primaryKey.join(',') : undefined,
          columns: input.columns?.length ? input.columns : undefined,
        }),
        input,
      );
    },

    async createTableDefinitionAsync(input) {
      requireNonEmpty('createTableDefinitionAsync', 'bucketId', input.bucketId);
      requireNonEmpty('createTableDefinitionAsync', 'name', input.name);
      if (!input.columns.length) throw new SapiInvalidInputError('createTableDefinitionAsync: columns must list at least one {name, definition: {type}}');
      return startJob(
        scoped(`buckets/${seg(input.bucketId)}/tables-definition`),
        {
          name: input.name,
          primaryKeysNames: input.primaryKeysNames ?? [],
          columns: input.columns.map((c) => ({ name: c.name, definition: compact({ ...c.definition }) })),
        },
        input,
      );
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
      return (await http.request({ method: 'GET', path: scoped(`tables/${seg(input.tableId)}/metadata`), schema: metadataListSchema, signal: input.signal }))
        .data;
    },

    async loadTableAsync(input) {
      requireNonEmpty('loadTableAsync', 'tableId', input.tableId);
      requireId('loadTableAsync', 'dataFileId', input.dataFileId);
      requireOneQuote('loadTableAsync', input);
      return startJob(
        scoped(`tables/${seg(input.tableId)}/import-async`),
        compact({
          dataFileId: input.dataFileId,
          incremental: input.incremental,
          columns: input.columns,
          withoutHeaders: input.withoutHeaders,
          delimiter: input.delimiter,
          enclosure: input.enclosure,
          escapedBy: input.escapedBy,
        }),
        input,
      );
    },

    async previewTable(input) {
      requireNonEmpty('previewTable', 'tableId', input.tableId);
      const limit = input.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 0 || limit > PREVIEW_MAX_ROWS)
        throw new SapiInvalidInputError(`previewTable: limit must be 0–${PREVIEW_MAX_ROWS}, got ${limit}`);
      // nested parameters as the service reads them: whereFilters[0][column]=…&whereFilters[0][values][]=…
      const query: Record<string, QueryValue> = { format: 'json', limit, columns: input.columns?.length ? input.columns.join(',') : undefined };
      input.whereFilters?.forEach((f, i) => {
        query[`whereFilters[${i}][column]`] = f.column;
        query[`whereFilters[${i}][operator]`] = f.operator ?? 'eq';
        query[`whereFilters[${i}][values]`] = f.values;
      });
      input.orderBy?.forEach((o, i) => {
        query[`orderBy[${i}][column]`] = o.column;
        query[`orderBy[${i}][order]`] = o.order ?? 'ASC';
      });
      const answer = (
        await http.request({ method: 'GET', path: scoped(`tables/${seg(input.tableId)}/data-preview`), query, schema: previewSchema, signal: input.signal })
      ).data;
      return { columns: answer.columns, rows: answer.rows.map((row) => Object.fromEntries(row.map((cell) => [cell.columnName, cell.value]))) };
    },

    async exportTableAsync(input) {
      requireNonEmpty('exportTableAsync', 'tableId', input.tableId);
      return startJob(
        scoped(`tables/${seg(input.tableId)}/export-async`),
        compact({
          columns: input.columns?.length ? input.columns.join(',') : undefined,
          limit: input.limit,
          whereFilters: input.whereFilters,
          orderBy: input.orderBy,
          changedSince: input.changedSince,
          changedUntil: input.changedUntil,
          gzip: input.gzip,
        }),
        input,
      );
    },
  };
}
