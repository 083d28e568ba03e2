import { BILLED_EVENT, billedActions, heartbeatsSent, heartbeatThrottleMs } from '../../../bench/lib/actions';

const e = (eventId: number, eventType: number, extra: Record<string, unknown> = {}) => ({ eventId, eventType, ...extra });

describe('billed actions counted from a history', () => {
  it('counts the start, every activity attempt, timers and upserts; workflow tasks and completions are free', () => {
    const events = [
      e(1, BILLED_EVENT.WORKFLOW_EXECUTION_STARTED),
      e(2, 5), // workflow task scheduled
      e(3, 6),
      e(4, BILLED_EVENT.WORKFLOW_TASK_COMPLETED),
      e(5, BILLED_EVENT.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES),
      e(6, BILLED_EVENT.ACTIVITY_TASK_SCHEDULED),
      e(7, BILLED_EVENT.ACTIVITY_TASK_STARTED, { activityTaskStartedEventAttributes: { scheduledEventId: 6, attempt: 3 } }),
      e(8, 12), // activity completed
      e(9, BILLED_EVENT.TIMER_STARTED),
      e(10, 18), // timer fired
      e(11, BILLED_EVENT.WORKFLOW_EXECUTION_SIGNALED),
      e(12, 2), // workflow completed
    ];
    expect(billedActions(events)).toEqual({
      total: 1 + 1 + 3 + 1 + 1,
      workflowStarts: 1,
      activityAttempts: 3,
      timers: 1,
      searchAttributeUpserts: 1,
      localActivityTasks: 0,
      messages: 1,
    });
  });

  it('counts the local activities of one workflow task once, and patch markers not at all', () => {
    const marker = (id: number, markerName: string) => e(id, BILLED_EVENT.MARKER_RECORDED, { markerRecordedEventAttributes: { markerName } });
    const events = [
      e(4, BILLED_EVENT.WORKFLOW_TASK_COMPLETED),
      marker(5, 'core_patch'),
      marker(6, 'core_local_activity'),
      marker(7, 'core_local_activity'),
      e(10, BILLED_EVENT.WORKFLOW_TASK_COMPLETED),
      marker(11, 'core_local_activity'),
    ];
    expect(billedActions(events).localActivityTasks).toBe(2);
    expect(billedActions(events).total).toBe(2);
  });

  it('counts a continue-as-new as the start of the next run', () => {
    expect(billedActions([e(30, BILLED_EVENT.WORKFLOW_EXECUTION_CONTINUED_AS_NEW)]).workflowStarts).toBe(1);
  });
});

describe('heartbeats sent to the server', () => {
  it("throttles to 80 % of the heartbeat timeout, at most the worker's 3 s; a keep-alive-only activity sends one per keep-alive", () => {
    expect(heartbeatThrottleMs(2_000)).toBe(1_600);
    expect(heartbeatThrottleMs(10 * 60_000)).toBe(3_000);
    expect(heartbeatsSent(0, 10 * 60_000)).toBe(0);
    // awaitJob's 10-minute timeout: a keep-alive every 8 minutes, 7 in an hour
    expect(heartbeatsSent(60 * 60_000, 10 * 60_000)).toBe(7);
    // a 10 s timeout: the keep-alive every 4 s
    expect(heartbeatsSent(60_000, 10_000)).toBe(15);
  });
});
