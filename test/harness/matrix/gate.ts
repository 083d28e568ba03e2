import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A request as the gate saw it. */
export interface GateRequest {
  /** Name of the listener it came in on (one listener per worker process). */
  via: string;
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  time: number;
  /** Status handed to the client; 0 when dropped or reset. */
  status: number;
}

export type GateMatch = (r: { method: string; path: string; query: string; via: string }) => boolean;

/**
 * Where a hold stops a request: `request` before it is forwarded (the service never saw it), `response` after the
 * upstream answered (the service did the work; the client waits for the answer).
 */
export type HoldPhase = 'request' | 'response';

/** A stopped request; the test decides what happens to it. */
export interface Held {
  via: string;
  method: string;
  path: string;
  query: string;
  /** `forward` (phase request) / `deliver` (phase response): carry on as if nothing happened; `drop`: reset the client's connection. */
  release(how: 'go' | 'drop'): void;
}

export interface Hold {
  /** Resolves with the first matching request once it is stopped. */
  arrived: Promise<Held>;
  cancel(): void;
}

interface HoldRule {
  match: GateMatch;
  phase: HoldPhase;
  onHeld: (held: Held) => void;
}

interface TimeoutRule {
  match: GateMatch;
  afterMs: number;
  status: number;
}

/** Hop-by-hop headers (and `expect`, which SigV4 does not sign) are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'expect', 'te', 'trailer']);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/**
 * An HTTP proxy in front of one service (the Storage API emulator, MinIO or the sample API) that lets a fault-matrix
 * cell stop a chosen request at a chosen point: before it is forwarded, or after the service answered. It has one
 * listener per worker process, so a cell knows which worker sent the request it stopped (and kills that one). The
 * bytes are forwarded untouched with the client's Host header, so S3 signatures stay valid. Optionally rewrites
 * the upstream's own URL in the answer of one path (the Storage API index names the importer's URL).
 */
export class Gate {
  readonly requests: GateRequest[] = [];
  private readonly servers = new Map<string, { server: Server; url: string; sockets: Set<Socket> }>();
  private holds: HoldRule[] = [];
  private timeouts: TimeoutRule[] = [];
  private downUntil = 0;
  private readonly target: URL;

  constructor(
    target: string,
    private readonly rewrite?: { path: RegExp; from: string },
  ) {
    this.target = new URL(target);
  }

  /** Opens (or returns) the listener named `via`; its base URL. */
  async listen(via: string): Promise<string> {
    const existing = this.servers.get(via);
    if (existing) return existing.url;
    const sockets = new Set<Socket>();
    const server = createServer((req, res) => this.handle(via, req, res));
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    this.servers.set(via, { server, url, sockets });
    return url;
  }

  /** Stops the first request that matches, at `phase`. */
  hold(match: GateMatch, phase: HoldPhase): Hold {
    let onHeld!: (held: Held) => void;
    const arrived = new Promise<Held>((ok) => (onHeld = ok));
    const rule: HoldRule = { match, phase, onHeld };
    this.holds.push(rule);
    return { arrived, cancel: () => (this.holds = this.holds.filter((r) => r !== rule)) };
  }

  /**
   * The first matching request is forwarded, but the client gets `status` (a gateway timeout) after `afterMs`
   * while the service is still working on it; the service's own answer is discarded.
   */
  gatewayTimeout(match: GateMatch, afterMs: number, status = 504): void {
    this.timeouts.push({ match, afterMs, status });
  }

  /** The service is unreachable for `ms`: new requests get their connection reset, open connections are cut. */
  down(ms: number): void {
    this.downUntil = Date.now() + ms;
    for (const { sockets } of this.servers.values()) for (const socket of sockets) socket.destroy();
  }

  isDown(): boolean {
    return Date.now() < this.downUntil;
  }

  /** Removes every hold, timeout and outage (held requests stay held until released). */
  reset(): void {
    this.holds = [];
    this.timeouts = [];
    this.downUntil = 0;
  }

  /** Cuts the connections of one listener (its worker was killed). */
  cut(via: string): void {
    for (const socket of this.servers.get(via)?.sockets ?? []) socket.destroy();
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.servers.values()].map(
        ({ server, sockets }) =>
          new Promise<void>((ok) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => ok());
          }),
      ),
    );
    this.servers.clear();
  }

  private take<T extends { match: GateMatch }>(list: T[], r: Parameters<GateMatch>[0], extra: (rule: T) => boolean = () => true): T | undefined {
    const index = list.findIndex((rule) => extra(rule) && rule.match(r));
    return index < 0 ? undefined : list.splice(index, 1)[0];
  }

  private handle(via: string, req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const r = { via, method: req.method ?? 'GET', path: q < 0 ? url : url.slice(0, q), query: q < 0 ? '' : url.slice(q + 1) };
    const entry: GateRequest = { ...r, time: Date.now(), status: 0 };
    this.requests.push(entry);
    const reset = () => {
      req.socket.destroy();
      res.destroy();
    };
    if (this.isDown()) return reset();
    // buffer the body first: a held request must not be half-sent
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const requestHold = this.take(this.holds, r, (h) => h.phase === 'request');
        if (requestHold) {
          const how = await new Promise<'go' | 'drop'>((release) => requestHold.onHeld({ ...r, release }));
          if (how === 'drop' || this.isDown()) return reset();
        }
        const timeout = this.take(this.timeouts, r);
        const responseHold = this.take(this.holds, r, (h) => h.phase === 'response');
        let answered = false;
        if (timeout) {
          setTimeout(() => {
            answered = true;
            entry.status = timeout.status;
            res.writeHead(timeout.status, { 'content-type': 'text/html' }).end(`<html><body><h1>${timeout.status} Gateway Time-out</h1></body></html>`);
          }, timeout.afterMs);
        }
        const upstream = await this.forward(req, body).catch(() => undefined);
        if (answered) return;
        if (!upstream) return reset();
        if (responseHold) {
          const how = await new Promise<'go' | 'drop'>((release) => responseHold.onHeld({ ...r, release }));
          if (how === 'drop') return reset();
        }
        let payload = upstream.body;
        const headers = forwardable(upstream.headers);
        if (this.rewrite && this.rewrite.path.test(r.path)) {
          const origin = `http://${req.headers.host ?? ''}`;
          payload = Buffer.from(payload.toString('utf8').split(this.rewrite.from).join(origin));
          headers['content-length'] = String(payload.length);
        }
        // otherwise the upstream's content-length stands (a HEAD answer has one and no body)
        entry.status = upstream.status;
        res.writeHead(upstream.status, headers).end(payload);
      })().catch(() => reset());
    });
  }

  private forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((ok, fail) => {
      const headers = forwardable(req.headers);
      if (body.length > 0 || req.headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
      const upstream = httpRequest(
        { host: this.target.hostname, port: Number(this.target.port), method: req.method, path: req.url, headers, agent: false },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => ok({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(parts) }));
          answer.on('error', fail);
        },
      );
      upstream.on('error', fail);
      upstream.end(body);
    });
  }
}
