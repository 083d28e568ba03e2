/**
 * Saved histories of every workflow (recorded from real runs by test/integration/workflows/replay.test.ts) replay
 * against the current workflow code: a change that would break workflows already running fails here.
 */
import { resolve } from 'node:path';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime, type WorkflowBundle } from '@temporalio/worker';
import { loadSavedHistories, replayFailures } from '../../harness/replay';

jest.setTimeout(180_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('saved workflow histories', () => {
  const histories = loadSavedHistories();
  beforeAll(() => {
    try {
      // the divergent replay below is expected to fail: keep core's warning about it out of the output
      Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
    } catch {
      /* installed by another test of this process */
    }
  });

  it('cover import, export and extract runs', () => {
    const names = histories.map((h) => h.workflowId);
    expect(names).toEqual(expect.arrayContaining(['import-direct-create', 'import-importer-incremental', 'import-sliced-load', 'import-malformed-failed', 'import-checked-missing-table', 'import-failed-cleanup', 'import-typed-create-metadata', 'import-typed-misfit-cleanup', 'export-sliced', 'extract-children-batch', 'extract-cursor-page', 'extract-run-state', 'extract-iterations', 'import-run-view', 'export-run-view', 'extract-run-view-paused', 'import-start-or-attach', 'extract-start-or-attach', 'extract-cancel-request', 'import-short-path', 'import-short-path-failed-cleanup']));
    for (const { history } of histories) expect(history.events?.length).toBeGreaterThan(10);
  });

  it('replay against the current workflow code without non-determinism', async () => {
    const bundle: WorkflowBundle = await bundleWorkflowCode({ workflowsPath: resolve(__dirname, '../../../src/workflows'), logger: quiet });
    expect(await replayFailures({ workflowBundle: bundle }, histories)).toEqual([]);
  });

  it('fail to replay against workflow code that issues different commands (the check can fail)', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath: resolve(__dirname, 'divergent-workflows.ts'), logger: quiet });
    const failures = await replayFailures({ workflowBundle: bundle }, histories.filter((h) => h.workflowId === 'import-direct-create'));
    expect(failures).toEqual([expect.stringMatching(/^import-direct-create: DeterminismViolationError/)]);
  });
});
