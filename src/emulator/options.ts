/** Options and handle of the Storage API emulator: the one public surface of `src/emulator`. */
import { type FaultsController } from './faults';
import { type RequestLogEntry } from './request-log';

/** Default host the emulator binds to. */
export const DEFAULT_EMULATOR_HOST = '127.0.0.1';
/** Default time a job stays `waiting` before it starts, in milliseconds. */
export const DEFAULT_JOB_WAITING_MS = 0;
/** Default minimum time a job stays `processing`, in milliseconds. */
export const DEFAULT_JOB_PROCESSING_MS = 0;
/** Default export slicing threshold: exports with more CSV bytes than this are sliced, in bytes (64 MiB). */
export const DEFAULT_SLICE_SIZE_BYTES = 64 * 1024 * 1024;
/** Default of {@link EmulatorOptions.slicedExports}: true, every export sliced and headerless like a Snowflake stack's. */
export const DEFAULT_SLICED_EXPORTS = true;
/** Default project id, used in object keys (`exp-15/<project>/files/...`) and the token's owner. */
export const DEFAULT_PROJECT_ID = 1;
/**
 * Default of {@link EmulatorOptions.region} on backends without a region of their own (Azure, GCS): `us-east-1`, the
 * region the service's documentation shows on every file resource.
 */
export const DEFAULT_STACK_REGION = 'us-east-1';
/** Default lifetime of temporary credentials, in seconds (12 h, MinIO's STS maximum). */
export const DEFAULT_CREDENTIALS_TTL_SECONDS = 43_200;
/** Default lifetime of presigned file URLs, in seconds (1 h, like the real service). */
export const DEFAULT_PRESIGN_TTL_SECONDS = 3_600;
/** Default number of entries kept in the request log (oldest dropped first). */
export const DEFAULT_REQUEST_LOG_LIMIT = 10_000;
/** Default DuckDB buffer pool limit; larger tables spill to `<dataDir>/tmp/duckdb`. */
export const DEFAULT_DUCKDB_MEMORY_LIMIT = '256MB';
/**
 * Default of {@link EmulatorOptions.duckdbCompressStrings}: off. DuckDB's string compression (dictionary, FSST)
 * costs more CPU than the rest of an import (a table of the bench's CSV is written ~2× faster without it) and saves
 * little disk on such data (~15 %).
 */
export const DEFAULT_DUCKDB_COMPRESS_STRINGS = false;
/**
 * Default of {@link EmulatorOptions.maxTableColumns}: 1,599. The service's limit depends on its table backend (its
 * own code, keboola/storage-backend `ColumnCollection`: 1,600 on Redshift, 10,000 on Snowflake, one column kept for
 * `_timestamp`); no number is in its public documentation. The lowest one is the default, so a load the emulator
 * accepts is accepted by every backend that has a limit.
 */
export const DEFAULT_MAX_TABLE_COLUMNS = 1_599;
/** Environment variable that carries the options of the emulator's own process (`src/emulator/child.ts`), as JSON. */
export const EMULATOR_OPTIONS_ENV = 'SAPI_EMULATOR_OPTIONS';
/** Path prefix under which the same server serves the importer service. */
export const IMPORTER_PREFIX = '/import';

/** The S3 backend: a MinIO server reached path-style with root keys (needed for STS AssumeRole). */
export interface EmulatorS3Options {
  /** e.g. `http://127.0.0.1:9000`. */
  endpoint: string;
  /** Region reported in file resources and used for signing, e.g. `us-east-1`. */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Bucket holding every file; created when missing. */
  bucket: string;
}

/**
 * The Azure Blob Storage backend: an Azurite (or Azure) account reached with its shared key; clients get SAS
 * connection strings.
 */
export interface EmulatorAbsOptions {
  /** Blob service URL of the account, e.g. `http://127.0.0.1:10000/devstoreaccount1` (Azurite, path-style). */
  blobEndpoint: string;
  /** Account name: in manifests (`azure://<account>.blob.core.windows.net/<container>/…`) and `absUploadParams`. */
  accountName: string;
  /** Base64 shared key of the account: signs the SAS tokens. */
  accountKey: string;
  /** Container holding every file; created when missing. */
  container: string;
  /**
   * Blob endpoint clients get in their SAS connection strings and file URLs, when it differs from the one the
   * emulator itself uses (a proxy, another host name in containers). Default `blobEndpoint`.
   */
  publicBlobEndpoint?: string;
}

