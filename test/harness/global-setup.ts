import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevStack, type DevStack } from '../../src/dev/stack';
import { leanBundleOptions } from '../../src/workflow-bundle';
import { noteSecret } from './secret-ledger';
import { STACK_STATE_ENV, type TestStackState } from './stack-state';

declare global {
  var __SAPI_TEST_STACK__: DevStack | undefined;
}

/** One dev stack and one workflow bundle per jest run, shared by every integration and chaos test file. */
export default async function globalSetup(): Promise<void> {
  if (globalThis.__SAPI_TEST_STACK__) return; // integration and chaos projects in one run share it
  const started = Date.now();
  const dataDir = mkdtempSync(join(process.env.SAPI_TEST_DATA_DIR ?? tmpdir(), 'sapi-temporal-test-'));
  const [stack, bundle] = await Promise.all([
    // the tests' files live in temporary folders (and fixtures in the checkout): the roots of the tests' workers
    startDevStack({ dataDir, headless: true, localRoots: [process.env.SAPI_TEST_DATA_DIR ?? tmpdir(), tmpdir(), process.cwd()] }),
    bundleWorkflowCode(leanBundleOptions({ workflowsPath: resolve(__dirname, 'workflows.ts'), logger: quietLogger })),
  ]);
  globalThis.__SAPI_TEST_STACK__ = stack;
  mkdirSync(dataDir, { recursive: true });
  const workflowBundlePath = join(dataDir, 'workflow-bundle.js');
  writeFileSync(workflowBundlePath, bundle.code);
  const state: TestStackState = {
    dataDir,
    env: stack.env,
    temporalAddress: stack.temporal.address,
    namespace: stack.temporal.namespace,
    minio: {
      endpoint: stack.minio.endpoint,
      region: stack.minio.region,
      accessKeyId: stack.minio.accessKeyId,
      secretAccessKey: stack.minio.secretAccessKey,
    },
    workflowBundlePath,
  };
  noteSecret("the object store's secret key", stack.minio.secretAccessKey, dataDir);
  if (stack.env.SAPI_TOKEN) noteSecret("the dev stack's Storage token", stack.env.SAPI_TOKEN, dataDir);
  const stateFile = join(dataDir, 'stack.json');
  writeFileSync(stateFile, JSON.stringify(state, null, 2));
  process.env[STACK_STATE_ENV] = stateFile;
  process.stderr.write(
    `\n[test stack] up in ${Date.now() - started} ms under ${dataDir} (temporal ${stack.temporal.address}, minio ${stack.minio.endpoint})\n`,
  );
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
  error: (message: string) => process.stderr.write(`[bundler] ${message}\n`),
};
