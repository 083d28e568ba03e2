import { createServer, type Server } from 'node:net';

/** A free TCP port on `host`, found by binding port 0 and closing. A tiny race remains: see `retryOnPortClash`. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [port] = await freePorts(1, host);
  return port!;
}

/**
 * `count` distinct free TCP ports on `host`, none of them in `taken`: every port is held until all are picked (two
 * `freePort()` calls in a row may get the same port back, and MinIO refuses a console port equal to its own).
 */
export async function freePorts(count: number, host = '127.0.0.1', taken: readonly number[] = []): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = createServer();
      server.unref();
      servers.push(server);
      const port = await new Promise<number>((ok, fail) => {
        server.once('error', fail);
        server.listen(0, host, () => {
          const address = server.address();
          ok(typeof address === 'object' && address ? address.port : 0);
        });
      });
      if (!taken.includes(port)) ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((ok) => (server.listening ? server.close(() => ok()) : ok()))));
  }
}

/**
 * True when a start-up failure says a port was taken: Node's `EADDRINUSE` (Azurite), Go's `address already in use`
 * (Temporal), MinIO's `port is already in use`, or the Temporal dev server's own pick of a port for one of its
 * internal services failing (it panics with `failed assigning ephemeral port`).
 */
export function isPortClash(err: unknown): boolean {
  return err instanceof Error && /EADDRINUSE|address already in use|port is already in use|failed assigning ephemeral port/i.test(err.message);
}

/**
 * Runs `start` again, up to `attempts` times in all, when it failed because a port was taken between `freePort()`
 * picking it and the process binding it: another process (often a sibling starting at the same time) got there
 * first. `start` must pick its ports afresh on each call. Any other failure is thrown at once.
 */
export async function retryOnPortClash<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= attempts || !isPortClash(err)) throw err;
    }
  }
}
