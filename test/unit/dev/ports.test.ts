import { createServer } from 'node:net';
import { freePorts, isPortClash, retryOnPortClash } from '../../../src/dev/ports';

describe('retryOnPortClash', () => {
  it('starts again while the failure is a port clash, up to the number of attempts', async () => {
    let calls = 0;
    const clash = () =>
      new Error("temporal exited with code 1 during start-up:\nError: can't set UI port 41234: listen tcp 127.0.0.1:41234: bind: address already in use");
    await expect(retryOnPortClash(async () => (++calls < 3 ? Promise.reject(clash()) : 'up'))).resolves.toBe('up');
    expect(calls).toBe(3);
    calls = 0;
    await expect(retryOnPortClash(async () => (++calls, Promise.reject(clash())), 2)).rejects.toThrow('address already in use');
    expect(calls).toBe(2);
  });

  it('throws any other failure at once', async () => {
    let calls = 0;
    await expect(retryOnPortClash(async () => (++calls, Promise.reject(new Error('minio was not healthy within 60000 ms'))))).rejects.toThrow('not healthy');
    expect(calls).toBe(1);
  });

  it('recognises the wording of Node, Go, MinIO and the the Temporal dev server (its own port pick)', () => {
    expect(isPortClash(new Error('Error: listen EADDRINUSE: address already in use 127.0.0.1:44503'))).toBe(true);
    expect(isPortClash(new Error('listen tcp 127.0.0.1:9000: bind: address already in use'))).toBe(true);
    expect(isPortClash(new Error('FATAL Unable to start the server: Specified port is already in use'))).toBe(true);
    expect(
      isPortClash(new Error('temporal exited with code 2 during start-up:\npanic: failed assigning ephemeral port: failed to assign a free port: dial tcp')),
    ).toBe(true);
    expect(isPortClash(new Error('connect ECONNREFUSED 127.0.0.1:9000'))).toBe(false);
    expect(isPortClash('EADDRINUSE')).toBe(false);
  });
});

describe('freePorts', () => {
  // MinIO exited at start-up in CI with "--console-address cannot be same as --address": its two ports came from two
  // freePort() calls in a row, which may return the same port
  it('gives distinct ports, none of those it is told are taken, each free to bind afterwards', async () => {
    for (let round = 0; round < 20; round++) {
      const [taken] = await freePorts(1);
      const ports = await freePorts(4, '127.0.0.1', [taken!]);
      expect(ports).toHaveLength(4);
      expect(new Set(ports).size).toBe(4);
      expect(ports).not.toContain(taken);
      for (const port of ports) {
        await new Promise<void>((ok, fail) => {
          const server = createServer().once('error', fail);
          server.listen(port, '127.0.0.1', () => server.close(() => ok()));
        });
      }
    }
  });
});
