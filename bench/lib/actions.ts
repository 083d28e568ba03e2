/**
 * Temporal Cloud's billed actions, counted from a workflow history (pure over the events, unit-tested with plain
 * objects). What counts, after https://docs.temporal.io/cloud/actions:
 * - the workflow started (and a continue-as-new, which starts the next run), a child workflow started, a signal, an
 *   accepted update: 1 each;
 * - an activity started **or retried**: 1 per attempt (the scheduled event, plus `attempt − 1` for the retries its
 *   started event reports);
 * - a timer started: 1; a search-attribute upsert: 1;
 * - local activities: 1 per workflow task that recorded any (their markers); other markers (patches) are free;
 * - a heartbeat **that reaches the server**: 1 each. They are not in the history: {@link heartbeatsSent} counts
 *   them from what our activities do and the SDK's throttling: an activity heartbeats through its keep-alive
 *   (`keepAliveIntervalMs` of its heartbeat timeout; `awaitJob` only notes a poll's status for it) and, for resume
 *   points, on progress; the worker sends at most one per `min(0.8 × heartbeatTimeout, 3 s)`
 *   (`WORKER_HEARTBEAT_THROTTLE`).
 * Workflow tasks, activity completions and timer firings are events, not actions.
 */
import { msToNumber } from '@temporalio/common/lib/time';
import { keepAliveIntervalMs, WORKER_HEARTBEAT_THROTTLE } from '../../src/activities/context';
import type { HistoryEventLike } from './history';

/** Our worker's cap on the interval between heartbeats sent to the server (`maxHeartbeatThrottleInterval`). */
export const MAX_HEARTBEAT_THROTTLE_MS = msToNumber(WORKER_HEARTBEAT_THROTTLE);

/** Event type numbers of `temporal.api.enums.v1.EventType` that are (or may be) billed. */
export const BILLED_EVENT = {
  WORKFLOW_EXECUTION_STARTED: 1,
  WORKFLOW_TASK_COMPLETED: 7,
  ACTIVITY_TASK_SCHEDULED: 10,
  ACTIVITY_TASK_STARTED: 11,
  TIMER_STARTED: 17,
  MARKER_RECORDED: 25,
  WORKFLOW_EXECUTION_SIGNALED: 26,
  WORKFLOW_EXECUTION_CONTINUED_AS_NEW: 28,
  START_CHILD_WORKFLOW_EXECUTION_INITIATED: 29,
  UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: 40,
  WORKFLOW_EXECUTION_UPDATE_ACCEPTED: 41,
} as const;

export interface ActionEvent extends HistoryEventLike {
  markerRecordedEventAttributes?: { markerName?: string | null } | null;
}

/** Billed actions of the events, by kind (heartbeats excluded: not in a history). */
export interface ActionCount {
  total: number;
  workflowStarts: number;
  activityAttempts: number;
  timers: number;
  searchAttributeUpserts: number;
  localActivityTasks: number;
  messages: number;
}

/** The local-activity marker the TypeScript SDK (core) records. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** Counts the billed actions among `events` (a whole history or a window of one). */
export function billedActions(events: readonly ActionEvent[]): ActionCount {
  const count: ActionCount = { total: 0, workflowStarts: 0, activityAttempts: 0, timers: 0, searchAttributeUpserts: 0, localActivityTasks: 0, messages: 0 };
  let markersInTask = false;
  for (const event of events) {
    switch (Number(event.eventType)) {
      case BILLED_EVENT.WORKFLOW_EXECUTION_STARTED:
      case BILLED_EVENT.WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
      case BILLED_EVENT.START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        count.workflowStarts++;
        break;
      case BILLED_EVENT.ACTIVITY_TASK_SCHEDULED:
        count.activityAttempts++;
        break;
      case BILLED_EVENT.ACTIVITY_TASK_STARTED:
        count.activityAttempts += Math.max(0, (event.activityTaskStartedEventAttributes?.attempt ?? 1) - 1);
        break;
      case BILLED_EVENT.TIMER_STARTED:
        count.timers++;
        break;
      case BILLED_EVENT.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        count.searchAttributeUpserts++;
        break;
      case BILLED_EVENT.WORKFLOW_EXECUTION_SIGNALED:
      case BILLED_EVENT.WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        count.messages++;
        break;
      case BILLED_EVENT.WORKFLOW_TASK_COMPLETED:
        markersInTask = false;
        break;
      case BILLED_EVENT.MARKER_RECORDED:
        if (event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER && !markersInTask) {
          markersInTask = true;
          count.localActivityTasks++;
        }
        break;
    }
  }
  count.total = count.workflowStarts + count.activityAttempts + count.timers + count.searchAttributeUpserts + count.localActivityTasks + count.messages;
  return count;
}

/**
 * Heartbeats an activity attempt that heartbeats only through its keep-alive (as `awaitJob` does) sends to the server
 * over `runMs`: one per keep-alive interval, or per throttle interval if that were longer.
 */
export function heartbeatsSent(runMs: number, heartbeatTimeoutMs: number): number {
  if (!(runMs >= 0)) return 0;
  return Math.floor(runMs / Math.max(keepAliveIntervalMs(heartbeatTimeoutMs), heartbeatThrottleMs(heartbeatTimeoutMs)));
}

/** The SDK's interval between heartbeats sent to the server for an activity with this heartbeat timeout. */
export function heartbeatThrottleMs(heartbeatTimeoutMs: number): number {
  return Math.min(0.8 * heartbeatTimeoutMs, MAX_HEARTBEAT_THROTTLE_MS);
}
