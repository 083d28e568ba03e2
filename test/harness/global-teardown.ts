import { rmSync } from 'node:fs';
import { scanHistoriesForSecrets } from './secret-ledger';

/** Stops the shared dev stack; keeps its data folder when SAPI_TEST_KEEP_DATA=1 (logs for a failed run). */
export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__SAPI_TEST_STACK__;
  if (!stack) return;
  globalThis.__SAPI_TEST_STACK__ = undefined;
  // every history of the run, read before the server goes: no secret a test handed out may be in one
  const scanning = Date.now();
  const scan = await scanHistoriesForSecrets(stack.temporal.address, stack.temporal.namespace, stack.dataDir).catch((err: unknown) => err as Error);
  const stopping = Date.now();
  await stack.stop();
  process.stderr.write(`[test stack] stopped in ${Date.now() - stopping} ms\n`);
  if (process.env.SAPI_TEST_KEEP_DATA !== '1') rmSync(stack.dataDir, { recursive: true, force: true });
  if (scan instanceof Error) throw new Error(`[secrets scan] could not read the run's histories: ${scan.message}`);
  process.stderr.write(`[secrets scan] ${scan.histories} workflow histories read in ${stopping - scanning} ms: ${scan.findings.length} secrets found\n`);
  if (scan.findings.length > 0) {
    const lines = scan.findings.map((f) => `  ${f.what} in the history of ${f.workflowId} (run ${f.runId})`);
    throw new Error(`[secrets scan] secrets in workflow histories:\n${lines.join('\n')}`);
  }
}
