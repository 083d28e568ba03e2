/**
 * The plugin's workflow bundle entry (src/workflows/entry.ts, the plugin's `workflowsPath`): the SDK evaluates the
 * entry and what it imports anew in each run's module cache, so a small import's run must not evaluate the modules of
 * the other workflows (the extractor's among them); those load when a run of theirs calls its workflow.
 */
import { runInNewContext } from 'node:vm';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '../../../src/plugin';
import { leanBundleOptions } from '../../../src/workflow-bundle';
import * as entry from '../../../src/workflows/entry';
import * as workflows from '../../../src/workflows';

jest.setTimeout(120_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The other workflows' modules: none is evaluated by an import's run. */
const OTHER_WORKFLOWS = /src\/(workflows\/(extract|extract-load|export-table|backfill)\.ts|extractor\/)/;

const functionNames = (module: object) =>
  Object.entries(module)
    .filter(([, value]) => typeof value === 'function')
    .map(([name]) => name)
    .sort();

describe("the plugin's workflow bundle entry", () => {
  it('exports the workflows of sapi-temporal/workflows, each under its name', () => {
    expect(functionNames(entry)).toEqual(functionNames(workflows));
    for (const name of functionNames(entry)) expect((entry as Record<string, { name: string }>)[name]!.name).toBe(name);
  });

  it("evaluates in an import's run the import workflow's modules only, not the extraction's, the export's or the backfill's", async () => {
    const { code } = await bundleWorkflowCode(leanBundleOptions({ workflowsPath, logger: quiet }));
    // as the SDK's VM runs a bundle: the run's module cache on the context
    const cache: Record<string, unknown> = {};
    const context: { __TEMPORAL__?: { importWorkflows(): Record<string, unknown> }; __webpack_module_cache__: object } = { __webpack_module_cache__: cache };
    runInNewContext(code, context);
    const module = context.__TEMPORAL__!.importWorkflows();
    expect(typeof module.importTableWorkflow).toBe('function');
    // the SDK looks the run's type up in the module: the others are there, their modules not loaded
    for (const name of ['exportTableWorkflow', 'extractWorkflow', 'backfillWorkflow']) expect(typeof module[name]).toBe('function');
    const evaluated = Object.keys(cache);
    expect(evaluated).toEqual(expect.arrayContaining([expect.stringMatching(/src\/workflows\/import-table\.ts$/)]));
    expect(evaluated.filter((id) => OTHER_WORKFLOWS.test(id))).toEqual([]);
  });
});
