import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { startAzurite } from '../../../src/dev/azurite';
import { startMinio } from '../../../src/dev/minio';
import { freePort, isPortClash, retryOnPortClash } from '../../../src/dev/ports';
import { startTemporal } from '../../../src/dev/temporal';
import { testStack } from '../../harness/stack-state';

/** Holds a port the way a sibling process that won the race for it would. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, server };
}

const starters = {
  temporal: (dataDir: string, port: number) => startTemporal({ dataDir, port, headless: true }),
  minio: (dataDir: string, port: number) => startMinio({ dataDir, port }),
  azurite: (dataDir: string, port: number) => startAzurite({ dataDir, port }),
};

describe.each(Object.entries(starters))('%s on a port another process took first', (name, start) => {
  let dataDir: string;
  beforeAll(() => (dataDir = mkdtempSync(join(testStack().dataDir, `port-clash-${name}-`))));

  it('fails with a message the retry recognises as a port clash, and starts once given a free port', async () => {
    const taken = await occupy();
    const attempts: number[] = [];
    try {
      const failure = await start(join(dataDir, 'clash'), taken.port).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(isPortClash(failure)).toBe(true);

      // what the dev stack does: the first pick was taken meanwhile, the next pick is free
      const started = await retryOnPortClash(async () => {
        const port = attempts.length === 0 ? taken.port : await freePort();
        attempts.push(port);
        return start(join(dataDir, `attempt-${attempts.length}`), port);
      });
      await started.stop();
    } finally {
      taken.server.close();
    }
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toBe(taken.port);
    expect(attempts[1]).not.toBe(taken.port);
  });
});
