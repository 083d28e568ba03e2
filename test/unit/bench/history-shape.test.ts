import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyShape } from '../../harness/history';
import { SAVED_HISTORIES_DIR } from '../../harness/replay';

describe('the shape of a history (what one run cost in Temporal terms)', () => {
  const saved = (name: string) => (JSON.parse(readFileSync(join(SAVED_HISTORIES_DIR, `${name}.json`), 'utf8')) as { events: Array<{ eventType?: unknown }> }).events;

  it('counts events, activity tasks, timers, workflow tasks and markers of a saved small import before the short path', () => {
    expect(historyShape(saved('import-run-view'))).toEqual({
      events: 67,
      activityTasks: 7,
      activityTypes: ['checkImportTarget', 'inspectSource', 'ensureBucket', 'prepareFile', 'uploadFile', 'createTableAsync', 'getJob'],
      timers: 1,
      workflowTasks: 9,
      markers: 4,
    });
  });

  it('shows the short path of a small import: 2 activity tasks, no timer, 23 events', () => {
    expect(historyShape(saved('import-short-path'))).toEqual({ events: 23, activityTasks: 2, activityTypes: ['prepareImport', 'uploadAndStartJob'], timers: 0, workflowTasks: 3, markers: 2 });
  });
});
