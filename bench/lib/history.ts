/**
 * Reads timings out of a workflow history: when each activity was scheduled, started and completed (server clock,
 * ms), and the workflow's start and close. Pure over the events, so it is unit-tested with plain objects.
 */

/** The event fields we read (a structural subset of `temporal.api.history.v1.IHistoryEvent`). */
export interface HistoryEventLike {
  eventId?: unknown;
  eventType?: number | string | null;
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: unknown; attempt?: number | null } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: unknown; result?: unknown } | null;
  activityTaskFailedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskTimedOutEventAttributes?: { scheduledEventId?: unknown } | null;
}

/** Event type numbers of `temporal.api.enums.v1.EventType` that we read. */
export const EVENT = {
  WORKFLOW_EXECUTION_STARTED: 1,
  WORKFLOW_EXECUTION_COMPLETED: 2,
  WORKFLOW_EXECUTION_FAILED: 3,
  WORKFLOW_EXECUTION_TIMED_OUT: 4,
  ACTIVITY_TASK_SCHEDULED: 10,
  ACTIVITY_TASK_STARTED: 11,
  ACTIVITY_TASK_COMPLETED: 12,
  ACTIVITY_TASK_FAILED: 13,
  ACTIVITY_TASK_TIMED_OUT: 14,
  TIMER_STARTED: 17,
  TIMER_FIRED: 18,
  WORKFLOW_EXECUTION_TERMINATED: 27,
  WORKFLOW_EXECUTION_CONTINUED_AS_NEW: 28,
} as const;

/** One activity execution as the history shows it (the last attempt's start). */
export interface ActivitySpan {
  type: string;
  scheduledEventId: string;
  scheduledMs: number;
  startedMs?: number;
  /** Completed, failed or timed out (the end of the last attempt the history records). */
  endedMs?: number;
  outcome?: 'completed' | 'failed' | 'timedOut';
  attempt?: number;
  /** The raw result payloads of a completed activity (decode with the payload converter). */
  result?: unknown;
}

export interface HistoryTimings {
  events: number;
  startedMs?: number;
  closedMs?: number;
  activities: ActivitySpan[];
}

/** Epoch ms of a protobuf Timestamp whose `seconds` may be a number, a string, a bigint or a Long. */
export function timestampMs(ts: HistoryEventLike['eventTime']): number | undefined {
  if (!ts || ts.seconds === undefined || ts.seconds === null) return undefined;
  const s = ts.seconds as { toNumber?: () => number } | number | string | bigint;
  const seconds = typeof s === 'object' && typeof s.toNumber === 'function' ? s.toNumber() : Number(s);
  return seconds * 1000 + (ts.nanos ?? 0) / 1e6;
}

const CLOSE_EVENTS = new Set<number>([
  EVENT.WORKFLOW_EXECUTION_COMPLETED,
  EVENT.WORKFLOW_EXECUTION_FAILED,
  EVENT.WORKFLOW_EXECUTION_TIMED_OUT,
  EVENT.WORKFLOW_EXECUTION_TERMINATED,
  EVENT.WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
]);

/** Activity spans (in scheduling order), start/close times and the event count of one run's history. */
export function historyTimings(events: readonly HistoryEventLike[]): HistoryTimings {
  const spans = new Map<string, ActivitySpan>();
  let startedMs: number | undefined;
  let closedMs: number | undefined;
  for (const event of events) {
    const type = Number(event.eventType);
    const at = timestampMs(event.eventTime);
    if (at === undefined) continue;
    if (type === EVENT.WORKFLOW_EXECUTION_STARTED) startedMs = at;
    else if (CLOSE_EVENTS.has(type)) closedMs = at;
    else if (type === EVENT.ACTIVITY_TASK_SCHEDULED) {
      const id = String(event.eventId);
      spans.set(id, { type: event.activityTaskScheduledEventAttributes?.activityType?.name ?? '', scheduledEventId: id, scheduledMs: at });
    } else if (type === EVENT.ACTIVITY_TASK_STARTED) {
      const span = spans.get(String(event.activityTaskStartedEventAttributes?.scheduledEventId));
      if (span) Object.assign(span, { startedMs: at, attempt: event.activityTaskStartedEventAttributes?.attempt ?? undefined });
    } else if (type === EVENT.ACTIVITY_TASK_COMPLETED) {
      const span = spans.get(String(event.activityTaskCompletedEventAttributes?.scheduledEventId));
      if (span) Object.assign(span, { endedMs: at, outcome: 'completed', result: event.activityTaskCompletedEventAttributes?.result });
    } else if (type === EVENT.ACTIVITY_TASK_FAILED) {
      const span = spans.get(String(event.activityTaskFailedEventAttributes?.scheduledEventId));
      if (span) Object.assign(span, { endedMs: at, outcome: 'failed' });
    } else if (type === EVENT.ACTIVITY_TASK_TIMED_OUT) {
      const span = spans.get(String(event.activityTaskTimedOutEventAttributes?.scheduledEventId));
      if (span) Object.assign(span, { endedMs: at, outcome: 'timedOut' });
    }
  }
  return { events: events.length, startedMs, closedMs, activities: [...spans.values()] };
}

/** Start → end of the one completed activity of `type` (the transfer phase); throws when absent or repeated. */
export function activityDurationMs(timings: HistoryTimings, type: string): number {
  const done = timings.activities.filter((a) => a.type === type && a.outcome === 'completed');
  if (done.length !== 1) throw new Error(`expected one completed ${type} activity in the history, found ${done.length}`);
  const span = done[0]!;
  return span.endedMs! - (span.startedMs ?? span.scheduledMs);
}

/** Where the time of a sequence of activities of one type went, over one or more runs (ms, summed). */
export interface ActivityBreakdown {
  count: number;
  /** Scheduled → started: waiting for a worker slot / task dispatch. */
  queueMs: number;
  /** Started → completed: inside the activity. */
  runMs: number;
  /** Completed → the next one scheduled (same run): the workflow task deciding the next step. */
  gapMs: number;
}

/** Sums queue, run and gap times of the completed activities of `type` in each run's timings. */
export function activityBreakdown(runs: readonly HistoryTimings[], type: string): ActivityBreakdown {
  const total: ActivityBreakdown = { count: 0, queueMs: 0, runMs: 0, gapMs: 0 };
  for (const run of runs) {
    const spans = run.activities.filter((a) => a.type === type && a.outcome === 'completed' && a.startedMs !== undefined);
    spans.forEach((span, i) => {
      total.count++;
      total.queueMs += span.startedMs! - span.scheduledMs;
      total.runMs += span.endedMs! - span.startedMs!;
      const next = spans[i + 1];
      if (next) total.gapMs += next.scheduledMs - span.endedMs!;
    });
  }
  return total;
}
