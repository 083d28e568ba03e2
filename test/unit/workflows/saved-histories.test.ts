/**
 * Saved histories of every workflow (recorded from real runs by test/integration/workflows/replay.test.ts) replay
 * against the current workflow code: a change that would break workflows already running fails here.
 */
import { resolve } from 'node:path';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { workerBundle } from '../../../src/replay-check';
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

  it('cover import, export, extract and backfill runs', () => {
    const names = histories.map((h) => h.workflowId);
    expect(names).toEqual(
      expect.arrayContaining([
        'import-direct-create',
        'import-importer-incremental',
        'import-sliced-load',
        'import-malformed-failed',
        'import-checked-missing-table',
        'import-failed-cleanup',
        'import-typed-create-metadata',
        'import-typed-misfit-cleanup',
        'export-sliced',
        'extract-children-batch',
        'extract-cursor-page',
        'extract-run-state',
        'extract-iterations',
        'import-run-view',
        'export-run-view',
        'extract-run-view-paused',
        'import-start-or-attach',
        'extract-start-or-attach',
        'extract-cancel-request',
        'import-short-path',
        'import-short-path-failed-cleanup',
        'import-awaited-job',
        'backfill-extract-windows',
      ]),
    );
    for (const { history } of histories) expect(history.events?.length).toBeGreaterThan(10);
  });

  it("replay against the bundle a worker runs (the plugin's workflow interceptor module included) without non-determinism", async () => {
    const { bundle, plugins } = await workerBundle();
    expect(bundle.code).toContain('transfer-log');
    expect(await replayFailures({ workflowBundle: bundle, plugins }, histories)).toEqual([]);
  });

  it("replay against a traced worker's bundle, all but the runs whose update completed beside its next command (why toggling tracing is a new deployment version)", async () => {
    // what a traced worker bundles (SapiPlugin with tracing: the SDK's OpenTelemetryPlugin's workflow module). The
    // interceptors add a trace header and a span to every command; their extra awaits can move a command behind an
    // update's completion within a workflow task, so a run started without tracing may not replay with it (and the
    // other way round): docs/operating.md#traces says to turn tracing on or off as a new deployment version, and
    // replay-check replays as the worker's tracing switch says
    const { bundle, plugins } = await workerBundle({ tracing: true });
    expect(bundle.code).toContain('OpenTelemetryInboundInterceptor');
    const failures = await replayFailures({ workflowBundle: bundle, plugins }, histories);
    // which of the runs with an update fail depends on where their update completed (beside the next command or not):
    // each failure is that one, only runs with an update fail, and at least one does (the check catches a toggle)
    const withUpdate = new Set(
      histories.filter((h) => (h.history.events ?? []).some((e) => e.workflowExecutionUpdateCompletedEventAttributes)).map((h) => h.workflowId),
    );
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(withUpdate.has(failure.split(':')[0]!)).toBe(true);
      expect(failure).toMatch(
        /Nondeterminism error: UpsertWorkflowSearchAttributesMachine does not handle HistoryEvent\(id: \d+, WorkflowExecutionUpdateCompleted\)/,
      );
    }
  }, 300_000);

  it('fail to replay against workflow code that issues different commands (the check can fail)', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath: resolve(__dirname, 'divergent-workflows.ts'), logger: quiet });
    const failures = await replayFailures(
      { workflowBundle: bundle },
      histories.filter((h) => h.workflowId === 'import-direct-create'),
    );
    expect(failures).toEqual([expect.stringMatching(/^import-direct-create: DeterminismViolationError/)]);
  });
});
