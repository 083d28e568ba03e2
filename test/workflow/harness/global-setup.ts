import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { transferLogModule, workflowsPath } from '../../../src/plugin';
import { findTestServer } from '../../../src/dev/tools';
import { leanBundleOptions } from '../../../src/workflow-bundle';
import { WORKFLOW_BUNDLE_ENV } from './env';

/**
 * The workflow tier's one bundle per jest run: the plugin's workflows with the workflow interceptor module the plugin
 * adds (`transferLogModule`), as a worker with `SapiPlugin` bundles them. Also fails early, with the install hint,
 * when the time-skipping test server is not installed (nothing is downloaded at test time).
 */
export default async function globalSetup(): Promise<void> {
  if (process.env[WORKFLOW_BUNDLE_ENV]) return;
  findTestServer();
  const bundle = await bundleWorkflowCode(leanBundleOptions({ workflowsPath, workflowInterceptorModules: [transferLogModule], logger: quietLogger }));
  const dir = mkdtempSync(join(process.env.SAPI_TEST_DATA_DIR ?? tmpdir(), 'sapi-temporal-workflow-tier-'));
  const path = join(dir, 'workflow-bundle.js');
  writeFileSync(path, bundle.code);
  process.env[WORKFLOW_BUNDLE_ENV] = path;
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
  error: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
};