/**
 * The Google Cloud Storage backend: a fake-gcs-server reached over plain HTTP. It checks no credentials, so the
 * access tokens the emulator hands out are not enforced on this backend.
 */
export interface EmulatorGcsOptions {
  /** JSON API root, e.g. `http://127.0.0.1:4443` (what `STORAGE_EMULATOR_HOST` names for Google's clients). */
  endpoint: string;
  /** `gcsCredentials.projectId`; buckets are created in it. */
  projectId: string;
  /** Bucket holding every file; created when missing. */
  bucket: string;
  /** Endpoint in the file URLs clients get, when it differs from `endpoint` (a proxy). Default `endpoint`. */
  publicEndpoint?: string;
}

/**
 * Table backend the emulator answers as: the name in `owner.defaultBackend` and a bucket's `backend`, and the type names
 * `tables-definition` reports. The tables themselves are in DuckDB either way.
 */
export type EmulatorTableBackend = 'snowflake' | 'bigquery';
/** Default of {@link EmulatorOptions.tableBackend}: `snowflake`, the backend of most stacks. */
export const DEFAULT_TABLE_BACKEND: EmulatorTableBackend = 'snowflake';

/**
 * Object-storage backends the emulator serves: `aws` (S3 on MinIO), `azure` (Blob Storage on Azurite) or `gcp`
 * (Cloud Storage on fake-gcs-server).
 */
export type EmulatorBackend = 'aws' | 'azure' | 'gcp';

/**
 * Where the emulator keeps its files, tables and records. `server`: files in the object-storage server of
 * {@link EmulatorOptions.backend} (MinIO, Azurite, fake-gcs-server), tables in DuckDB and records in a state log
 * under `dataDir`, kept across restarts. `memory`: everything in the emulator's own memory (files served by the
 * emulator at presigned URLs, DuckDB in memory), gone at close; it answers as an `aws` stack and takes files through
 * the importer only (`files/prepare` and `federationToken=1` are answered 501). For tests and trials that need no
 * other process.
 */
export type EmulatorStore = 'server' | 'memory';
/** Default of {@link EmulatorOptions.store}: `server`. */
export const DEFAULT_EMULATOR_STORE: EmulatorStore = 'server';

/**
 * A Storage API token the emulator accepts in `X-StorageApi-Token`, with the service's permission model. A master
 * token manages every bucket and sees every file and job; any other token sees only the buckets in its
 * `bucketPermissions` (every bucket with `canManageBuckets`), only the files it created (every file with
 * `canReadAllFileUploads`) and only the jobs it created.
 */
export interface EmulatorTokenOptions {
  token: string;
  /** Numeric id reported as `creatorToken.id`; default: position in the list + 1. */
  id?: number;
  /** Default: `token-<id>`. */
  description?: string;
  /** Default true (every configured token used to be a master token). A master token may also create tokens. */
  isMasterToken?: boolean;
  /** Create and delete buckets, `manage` on every bucket. Default: `isMasterToken`. */
  canManageBuckets?: boolean;
  /** See every file, not only those the token created. Default: `isMasterToken`. */
  canReadAllFileUploads?: boolean;
  /** Bucket id → `read` (list, detail, export), `write` (also create, load, delete tables) or `manage`. Default {}. */
  bucketPermissions?: Record<string, BucketPermission>;
}

/** A token's access to one bucket; each level includes the ones before it. */
export type BucketPermission = 'read' | 'write' | 'manage';

export interface EmulatorJobDelays {
  /** Time a job stays `waiting`, ms. Default {@link DEFAULT_JOB_WAITING_MS}. */
  waitingMs?: number;
  /** Minimum time a job stays `processing`, ms. Default {@link DEFAULT_JOB_PROCESSING_MS}. */
  processingMs?: number;
}

