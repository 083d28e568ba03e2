import { readFileSync } from 'node:fs';

/** What the jest global setup shares with the test files (through a JSON file named by an env variable). */
export interface TestStackState {
  dataDir: string;
  env: Record<string, string>;
  temporalAddress: string;
  namespace: string;
  minio: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
  /** Path of the workflow bundle built once per run (`test/harness/workflows.ts`). */
  workflowBundlePath: string;
}

export const STACK_STATE_ENV = 'SAPI_TEST_STACK_FILE';

/** The shared dev stack of this test run; fails clearly when a test file runs outside the integration tiers. */
export function testStack(): TestStackState {
  const file = process.env[STACK_STATE_ENV];
  if (!file) throw new Error(`${STACK_STATE_ENV} is not set: run integration tests through jest's integration/chaos projects`);
  return JSON.parse(readFileSync(file, 'utf8')) as TestStackState;
}

/** A task queue no other test uses. */
export function uniqueTaskQueue(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
