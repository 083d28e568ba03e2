/** The chaos tests' gate in front of the sample API. */
import { createServer, type Server } from 'node:http';

/** A hold on one request: the test learns when the API answered it, and releases the answer when it wants. */
export interface Hold {
  match: (url: string) => boolean;
  /** Called when the API has answered (the answer is held until `release`). */
  answered?: () => void;
  release?: Promise<void>;
  /** Called once the answer has been handed to the client's socket. */
  sent?: () => void;
}

/**
 * An HTTP proxy in front of a test API that slows every answer a little, counts the requests of one run as they
 * arrive (`seen`), and can hold answers back (`hold`): the chaos tests kill a worker while it waits for one.
 */
export async function startGate(target: string, delayMs: number): Promise<{ url: string; seen: string[]; hold(h: Hold): void; close(): Promise<void> }> {
  const seen: string[] = [];
  const holds: Hold[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = req.url ?? '/';
        seen.push(url);
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        const upstream = await fetch(new URL(url.slice(1), target), {
          method: req.method,
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
          body: req.method === 'GET' ? undefined : body,
        });
        const answer = Buffer.from(await upstream.arrayBuffer());
        await new Promise((r) => setTimeout(r, delayMs));
        const index = holds.findIndex((h) => h.match(url));
        const hold = index === -1 ? undefined : holds.splice(index, 1)[0];
        hold?.answered?.();
        await hold?.release;
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(answer, () => hold?.sent?.());
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    seen,
    hold: (h) => holds.push(h),
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
