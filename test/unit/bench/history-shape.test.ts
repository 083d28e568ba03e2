import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyShape } from '../../harness/history';
import { SAVED_HISTORIES_DIR } from '../../harness/replay';

describe('the shape of a history (what one run cost in Temporal terms)', () => {
  const saved = (name: string) =>
    (JSON.parse(readFileSync(join(SAVED_HISTORIES_DIR, `${name}.json`), 'utf8')) as { events: Array<{ eventType?: unknown }> }).events;

  it('counts events, activity tasks, timers, workflow tasks and markers of a saved sliced import (the long path)', () => {
    expect(historyShape(saved('import-sliced-load'))).toEqual({
      events: 58,
      activityTasks: 7,
      activityTypes: ['checkImportTarget', 'inspectSource', 'prepareFile', 'uploadSlices', 'loadTableAsync', 'getJob', 'writeReceipt'],
      timers: 1,
      workflowTasks: 9,
      // the run view's local activity (which search attributes are registered): no patch markers
      markers: 1,
    });
  });

  it('shows the short path of a small import, its receipt written in the short path: 2 activity tasks, no timer, 21 events', () => {
    expect(historyShape(saved('import-short-path'))).toEqual({
      events: 21,
      activityTasks: 2,
      activityTypes: ['prepareImport', 'uploadAndStartJob'],
      timers: 0,
      workflowTasks: 3,
      markers: 1,
    });
  });
});
