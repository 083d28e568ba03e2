/**
 * An HTTP proxy in front of a service (the emulator) that passes every request on unchanged, headers included, and
 * can hold one request back before the service sees it: the test learns the request arrived, changes the world
 * (creates thousands of jobs), then lets it through. A connection the service drops is dropped towards the client.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One held request: `arrived` resolves when it reached the proxy; `release` sends it on to the service. */
export interface HeldRequest {
  arrived: Promise<void>;
  release(): void;
}

export interface HoldProxy {
  /** `http://127.0.0.1:<port>`: use it as the service's URL. */
  url: string;
  /** Holds the next request whose method and path (query included) match. */
  holdNext(match: (method: string, path: string) => boolean): HeldRequest;
  close(): Promise<void>;
}

export async function startHoldProxy(target: string): Promise<HoldProxy> {
  const to = new URL(target);
  const holds: { match: (method: string, path: string) => boolean; arrive: () => void; released: Promise<void> }[] = [];
  const server = http.createServer((req, res) => {
    const index = holds.findIndex((h) => h.match(req.method ?? '', req.url ?? '/'));
    const hold = index === -1 ? undefined : holds.splice(index, 1)[0];
    hold?.arrive();
    void (hold?.released ?? Promise.resolve()).then(() => {
      const upstream = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdNext(match) {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ match, arrive, released });
      return { arrived, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
