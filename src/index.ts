// The public surface of sapi-temporal. Workflows live in the `sapi-temporal/workflows` subpath (bundled by the
// worker); everything here runs in normal Node code (workers, clients, tests).
export { SapiPlugin, PLUGIN_NAME, workflowsPath, type SapiPluginOptions } from './plugin';
export {
  startWorker,
  connectWorker,
  WorkerStartError,
  WORKER_STOP_GRACE_MS,
  WORKER_INTERRUPTED_EXIT_CODE,
  type RunWorkerOptions,
  type RunningWorker,
} from './worker';
export {
  startSapiWorkflow,
  startImport,
  startExport,
  startExtract,
  startBackfill,
  executeImport,
  executeExport,
  executeExtract,
  executeBackfill,
  START_TOKEN_MEMO,
  type SapiStartOptions,
  type SapiWorkflowHandle,
  type SapiStartedWorkflow,
  type WorkflowProgress,
} from './client';
export { replayCheck, readHistoryFiles, describeHistory, type NamedHistory, type ReplayVerdict, type ReplayCheckOptions } from './replay-check';
export { createActivities, createActivityDeps, type SapiActivities, type ActivityDeps } from './activities';
export { loadSettings, connectionFor, DEFAULT_CONNECTION, DEFAULT_TASK_QUEUE, type Settings, type ConnectionSettings } from './config';
export {
  createStorageClient,
  DEFAULT_TIMEOUTS,
  DEFAULT_RETRY_POLICY,
  DEFAULT_CONNECTIONS_PER_ORIGIN,
  type StorageClient,
  type StorageClientOptions,
  type HttpTimeouts,
  type RetryPolicy,
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
  type PreviewTableInput,
  type TablePreview,
  PREVIEW_MAX_ROWS,
  type ListJobsInput,
} from './storage-api';
export type { InputPolicy } from './security/policy';
export {
  SapiErrorCode,
  ERROR_CODES,
  ERROR_CLASSES,
  NON_RETRYABLE_ERROR_CODES,
  SapiError,
  SapiStorageError,
  SapiHttpError,
  SapiNetworkError,
  SapiTimeoutError,
  SapiInvalidResponseError,
  SapiJobError,
  SapiCredentialsExpiredError,
  SapiTransferError,
  SapiInvalidInputError,
  SapiInputForbiddenError,
  BODY_EXCERPT_CHARS,
  httpErrorCode,
  isRetryableStatus,
  isSapiError,
  toApplicationFailure,
  unlessNotFound,
  errorCode,
  errorMessage,
  excerptOf,
  type ErrorCodeInfo,
  type StorageErrorCode,
  type SapiErrorDetails,
  type SapiErrorOptions,
  type RequestDescription,
} from './errors';
export type {
  ImportTableInput,
  ImportTableResult,
  ExportTableInput,
  ExportTableResult,
  TransferProgress,
  PollingOptions,
  CsvDialect,
  JobSummary,
  TypedColumn,
} from './contracts/transfer';
export { DEFAULT_METADATA_PROVIDER, DESCRIPTION_METADATA_KEY } from './contracts/transfer';
// load receipts (docs/using.md#receipts): one row per table load, in the run's result and a Storage table
export {
  DEFAULT_RECEIPTS_TABLE,
  RECEIPT_COLUMNS,
  receiptIdOf,
  receiptFromRow,
  type LoadReceipt,
  type ReceiptOutcome,
  type ReceiptOrigin,
  type ReceiptSource,
  type ReceiptsOption,
} from './contracts/receipts';
export type { CallWaiting } from './contracts/call-waiting';
export type { ExtractInput, ExtractOptions, ExtractResult, ExtractProgress, ExtractMode, ExtractPhase, ExtractFetchTuning } from './contracts/extract';
export type { StopReasonCounts } from './extractor/checkpoint';
export type {
  BackfillInput,
  BackfillExtractInput,
  BackfillImportInput,
  BackfillCommonInput,
  BackfillResult,
  BackfillProgress,
  BackfillPhase,
  BackfillWindow,
  BackfillWindowState,
  BackfillWindowOutcome,
} from './contracts/backfill';
export { BACKFILL_PRIORITY, BACKFILL_CONFIG_KEY, DEFAULT_BACKFILL_PARALLEL, MAX_BACKFILL_PARALLEL, MAX_BACKFILL_WINDOWS } from './contracts/backfill';
export { backfillWindows, dateWindows } from './contracts/backfill-plan';
export type { ExtractRunTimes } from './extractor/types';
export type { StopReason } from './extractor/scroller';
export type { WorkflowContracts, WorkflowName, WorkflowInput, WorkflowResult } from './contracts/workflows';
// what operators search and see (docs/operating.md): the search attribute keys, the command that registers them,
// and the static summary/details to start a run with
export {
  SAPI_SEARCH_ATTRIBUTES,
  SapiOperation,
  SapiTableId,
  SapiBucket,
  SapiConnection,
  SapiSourceKind,
  SapiDestinationKind,
  SapiApiHost,
  SapiStateKey,
  SapiPhase,
  SapiRows,
  SapiBytes,
  SapiReceipt,
  registerCommand,
  runMetadata,
} from './contracts/search-attributes';
export {
  EncryptionCodec,
  codecDataConverter,
  dataConverterFromEnv,
  loadCodecKeys,
  parseCodecKeys,
  failureConverterPath,
  createCodecServer,
  type CodecKey,
  type CodecServerOptions,
  type CodecServerHandle,
} from './codec';
export { DEFAULT_CODEC_SERVER_HOST } from './codec';
export {
  configureWorkerRuntime,
  createWorkerLogger,
  formatJsonLogLine,
  metricsInterceptors,
  METRIC_BYTES_TRANSFERRED,
  METRIC_ROWS_IMPORTED,
  METRIC_PAGES_FETCHED,
  METRIC_ACTIVITY_FAILURES,
  METRIC_JOB_WAIT,
  METRIC_SCHEDULE_RUNS_SKIPPED,
  DEFAULT_SCHEDULE_METRICS_INTERVAL_S,
  watchScheduleSkips,
  type ScheduleSkipWatch,
  type ScheduleSkipWatchOptions,
  type SkipReason,
  LOG_FORMATS,
  type LogFormat,
  type WorkerRuntimeOptions,
  type WorkerRuntimeResult,
} from './observability';
export type { SapiTracing, TracingOptions } from './observability/tracing';
export type { SpanAttributes } from './observability/spans';
export {
  loadTemporalConnection,
  temporalConnectionOptions,
  describeTemporalSecurity,
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_NAMESPACE,
  type TemporalConnectionSettings,
  type TemporalConnectionOptions,
} from './config/temporal';
