import { activityBreakdown, activityDurationMs, EVENT, historyTimings, timestampMs } from '../../../bench/lib/history';

const at = (ms: number) => ({ seconds: { toNumber: () => Math.floor(ms / 1000) }, nanos: (ms % 1000) * 1e6 });

describe('timings read from a workflow history', () => {
  const events = [
    { eventId: 1, eventType: EVENT.WORKFLOW_EXECUTION_STARTED, eventTime: at(1_000) },
    {
      eventId: 5,
      eventType: EVENT.ACTIVITY_TASK_SCHEDULED,
      eventTime: at(1_100),
      activityTaskScheduledEventAttributes: { activityType: { name: 'prepareFile' } },
    },
    { eventId: 6, eventType: EVENT.ACTIVITY_TASK_STARTED, eventTime: at(1_120), activityTaskStartedEventAttributes: { scheduledEventId: 5, attempt: 1 } },
    { eventId: 7, eventType: EVENT.ACTIVITY_TASK_COMPLETED, eventTime: at(1_200), activityTaskCompletedEventAttributes: { scheduledEventId: 5 } },
    {
      eventId: 11,
      eventType: EVENT.ACTIVITY_TASK_SCHEDULED,
      eventTime: at(1_300),
      activityTaskScheduledEventAttributes: { activityType: { name: 'uploadFile' } },
    },
    { eventId: 12, eventType: EVENT.ACTIVITY_TASK_STARTED, eventTime: at(1_350), activityTaskStartedEventAttributes: { scheduledEventId: 11, attempt: 2 } },
    {
      eventId: 13,
      eventType: EVENT.ACTIVITY_TASK_COMPLETED,
      eventTime: at(9_350),
      activityTaskCompletedEventAttributes: { scheduledEventId: 11, result: 'r' },
    },
    { eventId: 20, eventType: EVENT.WORKFLOW_EXECUTION_COMPLETED, eventTime: at(12_000) },
  ];

  it('pairs scheduled, started and completed events of each activity by scheduled event id', () => {
    const timings = historyTimings(events);
    expect(timings.events).toBe(8);
    expect(timings.startedMs).toBe(1_000);
    expect(timings.closedMs).toBe(12_000);
    expect(timings.activities).toEqual([
      { type: 'prepareFile', scheduledEventId: '5', scheduledMs: 1_100, startedMs: 1_120, attempt: 1, endedMs: 1_200, outcome: 'completed', result: undefined },
      { type: 'uploadFile', scheduledEventId: '11', scheduledMs: 1_300, startedMs: 1_350, attempt: 2, endedMs: 9_350, outcome: 'completed', result: 'r' },
    ]);
  });

  it('closes a terminated run at its termination, not at a timer (event types 17 and 18 are timers)', () => {
    const terminated = [
      { eventId: 1, eventType: EVENT.WORKFLOW_EXECUTION_STARTED, eventTime: at(1_000) },
      { eventId: 5, eventType: EVENT.TIMER_STARTED, eventTime: at(2_000) },
      { eventId: 6, eventType: EVENT.TIMER_FIRED, eventTime: at(3_000) },
      { eventId: 7, eventType: EVENT.WORKFLOW_EXECUTION_TERMINATED, eventTime: at(4_000) },
      { eventId: 8, eventType: EVENT.TIMER_STARTED, eventTime: at(5_000) }, // cannot happen: proves timers are not closes
    ];
    expect(historyTimings(terminated).closedMs).toBe(4_000);
  });

  it('measures one activity from its start to its completion', () => {
    expect(activityDurationMs(historyTimings(events), 'uploadFile')).toBe(8_000);
    expect(() => activityDurationMs(historyTimings(events), 'downloadFile')).toThrow('expected one completed downloadFile activity in the history, found 0');
  });

  it('reads protobuf timestamps whose seconds are Longs, numbers or strings', () => {
    expect(timestampMs({ seconds: '12', nanos: 500_000_000 })).toBe(12_500);
    expect(timestampMs({ seconds: 3 })).toBe(3_000);
    expect(timestampMs(null)).toBeUndefined();
  });
});

describe('where the time of repeated activities went', () => {
  const span = (scheduled: number, started: number, ended: number) => ({
    type: 'fetchPages',
    scheduledEventId: String(scheduled),
    scheduledMs: scheduled,
    startedMs: started,
    endedMs: ended,
    outcome: 'completed' as const,
  });

  it('sums queue, run and between-activity gaps per run, not across runs', () => {
    const runA = { events: 10, activities: [span(0, 5, 105), span(120, 122, 222)] };
    const runB = { events: 10, activities: [span(1000, 1010, 1110), { ...span(1200, 1200, 1300), type: 'buildTableCsv' }] };
    expect(activityBreakdown([runA, runB], 'fetchPages')).toEqual({ count: 3, queueMs: 5 + 2 + 10, runMs: 300, gapMs: 15 });
  });
});
