import { rmSync } from 'node:fs';

/** Stops the shared dev stack; keeps its data folder when SAPI_TEST_KEEP_DATA=1 (logs for a failed run). */
export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__SAPI_TEST_STACK__;
  if (!stack) return;
  globalThis.__SAPI_TEST_STACK__ = undefined;
  const stopping = Date.now();
  await stack.stop();
  process.stderr.write(`[test stack] stopped in ${Date.now() - stopping} ms\n`);
  if (process.env.SAPI_TEST_KEEP_DATA !== '1') rmSync(stack.dataDir, { recursive: true, force: true });
}
