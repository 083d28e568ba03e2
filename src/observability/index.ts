export {
  METRIC_BYTES_TRANSFERRED,
  METRIC_ROWS_IMPORTED,
  METRIC_PAGES_FETCHED,
  METRIC_ACTIVITY_FAILURES,
  METRIC_JOB_WAIT,
  JOB_WAIT_BUCKETS_SECONDS,
  SeenJobs,
} from './metrics';
export { metricsInterceptors, outageInterceptors } from './activity-interceptor';
export {
  watchScheduleSkips,
  readScheduleSkips,
  METRIC_SCHEDULE_RUNS_SKIPPED,
  DEFAULT_SCHEDULE_METRICS_INTERVAL_S,
  type ScheduleSkipWatch,
  type ScheduleSkipWatchOptions,
  type ScheduleSkips,
  type SkipReason,
} from './schedule-metrics';
export { formatJsonLogLine, createWorkerLogger, LOG_FORMATS, DEFAULT_LOG_FORMAT, type LogFormat } from './logging';
export { configureWorkerRuntime, configurePluginRuntime, metricsEndpointError, type WorkerRuntimeOptions, type WorkerRuntimeResult } from './runtime';
