// The workflow tier's Temporal: the SDK's time-skipping test server (the binary `scripts/install-tools.sh` installs,
// found as every other tool is: src/dev/tools.ts), one per test file, and a worker per test on its own task queue
// running the real workflows (the bundle of global-setup.ts) with the fake activities of a FakeProject.
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { findTemporal, findTestServer } from '../../../src/dev/tools';
import { outageInterceptors } from '../../../src/observability/activity-interceptor';
import type { FakeProject } from './fake-project';

/** Where global-setup.ts put the workflow bundle. */
export const WORKFLOW_BUNDLE_ENV = 'SAPI_WORKFLOW_TIER_BUNDLE';

/** The time-skipping test server (no download: the installed binary or an error saying how to install it). */
export function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: findTestServer().path } } });
}

/**
 * The Temporal CLI's dev server (no time skipping) with a low `limit.historyCount.suggestContinueAsNew`: the only
 * way to have a real server suggest continue-as-new to a run (the time-skipping test server never does).
 */
export function startDevServer(suggestContinueAsNewAfterEvents: number): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: findTemporal().path },
      extraArgs: ['--dynamic-config-value', `limit.historyCount.suggestContinueAsNew=${suggestContinueAsNewAfterEvents}`],
    },
  });
}

/**
 * Runs `body` while a worker with `project`'s activities polls a fresh task queue, with the plugin's outage
 * interceptors (a failed attempt tells the run where it waits: `waitingFor` in its progress).
 */
export async function withWorker<T>(env: TestWorkflowEnvironment, project: FakeProject, body: (taskQueue: string) => Promise<T>): Promise<T> {
  const codePath = process.env[WORKFLOW_BUNDLE_ENV];
  if (!codePath)
    throw new Error(`${WORKFLOW_BUNDLE_ENV} is not set: run the workflow tier through jest's "workflow" project (its global setup bundles the workflows)`);
  const taskQueue = `wf-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath },
    activities: project.activities(),
    interceptors: { activity: [outageInterceptors()] },
  });
  return worker.runUntil(body(taskQueue));
}
