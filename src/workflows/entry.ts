// The plugin's workflow bundle entry (`workflowsPath` of ./plugin and of replayCheck): the four workflows of ./index,
// the import's loaded with the entry and the others only when a run of theirs starts.
//
// Why: the SDK gives each run its own module cache, so every run evaluates the entry and every module it imports
// again. Through ./index, a small import's run evaluated the 48 modules of all four workflows (the extractor's
// among them); through this entry it evaluates the import's 14. The SDK only looks the run's workflow type up in this
// module (`mod[workflowType]`), so the others are plain functions that load their module on their first call and hand
// it their input: same name, same arguments, same promise (no `async`: it would add a promise, and the SDK's promise
// hook takes a stack trace of each), so the workflows' commands, and their histories, are the same as through
// ./index. A worker of yours that bundles ./index (`export * from 'sapi-temporal/workflows'`) runs the same code.
/* eslint-disable @typescript-eslint/no-require-imports -- a require() in a function is how webpack loads a module on first use */
import type * as Backfill from './backfill';
import type * as Export from './export-table';
import type * as Extract from './extract';

export { importTableWorkflow } from './import-table';

/** `exportTableWorkflow` of ./export-table, its module loaded by the run that calls it. */
export function exportTableWorkflow(...args: Parameters<typeof Export.exportTableWorkflow>): ReturnType<typeof Export.exportTableWorkflow> {
  return (require('./export-table') as typeof Export).exportTableWorkflow(...args);
}

/** `extractWorkflow` of ./extract, its module loaded by the run that calls it. */
export function extractWorkflow(...args: Parameters<typeof Extract.extractWorkflow>): ReturnType<typeof Extract.extractWorkflow> {
  return (require('./extract') as typeof Extract).extractWorkflow(...args);
}

/** `backfillWorkflow` of ./backfill, its module loaded by the run that calls it. */
export function backfillWorkflow(...args: Parameters<typeof Backfill.backfillWorkflow>): ReturnType<typeof Backfill.backfillWorkflow> {
  return (require('./backfill') as typeof Backfill).backfillWorkflow(...args);
}
