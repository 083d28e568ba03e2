import type { MetricMeter, MetricTags } from '@temporalio/common';
import { ScheduleSkipCounter, type ScheduleSkips } from '../../../src/observability/schedule-metrics';

/** A meter that keeps what counters were given: name, value, tags. */
function recordingMeter() {
  const recorded: Array<{ name: string; value: number; tags: MetricTags }> = [];
  const meter = {
    createCounter: (name: string) => ({ name, add: (value: number, tags: MetricTags = {}) => recorded.push({ name, value, tags }) }),
  } as unknown as MetricMeter;
  const total = (tags: MetricTags) => recorded.filter((r) => Object.entries(tags).every(([k, v]) => r.tags[k] === v)).reduce((s, r) => s + r.value, 0);
  return { meter, recorded, total };
}

const schedule = (scheduleId: string, overlap: number, dropped = 0, missed = 0): ScheduleSkips => ({
  scheduleId,
  workflowType: 'importTableWorkflow',
  taskQueue: 'sapi-temporal',
  skipped: { overlap_skip: overlap, buffer_dropped: dropped, missed_catchup_window: missed },
});

describe('the schedule skip counter', () => {
  it("adds a schedule's whole count on the first reading and what it grew by on later ones, so it equals the description's count", () => {
    const { meter, total } = recordingMeter();
    const counter = new ScheduleSkipCounter(meter, 'default');
    counter.record([schedule('nightly', 3, 1, 2)]);
    counter.record([schedule('nightly', 3, 1, 2)]);
    counter.record([schedule('nightly', 7, 1, 2)]);
    expect(total({ schedule_id: 'nightly', reason: 'overlap_skip' })).toBe(7);
    expect(total({ schedule_id: 'nightly', reason: 'buffer_dropped' })).toBe(1);
    expect(total({ schedule_id: 'nightly', reason: 'missed_catchup_window' })).toBe(2);
  });

  it('labels each series in snake_case with the schedule, its workflow type, namespace, task queue and reason, and starts every series at 0', () => {
    const { meter, recorded } = recordingMeter();
    new ScheduleSkipCounter(meter, 'prod').record([schedule('quiet', 0)]);
    expect(recorded.map((r) => r.tags.reason)).toEqual(['overlap_skip', 'buffer_dropped', 'missed_catchup_window']);
    expect(recorded[0]).toEqual({
      name: 'sapi_schedule_runs_skipped_total',
      value: 0,
      tags: { namespace: 'prod', task_queue: 'sapi-temporal', schedule_id: 'quiet', workflow_type: 'importTableWorkflow', reason: 'overlap_skip' },
    });
  });

  it('never decreases: a schedule created again with a lower count is the new base', () => {
    const { meter, total } = recordingMeter();
    const counter = new ScheduleSkipCounter(meter, 'default');
    counter.record([schedule('again', 5)]);
    counter.record([schedule('again', 1)]);
    counter.record([schedule('again', 4)]);
    expect(total({ schedule_id: 'again', reason: 'overlap_skip' })).toBe(8);
  });
});
