/**
 * zod schemas of every Storage API response we read. Loose on fields we ignore (the service adds fields over
 * time), strict on the fields we use. Types are inferred from the schemas so they can never drift.
 */
import { z } from 'zod';

/** Ids are integers; a few endpoints of the real service send them as numeric strings. */
const numericId = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);

/** Temporary object-storage credentials (`uploadParams.credentials`, or `credentials` of a file detail). */
export const credentialsSchema = z.looseObject({
  AccessKeyId: z.string().min(1),
  SecretAccessKey: z.string().min(1),
  SessionToken: z.string().min(1),
  /** ISO 8601 with offset, e.g. `2025-01-01T12:00:00+00:00`. */
  Expiration: z.string().min(1),
});
export type Credentials = z.infer<typeof credentialsSchema>;

export const uploadParamsSchema = z.looseObject({
  key: z.string().min(1),
  bucket: z.string().min(1),
  acl: z.string().optional(),
  credentials: credentialsSchema,
  'x-amz-server-side-encryption': z.string().optional(),
});
export type UploadParams = z.infer<typeof uploadParamsSchema>;

export const s3PathSchema = z.looseObject({ bucket: z.string().min(1), key: z.string().min(1) });
export type S3Path = z.infer<typeof s3PathSchema>;

/** Azure Blob Storage credentials (`absUploadParams.absCredentials`, or `absCredentials` of a file detail). */
export const absCredentialsSchema = z.looseObject({
  /** `BlobEndpoint=https://<account>.blob.core.windows.net;SharedAccessSignature=sv=…`: a secret. */
  SASConnectionString: z.string().min(1),
  /** ISO 8601 with offset. */
  expiration: z.string().min(1),
});
export type AbsCredentials = z.infer<typeof absCredentialsSchema>;

/** Prepare's upload target on Azure Blob Storage: a blob (a blob-name prefix when sliced) in a container. */
export const absUploadParamsSchema = z.looseObject({
  blobName: z.string().min(1),
  accountName: z.string().min(1),
  container: z.string().min(1),
  absCredentials: absCredentialsSchema,
});
export type AbsUploadParams = z.infer<typeof absUploadParamsSchema>;

export const absPathSchema = z.looseObject({ container: z.string().min(1), name: z.string().min(1) });
export type AbsPath = z.infer<typeof absPathSchema>;

/** Google Cloud Storage credentials (`gcsCredentials` of a file detail; `gcsUploadParams` carries the same fields). */
export const gcsCredentialsSchema = z.looseObject({
  /** OAuth bearer token: a secret. */
  access_token: z.string().min(1),
  /** Seconds from the answer. */
  expires_in: z.number().nonnegative(),
  token_type: z.string().optional(),
  projectId: z.string().min(1),
});
export type GcsCredentialsFields = z.infer<typeof gcsCredentialsSchema>;

/** Prepare's upload target on Google Cloud Storage: an object (a key prefix when sliced) and the token, side by side. */
export const gcsUploadParamsSchema = gcsCredentialsSchema.extend({ bucket: z.string().min(1), key: z.string().min(1) });
export type GcsUploadParams = z.infer<typeof gcsUploadParamsSchema>;

export const gcsPathSchema = z.looseObject({ bucket: z.string().min(1), key: z.string().min(1) });
export type GcsPath = z.infer<typeof gcsPathSchema>;

/** The file resource: from prepare (with `uploadParams`), the importer, and file detail (with `s3Path`). */
export const fileSchema = z.looseObject({
  id: numericId,
  created: z.string().optional(),
  isPublic: z.boolean().optional(),
  isSliced: z.boolean().default(false),
  isEncrypted: z.boolean().optional(),
  name: z.string(),
  /** Presigned URL (of the manifest when sliced); expires in about 1 h. */
  url: z.string().optional(),
  /** Object-storage region; absent on non-S3 backends. */
  region: z.string().optional(),
  sizeBytes: z.number().int().nullable().optional(),
  tags: z.array(z.string()).default([]),
  maxAgeDays: z.number().nullable().optional(),
  isPermanent: z.boolean().optional(),
  provider: z.string().optional(),
  runId: z.unknown().optional(),
  runIds: z.array(z.unknown()).optional(),
  creatorToken: z.looseObject({ id: numericId.optional(), description: z.string().optional() }).optional(),
  uploadParams: uploadParamsSchema.optional(),
  s3Path: s3PathSchema.optional(),
  credentials: credentialsSchema.optional(),
  absUploadParams: absUploadParamsSchema.optional(),
  absPath: absPathSchema.optional(),
  absCredentials: absCredentialsSchema.optional(),
  gcsUploadParams: gcsUploadParamsSchema.optional(),
  gcsPath: gcsPathSchema.optional(),
  gcsCredentials: gcsCredentialsSchema.optional(),
});
export type StorageFile = z.infer<typeof fileSchema>;

/**
 * A prepare response: a file resource that must carry `uploadParams` (S3), `absUploadParams` (Azure) or
 * `gcsUploadParams` (Google Cloud Storage) with credentials.
 */
export const preparedFileSchema = fileSchema.refine((f) => f.uploadParams !== undefined || f.absUploadParams !== undefined || f.gcsUploadParams !== undefined, {
  message: 'a prepared file needs uploadParams (S3), absUploadParams (Azure Blob Storage) or gcsUploadParams (Google Cloud Storage)',
  path: ['uploadParams'],
});
export type PreparedFile = z.infer<typeof preparedFileSchema>;

export const fileListSchema = z.array(fileSchema);

/** Job statuses. `success` is the successful terminal status, `error` the failed one. */
export const jobStatusSchema = z.enum(['waiting', 'processing', 'success', 'error']);
export type JobStatus = z.infer<typeof jobStatusSchema>;

