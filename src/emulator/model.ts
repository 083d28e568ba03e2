/** Records the emulator keeps. Resources sent to clients are built from them in `resources.ts`. */
import { type BucketPermission } from './options';

export type { BucketPermission };

export interface TokenRecord {
  id: number;
  /** The secret sent in `X-StorageApi-Token`. */
  token: string;
  description: string;
  isMasterToken: boolean;
  canManageBuckets: boolean;
  canManageTokens: boolean;
  canReadAllFileUploads: boolean;
  /** Explicit grants; master and `canManageBuckets` tokens have `manage` on every bucket besides. */
  bucketPermissions: Record<string, BucketPermission>;
  created: string;
  /** When the secret was last replaced (`POST tokens/{id}/refresh`); absent: never, `created` is reported. */
  refreshed?: string;
  /** Components whose configurations the token may use (`componentAccess` of `POST tokens`); absent: none. */
  componentAccess?: string[];
  /** May purge deleted configurations (`canPurgeTrash`); master tokens always. */
  canPurgeTrash?: boolean;
  /** Null: never expires. */
  expires: string | null;
  expiresMs: number | null;
  /** Null for tokens from the options. */
  creatorToken: CreatorToken | null;
  /** From the emulator options (kept out of the state log, cannot be deleted) rather than `POST tokens`. */
  configured: boolean;
}

export interface CreatorToken {
  id: number;
  description: string;
}

export interface FileRecord {
  id: number;
  created: string;
  name: string;
  /** Object key; for a sliced file the prefix (slices at key+suffix, manifest at key+"manifest"). */
  key: string;
  isSliced: boolean;
  isPublic: boolean;
  isEncrypted: boolean;
  isPermanent: boolean;
  tags: string[];
  /** Null until known (declared at prepare, or measured with HeadObject once uploaded). */
  sizeBytes: number | null;
  /** True once the size was measured on the stored object(s). */
  sizeMeasured: boolean;
  creatorToken: CreatorToken;
  branchId: string;
  fileType: string;
  /** `X-KBC-RunId` of the request (or job) that created the file; absent in records from older emulators. */
  runId?: string | null;
}

export interface BucketRecord {
  id: string;
  name: string;
  stage: string;
  description: string;
  created: string;
  branchId: string;
}

/** Table metadata; stored in DuckDB next to the data so a load and its metadata commit together. */
export interface TableRecord {
  id: string;
  name: string;
  bucketId: string;
  columns: string[];
  primaryKey: string[];
  rowsCount: number;
  dataSizeBytes: number;
  created: string;
  lastImportDate: string | null;
  lastChangeDate: string | null;
  /** Typed tables only: column types (DuckDB columns of those types behind them). */
  definition?: TableDefinition;
  /** Typed tables only: the `KBC.datatype.*` column metadata of provider `storage`, written with the table. */
  storageMetadata?: MetadataRecord[];
  /** Set by `PUT tables/{id}/definition`; absent: the name. */
  displayName?: string;
}

/** A table snapshot (`POST tables/{id}/snapshots`); its rows are kept in DuckDB (`"_snapshots"."<id>"`). */
export interface SnapshotRecord {
  id: number;
  description: string;
  createdTime: string;
  creatorToken: CreatorToken;
  /** The table as it was: what a table created from the snapshot gets. */
  table: Pick<TableRecord, 'id' | 'name' | 'bucketId' | 'columns' | 'primaryKey' | 'definition' | 'storageMetadata'>;
}

export type JobStatus = 'waiting' | 'processing' | 'success' | 'error';

export interface JobRecord {
  id: number;
  status: JobStatus;
  operationName: string;
  operationParams: Record<string, unknown>;
  tableId: string | null;
  createdTime: string;
  startTime: string | null;
  endTime: string | null;
  results: unknown;
  error: { code: string; message: string; exceptionId: string } | null;
  creatorToken: CreatorToken;
  metrics: { inCompressed: boolean; inBytes: number; inBytesUncompressed: number; outCompressed: boolean; outBytes: number; outBytesUncompressed: number };
  /** Key that serializes jobs touching the same table. */
  queueKey: string;
  runId: string | null;
  /** Creation time in epoch ms (the public timestamps have second resolution). */
  createdMs: number;
}

/**
 * What a metadata entry describes; a column's `objectId` is `<tableId>.<column>`, a branch's its numeric id, a
 * configuration's `<branchId>/<componentId>/<configId>`.
 */
export type MetadataObjectType = 'branch' | 'bucket' | 'table' | 'column' | 'configuration';

/** One metadata entry (`KBC.description`, `KBC.datatype.type`, …); unique per object, provider and key. */
export interface MetadataRecord {
  /** Numeric, sent as a string like the service's. */
  id: string;
  objectType: MetadataObjectType;
  objectId: string;
  key: string;
  value: string;
  provider: string;
  timestamp: string;
}

/** The definition of a typed table's column, as `tables-definition` takes it. */
export interface ColumnDefinition {
  type: string;
  length?: string;
  nullable: boolean;
  default?: string;
}

/** A typed table's definition, as its detail reports it. */
export interface TableDefinition {
  primaryKeysNames: string[];
  columns: { name: string; definition: ColumnDefinition; basetype: string }[];
}

/** A project event (`GET events`). */
export interface EventRecord {
  id: number;
  event: string;
  type: 'info' | 'success' | 'warn' | 'error';
  message: string;
  created: string;
  runId: string | null;
  params: Record<string, unknown>;
  results: Record<string, unknown>;
  /** Empty for the events a client creates (`POST events`). */
  objectType: 'bucket' | 'table' | 'file' | 'token' | 'devBranch' | 'job' | '';
  objectId: string;
  objectName: string;
  /** Bucket whose readers may see the event; null: only master tokens and the token that caused it. */
  bucketId: string | null;
  token: CreatorToken;
  idBranch: number;
  /** UUID v7 of the event (the service's newer id); absent in records from older emulators. */
  uuid?: string;
  /** Component that logged it; absent: `storage`. */
  component?: string;
  description?: string;
  configurationId?: string | null;
  /** `duration` of `POST events`, seconds. */
  duration?: number;
}

/** A development branch; the default branch (id 1) is not stored. */
export interface BranchRecord {
  id: number;
  name: string;
  description: string;
  created: string;
  creatorToken: CreatorToken;
}
