/** Public surface of object-storage transfers. */
export {
  createS3Client,
  assertCredentialsFresh,
  credentialsRemainingMs,
  mapS3Error,
  parseS3Uri,
  DEFAULT_REGION,
  DEFAULT_CREDENTIALS_MARGIN_MS,
  DEFAULT_S3_MAX_ATTEMPTS,
  DEFAULT_S3_MAX_SOCKETS,
  type S3ClientOptions,
  type TemporaryCredentials,
} from './s3-client';
export { openSource, fileSource, httpSource, s3Source, bufferSource, type ByteSource, type OpenSourceOptions } from './sources';
export {
  uploadMultipart,
  resolvePartSize,
  DEFAULT_PART_SIZE_BYTES,
  MIN_PART_SIZE_BYTES,
  MAX_PART_SIZE_BYTES,
  MAX_PARTS,
  DEFAULT_UPLOAD_CONCURRENCY,
  type UploadMultipartOptions,
  type UploadMultipartResult,
  type MultipartUploadState,
  type MultipartResume,
  type UploadedPart,
} from './multipart-upload';
export {
  uploadSlices,
  uploadSliced,
  type UploadSlicesOptions,
  type UploadSlicesResult,
  type UploadSlicedOptions,
  type UploadSlicedResult,
  type SlicedUploadState,
  type UploadedSlice,
} from './sliced-upload';
export { type ObjectStore, type ObjectReader, type PlainGet, type RangedRead, type StoreProvider, type StoreUploadOptions, type StoredObject, type StateSealer } from './object-store';
export { s3Store, type S3StoreOptions } from './s3-store';
export { absStore, type AbsStoreOptions } from './abs-store';
export { gcsStore, type GcsStoreOptions } from './gcs-store';
export {
  downloadFile,
  readManifest,
  headerLine,
  DEFAULT_DOWNLOAD_CONCURRENCY,
  type DownloadFileOptions,
  type DownloadFileResult,
  type DownloadState,
  type DownloadableFile,
} from './download';
export {
  createStageStore,
  localStageStore,
  s3StageStore,
  stageStoreOf,
  readText,
  readableOf,
  jobRunPrefix,
  pageKey,
  pagesPrefix,
  parsePageKey,
  csvKey,
  STAGE_PART_SIZE_BYTES,
  type StageStore,
  type StageStoreDeps,
} from './stage-store';
export {
  PageGroupWriter,
  GROUP_MAX_PAGES,
  GROUP_MAX_CHARS,
  GROUP_MAX_MS,
  GROUP_WRITES_IN_FLIGHT,
  type PageGroupWriterOptions,
  type PageTableLines,
} from './page-group-writer';
export {
  createContainerClient,
  assertAbsCredentialsFresh,
  mapAbsError,
  parseAbsUrl,
  absUrl,
  DEFAULT_ABS_MAX_TRIES,
  type AbsCredentials,
} from './abs-client';
export {
  uploadBlockBlob,
  resolveBlockSize,
  blockId,
  MAX_BLOCKS,
  MAX_BLOCK_SIZE_BYTES,
  type UploadBlockBlobOptions,
  type UploadBlockBlobResult,
  type AbsUploadState,
  type StagedBlock,
} from './abs-upload';
export {
  GcsClient,
  assertGcsCredentialsFresh,
  gcsCredentialsOf,
  parseGsUrl,
  gsUrl,
  DEFAULT_GCS_ENDPOINT,
  type GcsCredentials,
  type GcsSessionStatus,
  type GcsObjectResource,
} from './gcs-client';
export {
  uploadGcsObject,
  resolveChunkSize,
  GCS_CHUNK_GRANULARITY,
  type UploadGcsObjectOptions,
  type UploadGcsObjectResult,
  type GcsUploadState,
} from './gcs-upload';
