import { createServer, connect, type Server, type Socket } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * A TCP proxy on a free port that forwards to `target` at a limited rate (both directions). Chaos tests point a
 * worker's `AWS_ENDPOINT_URL_S3` at it so transfers take seconds and can be interrupted at a chosen point. The
 * bytes are untouched (S3 signatures stay valid: they sign the Host header the client sends to the proxy).
 * `bytes` counts all traffic, `connections` each accepted connection's own (in the order they were accepted): what a
 * killed process had sent still drains from the kernel's buffers after its death, so "what the next process sent" is
 * the sum over the connections accepted after it started.
 */
export async function startThrottleProxy(
  target: string,
  bytesPerSecond: number,
): Promise<{ url: string; close(): Promise<void>; bytes: { up: number; down: number }; connections: Array<{ up: number; down: number }> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const bytes = { up: 0, down: 0 };
  const connections: Array<{ up: number; down: number }> = [];
  const server: Server = createServer((client) => {
    const own = { up: 0, down: 0 };
    connections.push(own);
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const cleanup = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', cleanup).on('close', cleanup);
    // an upstream that ends its side (an answer to `Connection: close`) ends the client's once the throttled bytes
    // are through (pipe), not at once: destroying the client here dropped the answer's tail still in the throttle
    upstream.on('error', cleanup);
    client.pipe(throttle(bytesPerSecond, (n) => ((bytes.up += n), (own.up += n)))).pipe(upstream);
    upstream.pipe(throttle(bytesPerSecond, (n) => ((bytes.down += n), (own.down += n)))).pipe(client);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    bytes,
    connections,
    close: () =>
      new Promise((ok) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => ok());
      }),
  };
}

function throttle(bytesPerSecond: number, count: (n: number) => void): Transform {
  const slice = 16 * 1024;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      const pieces: Buffer[] = [];
      for (let offset = 0; offset < chunk.length; offset += slice) pieces.push(chunk.subarray(offset, offset + slice));
      const next = () => {
        const piece = pieces.shift();
        if (!piece) return done();
        this.push(piece);
        count(piece.length);
        setTimeout(next, (piece.length / bytesPerSecond) * 1000);
      };
      next();
    },
  });
}
