/**
 * What a small import's run costs the workflow thread in promises (issue 41, target 1): the SDK's promise hook takes
 * a source-mapped stack trace of every promise created in workflow context, so each one the workflow code creates
 * costs CPU per run. The worker runs in debug mode (the workflow context on this thread), and a promise hook of the
 * test counts the promises whose realm is a workflow context (neither the test's nor Node's own).
 */
import { promiseHooks } from 'node:v8';
import { runInThisContext } from 'node:vm';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { importTableWorkflow } from '../../src/workflows';
import { FakeProject } from './harness/fake-project';
import { startTimeSkipping, WORKFLOW_BUNDLE_ENV } from './harness/env';

/**
 * Promises a small import on the short path creates in workflow context (the SDK's own included: its root scope,
 * the start, one local activity and two activities); 59 before the short path was trimmed.
 */
const SHORT_PATH_PROMISES = 42;

let env: TestWorkflowEnvironment;
beforeEach(async () => {
  env = await startTimeSkipping();
});
afterEach(async () => {
  await env?.teardown();
});

/** Runs `body` and counts the promises created meanwhile in a workflow context (a realm other than these two). */
async function promisesIn<T>(body: () => Promise<T>): Promise<{ result: T; promises: number }> {
  const outside = new Set<unknown>([Promise, runInThisContext('Promise')]);
  let promises = 0;
  const stop = promiseHooks.createHook({ init: (promise: Promise<unknown>) => void (outside.has(promise.constructor) || promises++) });
  try {
    return { result: await body(), promises };
  } finally {
    stop();
  }
}

it(`a small import on the short path creates at most ${SHORT_PATH_PROMISES} promises in workflow context`, async () => {
  const p = new FakeProject();
  const taskQueue = 'promise-count';
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: process.env[WORKFLOW_BUNDLE_ENV]! },
    activities: p.activities(),
    debugMode: true,
  });
  const { result, promises } = await promisesIn(() =>
    worker.runUntil(
      env.client.workflow.execute(importTableWorkflow, {
        taskQueue,
        workflowId: 'promise-count',
        args: [{ source: '/data/small.csv', bucketId: 'in.c-main', table: 't' }],
      }),
    ),
  );
  // the short path it is meant to measure: two activities, the job ended within the second, its receipt written there
  expect(result).toMatchObject({ tableId: 'in.c-main.t', importedRowsCount: 2, receipt: { status: 'written' } });
  expect(p.calls.map((c) => c.name)).toEqual(['registeredSearchAttributes', 'prepareImport', 'uploadAndStartJob']);
  expect(promises).toBeLessThanOrEqual(SHORT_PATH_PROMISES);
});
