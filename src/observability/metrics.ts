import type { Info as ActivityInfo } from '@temporalio/activity';
import type { MetricCounter, MetricHistogram, MetricMeter, MetricTags } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import type { JobSummary } from '../contracts/transfer';

/** Bytes moved by transfer activities; tag `direction`: `upload` (to Storage) or `download` (exports, API pages). */
export const METRIC_BYTES_TRANSFERRED = 'sapi_bytes_transferred_total';
/** Rows Storage reports as imported (`importedRowsCount` of finished import jobs), once per job. */
export const METRIC_ROWS_IMPORTED = 'sapi_rows_imported_total';
/** Pages an extraction fetched and staged (a repeated response is not counted). */
export const METRIC_PAGES_FETCHED = 'sapi_pages_fetched_total';
/** Failed activity attempts (each one a retry or the final failure); tag `type`: the error code (`SAPI_…`). */
export const METRIC_ACTIVITY_FAILURES = 'sapi_activity_failures_total';
/** Time from a Storage job's creation to its end (seconds, from the job's own `createdTime`/`endTime`); histogram. */
export const METRIC_JOB_WAIT = 'sapi_job_wait_seconds';

/** Buckets of {@link METRIC_JOB_WAIT} (seconds): Storage jobs take from under a second to an hour. */
export const JOB_WAIT_BUCKETS_SECONDS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * The meter the plugin records an activity's metrics on: the runtime's (where the SDK's own go), tagged like the
 * SDK's own metrics, in snake_case (`namespace`, `task_queue`, `activity_type`); the activity context's meter would
 * tag them `taskQueue`, `activityType`.
 */
export function activityMeter(info: Pick<ActivityInfo, 'activityNamespace' | 'taskQueue' | 'activityType'>): MetricMeter {
  // one tagged meter per activity type and queue, kept (each activity's result is recorded on it)
  const base = Runtime.instance().metricMeter;
  let tagged = taggedMeters.get(base);
  if (!tagged) taggedMeters.set(base, (tagged = new Map()));
  const key = `${info.activityNamespace}\n${info.taskQueue}\n${info.activityType}`;
  let meter = tagged.get(key);
  if (!meter) {
    meter = base.withTags({ namespace: info.activityNamespace, task_queue: info.taskQueue, activity_type: info.activityType });
    tagged.set(key, meter);
  }
  return meter;
}

/** The tagged meters of {@link activityMeter}, by the runtime's meter (a new runtime gets new ones). */
const taggedMeters = new WeakMap<MetricMeter, Map<string, MetricMeter>>();
/** The instruments created on a meter, by name: created once (each creation is a call into the native runtime). */
const instruments = new WeakMap<MetricMeter, Map<string, MetricCounter | MetricHistogram>>();

function instrument<M extends MetricCounter | MetricHistogram>(meter: MetricMeter, name: string, create: () => M): M {
  let made = instruments.get(meter);
  if (!made) instruments.set(meter, (made = new Map()));
  let metric = made.get(name) as M | undefined;
  if (!metric) {
    metric = create();
    made.set(name, metric);
  }
  return metric;
}

/** The counter `name` of `meter`, created at its first use. */
function counterOf(meter: MetricMeter, name: string, unit: string, description: string): MetricCounter {
  return instrument(meter, name, () => meter.createCounter(name, unit, description));
}

/** Activities whose result carries `bytes`, and the direction they move them in. */
const BYTES_DIRECTION: Record<string, 'upload' | 'download'> = {
  uploadFile: 'upload',
  uploadAndStartJob: 'upload',
  uploadSlices: 'upload',
  uploadViaImporter: 'upload',
  downloadFile: 'download',
  fetchPages: 'download',
};

/** Activities whose result is a {@link JobSummary}, or carries one under `job` (`uploadAndStartJob`). */
const JOB_ACTIVITIES = new Set(['createTableAsync', 'loadTableAsync', 'exportTableAsync', 'getJob', 'uploadAndStartJob']);

/** Job ids already counted (rows, wait): a finished job may pass through more than one result. Bounded. */
export class SeenJobs {
  private readonly ids = new Set<string>();
  constructor(private readonly limit = 10_000) {}

  /** True the first time `key` is offered (then remembered). */
  first(key: string): boolean {
    if (this.ids.has(key)) return false;
    this.ids.add(key);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}

const numberOf = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

/**
 * Records what one successful activity result says: bytes (upload/download activities), pages (`fetchPages`),
 * rows (a finished import job seen in a job activity's {@link JobSummary}, once per job).
 */
export function recordActivityResult(meter: MetricMeter, activityType: string, result: unknown, seen: SeenJobs): void {
  if (!result || typeof result !== 'object') return;
  const fields = result as Record<string, unknown>;
  const direction = BYTES_DIRECTION[activityType];
  const bytes = numberOf(fields.bytes);
  if (direction && bytes) counterOf(meter, METRIC_BYTES_TRANSFERRED, 'By', 'Bytes moved by transfer activities').add(bytes, { direction });
  const pages = numberOf(fields.pages);
  if (activityType === 'fetchPages' && pages) counterOf(meter, METRIC_PAGES_FETCHED, '1', 'Pages an extraction fetched and staged').add(pages);
  if (JOB_ACTIVITIES.has(activityType)) {
    const job = (activityType === 'uploadAndStartJob' ? fields.job : result) as JobSummary | undefined;
    if (!job || typeof job !== 'object') return;
    const rows = numberOf(job.results?.importedRowsCount);
    if (job.status === 'success' && rows !== undefined && seen.first(`rows:${job.id}`)) {
      counterOf(meter, METRIC_ROWS_IMPORTED, '1', 'Rows imported by finished Storage import jobs').add(rows);
    }
  }
}

/** The error code a failed attempt is counted under: the `ApplicationFailure` type (our `SAPI_…` code), else its name. */
export function failureType(err: unknown): string {
  if (err && typeof err === 'object') {
    const { type, name } = err as { type?: unknown; name?: unknown };
    if (typeof type === 'string' && type) return type;
    if (name === 'CancelledFailure') return 'CANCELLED';
    if (typeof name === 'string' && name) return name;
  }
  return 'UNKNOWN';
}

/** Counts one failed activity attempt under its error code. */
export function recordActivityFailure(meter: MetricMeter, err: unknown, tags: MetricTags = {}): void {
  counterOf(meter, METRIC_ACTIVITY_FAILURES, '1', 'Failed activity attempts by error code').add(1, { ...tags, type: failureType(err) });
}

/** A job record as the Storage API returns it (only the fields the wait needs). */
interface TimedJob {
  id: number | string;
  status: string;
  operationName?: string | null;
  createdTime?: string | null;
  endTime?: string | null;
}

/** Records {@link METRIC_JOB_WAIT} for a job that has ended (`success`/`error`), once per job. */
export function recordJobWait(meter: MetricMeter, job: TimedJob, seen: SeenJobs): void {
  if (job.status !== 'success' && job.status !== 'error') return;
  const created = job.createdTime ? Date.parse(job.createdTime) : NaN;
  const ended = job.endTime ? Date.parse(job.endTime) : NaN;
  if (!Number.isFinite(created) || !Number.isFinite(ended) || ended < created) return;
  if (!seen.first(`wait:${job.id}`)) return;
  instrument(meter, METRIC_JOB_WAIT, () => meter.createHistogram(METRIC_JOB_WAIT, 'float', 's', "Time from a Storage job's creation to its end")).record(
    (ended - created) / 1000,
    { operation: job.operationName ?? 'unknown', status: job.status },
  );
}
