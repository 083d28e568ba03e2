import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import { cliConnectionOptions } from '../../../src/cli/temporal-link';

/** A local port nothing listens on: every call fails UNAVAILABLE at once and the client retries it from a timer. */
async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise((ok) => server.close(ok));
  return `127.0.0.1:${port}`;
}

describe("the CLI's Temporal connection", () => {
  it('ends a call whose retry comes after the connection closed with an error, instead of crashing the process', async () => {
    const connection = await Connection.lazy({ address: await deadAddress(), ...cliConnectionOptions() });
    const crashes: unknown[] = [];
    const onCrash = (err: unknown) => crashes.push(err);
    process.on('uncaughtException', onCrash);
    try {
      // the first attempt fails within milliseconds; its retry waits ~100 ms on a timer
      const call = connection.workflowService.getSystemInfo({}).then(
        () => 'answered',
        (err: Error) => err.message,
      );
      await new Promise((r) => setTimeout(r, 30));
      await connection.close();
      // the message is the retry's: it re-dialled on the closed channel, the call's last step (CANCELLED is not
      // retried), so nothing of the call is left to throw once its callback (and the tick after it) ran
      expect(await call).toMatch(/Channel has been shut down/);
      await new Promise((r) => setImmediate(r));
      expect(crashes).toEqual([]);
    } finally {
      process.off('uncaughtException', onCrash);
    }
  });

  it('ends a call made after the connection closed with an error, instead of crashing the process', async () => {
    const connection = await Connection.lazy({ address: await deadAddress(), ...cliConnectionOptions() });
    const crashes: unknown[] = [];
    const onCrash = (err: unknown) => crashes.push(err);
    process.on('uncaughtException', onCrash);
    try {
      await connection.close();
      const outcome = await connection.workflowService.getSystemInfo({}).then(
        () => 'answered',
        (err: Error) => err.message,
      );
      // ended at once as CANCELLED, which is not retried: nothing of the call is left to throw after the next tick
      expect(outcome).toMatch(/Channel has been shut down/);
      await new Promise((r) => setImmediate(r));
      expect(crashes).toEqual([]);
    } finally {
      process.off('uncaughtException', onCrash);
    }
  });
});
