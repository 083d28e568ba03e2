import { setTimeout as sleep } from 'node:timers/promises';
import { startTemporal, type StartTemporalOptions, type TemporalHandle } from '../../src/dev/temporal';

/**
 * Temporal started again on the address a killed one had, on its data folder (chaos tests). A dev server that exits
 * during start-up is started again, up to three times in all, a second apart, each failure written to stderr with the
 * reason from its log: the outage under test is the one the test made, not a start-up crash of the dev server after
 * it (CI once saw one exit with a Go panic there, its reason cut off).
 */
export async function restartTemporal(previous: TemporalHandle, options: Omit<StartTemporalOptions, 'port' | 'uiPort'>): Promise<TemporalHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTemporal({ ...options, port: previous.port, uiPort: previous.uiPort });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (attempt >= 3 || !message.includes('during start-up')) throw err;
      process.stderr.write(`[restartTemporal] attempt ${attempt} failed, starting again: ${message}\n`);
      await sleep(1000);
    }
  }
}
