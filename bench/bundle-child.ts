// Bundles the plugin's workflows in a throwaway process (webpack's heap stays out of the bench process, where the
// remaining in-process steps run) and writes the bundle to the path given as the first argument; a second argument
// names another workflows folder (the idle scenario's empty worker).
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { leanBundleOptions } from '../src/workflow-bundle';

const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => process.stderr.write(`[bundler] ${m}\n`),
  error: (m: string) => process.stderr.write(`[bundler] ${m}\n`),
};

void (async () => {
  const out = process.argv[2];
  if (!out) throw new Error('usage: bundle-child <output file> [workflows folder]');
  // the plugin's workflows as its worker bundles them (its entry, the plugin's `workflowsPath`; lean,
  // src/workflow-bundle.ts); another folder (the empty worker's, the SDK's floor) with the SDK's defaults
  const workflowsPath = process.argv[3] ? resolve(process.argv[3]) : resolve(__dirname, '..', 'src', 'workflows', 'entry.ts');
  const bundle = await bundleWorkflowCode(process.argv[3] ? { workflowsPath, logger: quiet } : leanBundleOptions({ workflowsPath, logger: quiet }));
  writeFileSync(out, bundle.code);
})().catch((err: unknown) => {
  process.stderr.write(`bundle-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