/** `error` of a job: a string in the initial 202 response, `{code, message, exceptionId}` in a polled job. */
export const jobErrorSchema = z.union([
  z.string(),
  z.looseObject({
    code: z.union([z.string(), z.number()]).nullable().optional(),
    message: z.string(),
    exceptionId: z.string().nullable().optional(),
  }),
]);
export type JobError = z.infer<typeof jobErrorSchema>;

const jobObjectSchema = z.looseObject({
  id: numericId,
  status: jobStatusSchema,
  url: z.string().optional(),
  tableId: z.string().nullable().optional(),
  operationName: z.string().optional(),
  operationParams: z.record(z.string(), z.unknown()).nullable().optional(),
  createdTime: z.string().nullable().optional(),
  startTime: z.string().nullable().optional(),
  endTime: z.string().nullable().optional(),
  /** `null` until done; `[]` when empty; an object otherwise (table, import stats, `{file:{id}}`). */
  results: z.unknown().optional(),
  metrics: z.unknown().optional(),
  error: jobErrorSchema.nullable().optional(),
});

/** A Storage job. When `id` is missing but `url` ends in `/jobs/<id>`, the id is taken from the url. */
export const jobSchema = z.preprocess((raw) => {
  if (raw !== null && typeof raw === 'object' && !('id' in raw) && 'url' in raw && typeof raw.url === 'string') {
    const m = /\/jobs\/(\d+)\/?$/.exec(raw.url);
    if (m) return { ...raw, id: Number(m[1]) };
  }
  return raw;
}, jobObjectSchema);
export type Job = z.infer<typeof jobObjectSchema>;

export const jobListSchema = z.array(jobSchema);

/** `results` of a finished `tableImport` job. */
export const tableImportResultsSchema = z.looseObject({
  importedRowsCount: z.number().int().nullable().optional(),
  totalRowsCount: z.number().int().nullable().optional(),
  totalDataSizeBytes: z.number().int().nullable().optional(),
  importedColumns: z.array(z.string()).optional(),
  warnings: z.array(z.unknown()).optional(),
});
export type TableImportResults = z.infer<typeof tableImportResultsSchema>;

/** `results` of a finished `tableExport` job. */
export const tableExportResultsSchema = z.looseObject({
  file: z.looseObject({ id: numericId }),
  cacheHit: z.boolean().optional(),
});
export type TableExportResults = z.infer<typeof tableExportResultsSchema>;

export const bucketSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  stage: z.string(),
  description: z.string().nullable().optional(),
  backend: z.string().optional(),
  created: z.string().optional(),
});
export type Bucket = z.infer<typeof bucketSchema>;
export const bucketListSchema = z.array(bucketSchema);

export const tableSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  columns: z.array(z.string()).default([]),
  primaryKey: z.array(z.string()).default([]),
  rowsCount: z.number().int().nullable().optional(),
  dataSizeBytes: z.number().int().nullable().optional(),
  lastImportDate: z.string().nullable().optional(),
  lastChangeDate: z.string().nullable().optional(),
  created: z.string().optional(),
  bucket: z.looseObject({ id: z.string(), stage: z.string().optional(), name: z.string().optional() }).optional(),
});
export type Table = z.infer<typeof tableSchema>;

/** `/v2/storage/buckets/{id}/tables` and `/v2/storage/tables` list tables (with the fields we read). */
export const tableListSchema = z.array(tableSchema);

/** Index `GET /v2/storage`: we read `services` to find the importer. */
export const indexSchema = z.looseObject({
  services: z.array(z.looseObject({ id: z.string(), url: z.string().min(1) })).default([]),
  api: z.string().optional(),
  version: z.string().optional(),
});
export type StorageIndex = z.infer<typeof indexSchema>;

/** `GET /v2/storage/tokens/verify`. */
export const tokenSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String),
  description: z.string().nullable().optional(),
  owner: z.looseObject({ id: numericId, name: z.string() }).optional(),
  canManageBuckets: z.boolean().optional(),
  isMasterToken: z.boolean().optional(),
});
export type TokenInfo = z.infer<typeof tokenSchema>;

/**
 * Manifest of a sliced file: slice addresses in concatenation order, `s3://bucket/key` (S3),
 * `azure://<account>.blob.core.windows.net/<container>/<blob>` (Azure Blob Storage) or `gs://bucket/key` (GCS).
 */
export const manifestSchema = z.looseObject({
  entries: z.array(
    z.looseObject({
      url: z
        .string()
        .regex(
          /^(?:(?:s3|gs):\/\/[^/]+\/.+|(?:azure|https):\/\/[^./]+\.blob\.core\.windows\.net\/[^/]+\/.+)$/,
          'expected s3://<bucket>/<key>, azure://<account>.blob.core.windows.net/<container>/<blob> or gs://<bucket>/<key>',
        ),
      mandatory: z.boolean().optional(),
    }),
  ),
});
export type Manifest = z.infer<typeof manifestSchema>;

/**
 * Error bodies. Main API: `{error, code, exceptionId}`; importer: `{message, status:"error"}`;
 * maintenance (503): `{status:"maintenance", reason, estimatedEndTime}`.
 */
export const serviceErrorSchema = z.looseObject({
  error: z.string().optional(),
  message: z.string().optional(),
  code: z.union([z.string(), z.number()]).nullable().optional(),
  exceptionId: z.string().nullable().optional(),
  status: z.string().optional(),
  reason: z.string().optional(),
  estimatedEndTime: z.string().nullable().optional(),
});
export type ServiceErrorBody = z.infer<typeof serviceErrorSchema>;

/** `204 No Content` and other bodies we ignore. */
export const emptySchema = z.unknown();
