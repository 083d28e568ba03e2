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
