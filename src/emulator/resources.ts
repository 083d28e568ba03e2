/** Builds the JSON resources the service answers with, from the records it keeps. */
import { type EmulatorContext } from './context';
import { columnMetadataMap, metadataResource } from './metadata';
import { type BucketRecord, type FileRecord, type JobRecord, type SnapshotRecord, type TableRecord } from './model';

/** Retention of non-permanent files, days. */
export const FILE_MAX_AGE_DAYS = 15;

export function fileResource(ctx: EmulatorContext, file: FileRecord): Record<string, unknown> {
  return {
    id: file.id,
    created: file.created,
    isPublic: file.isPublic,
    isSliced: file.isSliced,
    isEncrypted: file.isEncrypted,
    isPermanent: file.isPermanent,
    isExpired: false,
    name: file.name,
    url: ctx.objects.presign(file.isSliced ? `${file.key}manifest` : file.key),
    region: ctx.region,
    sizeBytes: file.sizeBytes ?? 0,
    tags: file.tags,
    maxAgeDays: file.isPermanent ? null : FILE_MAX_AGE_DAYS,
    runId: file.runId ?? null,
    runIds: [],
    creatorToken: file.creatorToken,
    provider: ctx.objects.provider,
    fileType: file.fileType,
  };
}

export function bucketResource(ctx: EmulatorContext, bucket: BucketRecord): Record<string, unknown> {
  const tables = ctx.tables.list(bucket.id);
  return {
    uri: `${ctx.baseUrl}/v2/storage/buckets/${bucket.id}`,
    id: bucket.id,
    name: `c-${bucket.name}`,
    displayName: bucket.name,
    idBranch: bucket.branchId === 'default' ? 1 : Number(bucket.branchId) || bucket.branchId,
    stage: bucket.stage,
    description: bucket.description,
    tables: `${ctx.baseUrl}/v2/storage/buckets/${bucket.id}/tables`,
    created: bucket.created,
    lastChangeDate: tables.reduce<string | null>((acc, t) => (t.lastChangeDate && (!acc || t.lastChangeDate > acc) ? t.lastChangeDate : acc), null),
    isReadOnly: false,
    dataSizeBytes: tables.reduce((acc, t) => acc + t.dataSizeBytes, 0),
    rowsCount: tables.reduce((acc, t) => acc + t.rowsCount, 0),
    isMaintenance: false,
    backend: ctx.tableBackend,
    sharing: null,
    hasExternalSchema: false,
    attributes: [],
    metadata: ctx.metadata.list('bucket', bucket.id).map(metadataResource),
  };
}

export function tableResource(ctx: EmulatorContext, table: TableRecord): Record<string, unknown> {
  const bucket = ctx.state.get<BucketRecord>('bucket', table.bucketId);
  return {
    uri: `${ctx.baseUrl}/v2/storage/tables/${table.id}`,
    id: table.id,
    name: table.name,
    displayName: table.displayName ?? table.name,
    transactional: false,
    primaryKey: table.primaryKey,
    indexType: null,
    indexKey: [],
    distributionType: null,
    distributionKey: [],
    syntheticPrimaryKeyEnabled: false,
    created: table.created,
    lastImportDate: table.lastImportDate,
    lastChangeDate: table.lastChangeDate,
    rowsCount: table.rowsCount,
    dataSizeBytes: table.dataSizeBytes,
    isAlias: false,
    isAliasable: true,
    isTyped: table.definition !== undefined,
    // Each column of a typed table says it can be filtered on (`whereColumn`), as the service's do. An untyped table
    // has a definition too, as the service now sends it: its primary key and each column with an empty definition.
    definition: table.definition
      ? { ...table.definition, columns: table.definition.columns.map((c) => ({ ...c, canBeFiltered: true })) }
      : { primaryKeysNames: table.primaryKey, columns: table.columns.map((name) => ({ name, definition: {} })) },
    tableType: 'table',
    columns: table.columns,
    attributes: [],
    metadata: ctx.metadata.list('table', table.id).map(metadataResource),
    columnMetadata: columnMetadataMap(ctx.metadata, table),
    bucket: bucket ? bucketResource(ctx, bucket) : { id: table.bucketId },
  };
}

export function jobResource(ctx: EmulatorContext, job: JobRecord): Record<string, unknown> {
  return {
    id: job.id,
    status: job.status,
    url: `${ctx.baseUrl}/v2/storage/jobs/${job.id}`,
    tableId: job.tableId,
    operationName: job.operationName,
    operationParams: job.operationParams,
    createdTime: job.createdTime,
    startTime: job.startTime,
    endTime: job.endTime,
    runId: job.runId,
    results: job.results,
    creatorToken: job.creatorToken,
    metrics: job.metrics,
    error: job.error,
  };
}

/**
 * A table snapshot as the service lists and shows it (`id` a string). The emulator keeps a snapshot's rows in its own
 * database, not in a file: `dataFileId` is null.
 */
export function snapshotResource(ctx: EmulatorContext, s: SnapshotRecord): Record<string, unknown> {
  return {
    id: String(s.id),
    description: s.description,
    createdTime: s.createdTime,
    type: 'table',
    creatorToken: s.creatorToken,
    uri: `${ctx.baseUrl}/v2/storage/snapshots/${s.id}`,
    dataFileId: null,
    table: { id: s.table.id, name: s.table.name, primaryKey: s.table.primaryKey, columns: s.table.columns },
  };
}
