/**
 * An HTTP proxy in front of an object store (MinIO) that counts the requests the store saw, by kind, and the most in
 * flight at once: what a transfer asked for, whichever client sent it (the SDK or a download thread's plain GETs).
 * The Host header is passed on unchanged, so SigV4 signatures (headers or presigned URLs) made for the proxy's
 * address hold.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** `http://127.0.0.1:<port>`: use as the S3 endpoint. */
  endpoint: string;
  /** Requests by kind: `HEAD`, `GET manifest` (a key ending in `manifest`), `GET` (any other object). */
  counts: Record<string, number>;
  maxInFlight: Record<string, number>;
  /** When set and it returns an answer, the store is not asked: the proxy answers instead (a fault). */
  intercept?: (kind: string, path: string) => { status: number; body: string } | undefined;
  /** When set and it returns a promise, the request waits for it before it goes to the store (a held request). */
  hold?: (kind: string, path: string) => Promise<void> | undefined;
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const to = new URL(target);
  const counts: Record<string, number> = {};
  const inFlight: Record<string, number> = {};
  const maxInFlight: Record<string, number> = {};
  const proxy: CountingProxy = {
    endpoint: '',
    counts,
    maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const kind = req.method === 'GET' && path.endsWith('manifest') ? 'GET manifest' : (req.method ?? '?');
    counts[kind] = (counts[kind] ?? 0) + 1;
    inFlight[kind] = (inFlight[kind] ?? 0) + 1;
    maxInFlight[kind] = Math.max(maxInFlight[kind] ?? 0, inFlight[kind]);
    let ended = false;
    const end = (): void => {
      if (!ended) inFlight[kind] = (inFlight[kind] ?? 1) - 1;
      ended = true;
    };
    res.on('close', end);
    const injected = proxy.intercept?.(kind, path);
    if (injected) {
      req.resume();
      res.writeHead(injected.status, { 'content-type': 'application/xml' }).end(injected.body);
      return;
    }
    const forward = (): void => {
      if (res.destroyed) return; // the client gave up while the request was held
      const upstream = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    const held = proxy.hold?.(kind, path);
    if (held) void held.then(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  proxy.endpoint = `http://127.0.0.1:${port}`;
  return proxy;
}
