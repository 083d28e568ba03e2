import { defaultPayloadConverter, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;
type Payloads = { payloads?: temporal.api.common.v1.IPayload[] | null } | null | undefined;

/** Decodes the first payload of a Payloads message with the default converter. */
export function decodeFirst<T>(payloads: Payloads): T | undefined {
  const payload = payloads?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<T>(payload) : undefined;
}

/** Results of every completed activity of `activityType`, in history order. */
export async function activityResults<T>(handle: WorkflowHandle, activityType: string): Promise<T[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const typeById = new Map<string, string>();
  const results: T[] = [];
  for (const event of events) {
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      typeById.set(String(event.eventId), event.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
    }
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const attrs = event.activityTaskCompletedEventAttributes;
      if (typeById.get(String(attrs?.scheduledEventId)) === activityType) results.push(decodeFirst<T>(attrs?.result) as T);
    }
  }
  return results;
}

/** The last heartbeat details of the running activity of `activityType`, as the server has them. */
export async function pendingHeartbeat<T>(handle: WorkflowHandle, activityType: string): Promise<T | undefined> {
  const { raw } = await handle.describe();
  const pending = raw.pendingActivities?.find((a) => a.activityType?.name === activityType);
  return decodeFirst<T>(pending?.heartbeatDetails);
}

/** The input of the running (scheduled, not yet closed) activity of `activityType`, read from the history. */
export async function runningActivityInput<T>(handle: WorkflowHandle, activityType: string): Promise<T | undefined> {
  const events = (await handle.fetchHistory()).events ?? [];
  const open = new Map<string, T | undefined>();
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && scheduled?.activityType?.name === activityType) {
      open.set(String(event.eventId), decodeFirst<T>(scheduled.input));
    }
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (closed?.scheduledEventId != null) open.delete(String(closed.scheduledEventId));
  }
  return [...open.values()].at(-1);
}

/** Every byte of the history, payloads decoded to text, for scanning (secrets must not appear). */
export async function historyText(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  // payload bytes arrive as Uint8Array or, in the JSON form of the history, as base64 `data` strings
  return JSON.stringify(history, (key, value: unknown) => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    if (key === 'data' && typeof value === 'string') return Buffer.from(value, 'base64').toString('utf8');
    return value;
  });
}

/** What one run cost in Temporal terms: history events, activity tasks, timers, workflow tasks and markers. */
export interface HistoryShape {
  events: number;
  /** Activity tasks scheduled (each attempt of one counts once: retries are not new tasks in history). */
  activityTasks: number;
  /** The activity types, in scheduling order. */
  activityTypes: string[];
  timers: number;
  workflowTasks: number;
  /** Markers: patches and local activities. */
  markers: number;
}

/** Counts the shape of a history's events (numeric or `EVENT_TYPE_…` event types, as fetched or as saved JSON). */
export function historyShape(
  events: ReadonlyArray<{ eventType?: unknown; activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null }>,
): HistoryShape {
  const is = (event: { eventType?: unknown }, type: keyof typeof EventType) => event.eventType === EventType[type] || event.eventType === type;
  const scheduled = events.filter((e) => is(e, 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED'));
  return {
    events: events.length,
    activityTasks: scheduled.length,
    activityTypes: scheduled.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
    timers: events.filter((e) => is(e, 'EVENT_TYPE_TIMER_STARTED')).length,
    workflowTasks: events.filter((e) => is(e, 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED')).length,
    markers: events.filter((e) => is(e, 'EVENT_TYPE_MARKER_RECORDED')).length,
  };
}
