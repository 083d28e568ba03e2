/** Public surface of the Storage API client. */
export {
  createStorageClient,
  IMPORTER_MAX_BYTES,
  type StorageClient,
  type StorageClientOptions,
  type CallOptions,
  type PrepareFileInput,
  type GetFileInput,
  type ListFilesInput,
  type UploadViaImporterInput,
  type CreateBucketInput,
  type CreateTableAsyncInput,
  type LoadTableAsyncInput,
  type ColumnDefinitionInput,
  type CreateTableDefinitionInput,
  type MetadataPair,
  type SetTableMetadataInput,
  type ExportTableAsyncInput,
  type WhereFilter,
  type ListJobsInput,
} from './client';
export {
  DEFAULT_TIMEOUTS,
  DEFAULT_CONNECTIONS_PER_ORIGIN,
  DEFAULT_KEEP_ALIVE_MS,
  USER_AGENT,
  createDefaultDispatcher,
  type HttpTimeouts,
} from './http';
export {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  classifyTransportError,
  type RetryPolicy,
  type RetryDecision,
  type RetryDecisionInput,
  type AttemptOutcome,
} from './retry-policy';
export {
  findJobForImport,
  findJobForExport,
  startImportOnce,
  startExportOnce,
  startTableDefinitionOnce,
  findJobForTableDefinition,
  lookAgain,
  findFilesOfRun,
  DEFAULT_RECONCILE_DELAYS_MS,
  DEFAULT_RECONCILE_PAGE_SIZE,
  RECONCILE_STALLED_PAGES,
  DEFAULT_IMPORT_LOOKBACK_MS,
  DEFAULT_EXPORT_LOOKBACK_MS,
  type FindJobForImportInput,
  type FindJobForExportInput,
  type StartImportOnceInput,
  type StartExportOnceInput,
  type StartTableDefinitionOnceInput,
  type FindJobForTableDefinitionInput,
  type StartOnceResult,
} from './reconcile';
export { pollBackoff, nextPollDelay, jobOutcome, DEFAULT_POLL_SCHEDULE, type PollSchedule, type JobLike, type JobOutcome } from '../contracts/poll-schedule';
export * from './schemas';
export * from './typed-schemas';