export interface EmulatorOptions {
  /** 0 or absent: a free port. */
  port?: number;
  /** Default {@link DEFAULT_EMULATOR_HOST}. */
  host?: string;
  /**
   * Folder for the DuckDB database (`tables.duckdb`), the state log (`state.jsonl`) and temp files (only temp files
   * with store `memory`).
   */
  dataDir: string;
  /**
   * Where files, tables and records are kept: `server` or `memory` (see {@link EmulatorStore}). With `memory`, no
   * `s3`, `abs` or `gcs` and no `backend` other than `aws`. Default {@link DEFAULT_EMULATOR_STORE}.
   */
  store?: EmulatorStore;
  /**
   * Table backend the emulator answers as (its name in the index, `tokens/verify` and buckets; the types of typed
   * tables). Default {@link DEFAULT_TABLE_BACKEND}.
   */
  tableBackend?: EmulatorTableBackend;
  /** Backend of file storage. Default: `azure` when only `abs` is given, `gcp` when only `gcs`, else `aws`. */
  backend?: EmulatorBackend;
  /** The S3 backend; required when `backend` is `aws`. */
  s3?: EmulatorS3Options;
  /** The Google Cloud Storage backend; required when `backend` is `gcp`. */
  gcs?: EmulatorGcsOptions;
  /** The Azure Blob Storage backend; required when `backend` is `azure`. */
  abs?: EmulatorAbsOptions;
  /** Accepted tokens; at least one. */
  tokens: EmulatorTokenOptions[];
  jobDelays?: EmulatorJobDelays;
  /**
   * Every table export is a sliced, headerless file (one slice and a manifest for a small table), as on the service's
   * Snowflake and BigQuery stacks; clients add the header from the table's columns. False: an export that fits in one
   * slice is one file with a header row. Default {@link DEFAULT_SLICED_EXPORTS}.
   */
  slicedExports?: boolean;
  /** Slices of an export hold about this many CSV bytes. Default {@link DEFAULT_SLICE_SIZE_BYTES}. */
  sliceSizeBytes?: number;
  /**
   * Region of the stack, reported on file resources (`region`, on every backend like the service) and as the project's
   * `owner.region`. Default: `s3.region` on the `aws` backend, else {@link DEFAULT_STACK_REGION}.
   */
  region?: string;
  /** Project id in object keys and token owner. Default {@link DEFAULT_PROJECT_ID}. */
  projectId?: number;
  /** Serve the `/_emulator/*` admin endpoints (faults, request log). Default true. */
  adminEnabled?: boolean;
  /**
   * Secret of the admin endpoints: when set, every `/_emulator/*` request must carry `Authorization: Bearer
   * <adminToken>` or is answered 401. Default: none (the endpoints answer anyone who reaches the port). The
   * in-process {@link EmulatorHandle.faults} does not need it.
   */
  adminToken?: string;
  /** Lifetime of STS credentials in seconds, 900–43200. Default {@link DEFAULT_CREDENTIALS_TTL_SECONDS}. */
  credentialsTtlSeconds?: number;
  /** Entries kept in the request log. Default {@link DEFAULT_REQUEST_LOG_LIMIT}. */
  requestLogLimit?: number;
  /** DuckDB memory limit, e.g. `'256MB'`. Default {@link DEFAULT_DUCKDB_MEMORY_LIMIT}. */
  duckdbMemoryLimit?: string;
  /**
   * Most columns a table may have; loads and definitions beyond it are refused as the service does
   * (`storage.tables.validation.tooManyColumns`). Default {@link DEFAULT_MAX_TABLE_COLUMNS}.
   */
  maxTableColumns?: number;
  /** Compress strings in the table store (smaller file, slower loads). Default {@link DEFAULT_DUCKDB_COMPRESS_STRINGS}. */
  duckdbCompressStrings?: boolean;
  /**
   * Base URL clients reach the emulator at (behind a proxy, in a container network), used in `url` fields and the
   * index's service URLs (the importer's among them); default `http://<host>:<port>`.
   */
  publicUrl?: string;
}

/** The table contents as read straight from DuckDB (internal columns left out), in storage order. */
export interface EmulatorTableData {
  columns: string[];
  rows: string[][];
}

export interface EmulatorHandle {
  /** Base URL of the Storage API, e.g. `http://127.0.0.1:43121` (paths start with `/v2/storage`). */
  url: string;
  /** Where the server listens, `http://<host>:<port>`; differs from {@link url} when `publicUrl` is set. */
  listenUrl: string;
  /** Base URL of the importer service (`POST <importUrl>/upload-file`). */
  importUrl: string;
  /** The first configured token. */
  token: string;
  /** All configured tokens. */
  tokens: string[];
  /** Fault injection rules, failing jobs, slowing jobs. */
  faults: FaultsController;
  /** Requests the emulator saw (admin endpoints excluded), oldest first. Live view. */
  requests: RequestLogEntry[];
  /** Reads a table straight from DuckDB; throws when it does not exist. */
  readTable(tableId: string): Promise<EmulatorTableData>;
  /** Resolves when no job is waiting or processing. */
  idle(): Promise<void>;
  /** Stops the server, interrupts pending jobs (they resume on the next start on the same dataDir), closes DuckDB. */
  close(): Promise<void>;
}
