// Runs a schedule never started, as a Prometheus counter on the worker's metrics endpoint. Temporal counts them only
// in each schedule's description (`temporal schedule describe`: overlapSkipped, bufferDropped, missedCatchupWindow),
// so the worker reads the descriptions of the schedules that start the plugin's workflows on its task queues, on an
// interval, and adds what each count grew by.
import type { ConnectionLike } from '@temporalio/client';
import type { MetricMeter } from '@temporalio/common';

/** Runs schedules skipped; labels `schedule_id`, `workflow_type`, `namespace`, `task_queue`, `reason` ({@link SkipReason}). */
export const METRIC_SCHEDULE_RUNS_SKIPPED = 'sapi_schedule_runs_skipped_total';

/** Default of `SAPI_SCHEDULE_METRICS_INTERVAL`: how often the worker reads the schedules' counts (seconds). */
export const DEFAULT_SCHEDULE_METRICS_INTERVAL_S = 60;

/** The workflow types whose schedules are counted. */
const SCHEDULED_WORKFLOW_TYPES: ReadonlySet<string> = new Set(['importTableWorkflow', 'exportTableWorkflow', 'extractWorkflow']);

/**
 * Why a run was not started: `overlap_skip` (due while the previous run still ran, overlap `skip`), `buffer_dropped`
 * (due while the buffer of a `buffer-…` policy was full), `missed_catchup_window` (due while the schedule could not
 * act, and older than its catch-up window when it could).
 */
export type SkipReason = 'overlap_skip' | 'buffer_dropped' | 'missed_catchup_window';
const REASONS: readonly SkipReason[] = ['overlap_skip', 'buffer_dropped', 'missed_catchup_window'];

/** One schedule's counts, as its description has them. */
export interface ScheduleSkips {
  scheduleId: string;
  workflowType: string;
  taskQueue: string;
  skipped: Record<SkipReason, number>;
}

const count = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/**
 * The skip counts of the namespace's schedules that start one of the plugin's workflows on one of `taskQueues`:
 * one `ListSchedules` (a page per 1,000 schedules) and one `DescribeSchedule` per schedule of those workflow types.
 * Raw gRPC: nothing is decoded, so a payload codec the client lacks does not matter.
 */
export async function readScheduleSkips(connection: ConnectionLike, namespace: string, taskQueues: ReadonlySet<string>): Promise<ScheduleSkips[]> {
  const ids: string[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await connection.workflowService.listSchedules({ namespace, maximumPageSize: 1000, nextPageToken });
    for (const entry of page.schedules ?? []) {
      if (entry.scheduleId && SCHEDULED_WORKFLOW_TYPES.has(entry.info?.workflowType?.name ?? '')) ids.push(entry.scheduleId);
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  const found: ScheduleSkips[] = [];
  for (const scheduleId of ids) {
    let described;
    try {
      described = await connection.workflowService.describeSchedule({ namespace, scheduleId });
    } catch (err) {
      if ((err as { code?: number }).code === 5) continue; // NOT_FOUND: deleted since the listing
      throw err;
    }
    const start = described.schedule?.action?.startWorkflow;
    const taskQueue = start?.taskQueue?.name ?? '';
    if (!taskQueues.has(taskQueue)) continue;
    const info = described.info;
    found.push({
      scheduleId,
      workflowType: start?.workflowType?.name ?? '',
      taskQueue,
      skipped: {
        overlap_skip: count(info?.overlapSkipped),
        buffer_dropped: count(info?.bufferDropped),
        missed_catchup_window: count(info?.missedCatchupWindow),
      },
    });
  }
  return found;
}

/**
 * Turns schedule counts read again and again into counter increments: the first reading of a schedule adds its whole
 * count (so the counter shows what `temporal schedule describe` shows), later ones what it grew by. A count that went
 * down (the schedule was deleted and created again) is taken as the new base and adds nothing.
 */
export class ScheduleSkipCounter {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly meter: MetricMeter,
    private readonly namespace: string,
  ) {}

  record(schedules: readonly ScheduleSkips[]): void {
    const counter = this.meter.createCounter(
      METRIC_SCHEDULE_RUNS_SKIPPED,
      '1',
      'Runs schedules of sapi-temporal workflows skipped (overlap, full buffer, missed catch-up window)',
    );
    for (const schedule of schedules) {
      for (const reason of REASONS) {
        const key = `${schedule.scheduleId}\u0000${reason}`;
        const now = schedule.skipped[reason];
        const before = this.last.get(key);
        this.last.set(key, now);
        const grown = before === undefined ? now : Math.max(0, now - before);
        // a first reading adds 0 too: every schedule has its series from the start (an alert can compare with it)
        if (before === undefined || grown > 0) {
          counter.add(grown, {
            namespace: this.namespace,
            task_queue: schedule.taskQueue,
            schedule_id: schedule.scheduleId,
            workflow_type: schedule.workflowType,
            reason,
          });
        }
      }
    }
  }
}

export interface ScheduleSkipWatchOptions {
  connection: ConnectionLike;
  namespace: string;
  /** The worker's task queues: schedules whose action starts a workflow on one of them are counted. */
  taskQueues: readonly string[];
  /** The meter the counter is on (the runtime's: what the Prometheus endpoint serves). */
  meter: MetricMeter;
  /** Between two readings (ms); default {@link DEFAULT_SCHEDULE_METRICS_INTERVAL_S}. */
  intervalMs?: number;
  /** A reading failed (e.g. the API key may not list schedules); the next one is tried at the next interval. */
  onError?(err: unknown): void;
}

/** A running watch: `poll()` reads once now; `stop()` ends the interval and waits for a reading in flight. */
export interface ScheduleSkipWatch {
  poll(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Reads the schedules' skip counts now and every `intervalMs` into {@link METRIC_SCHEDULE_RUNS_SKIPPED}. The timer
 * does not keep the process alive; a failed reading is reported once per distinct message and tried again later.
 */
export function watchScheduleSkips(options: ScheduleSkipWatchOptions): ScheduleSkipWatch {
  const counter = new ScheduleSkipCounter(options.meter, options.namespace);
  const queues = new Set(options.taskQueues);
  const intervalMs = options.intervalMs ?? DEFAULT_SCHEDULE_METRICS_INTERVAL_S * 1000;
  let reported: string | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const poll = (): Promise<void> => {
    inFlight = inFlight.then(async () => {
      try {
        counter.record(await readScheduleSkips(options.connection, options.namespace, queues));
        reported = undefined;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (message !== reported) options.onError?.(err);
        reported = message;
      }
    });
    return inFlight;
  };
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => void poll().then(next), intervalMs);
    timer.unref();
  };
  void poll().then(next);
  return {
    poll,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
  };
}
