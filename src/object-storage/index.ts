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
export { uploadSliced, type UploadSlicedOptions, type UploadSlicedResult, type SlicedUploadState, type UploadedSlice } from './sliced-upload';
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
  type PageTableRows,
} from './page-group-writer';
