/**
 * A real `node:http` server on port 0 whose answers are scripted per route, recording every request it sees.
 * Used instead of a mock dispatcher so the client's real transport (sockets, keep-alive, resets) is exercised.
 */
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type Answer = (req: SeenRequest, res: http.ServerResponse) => void;

interface Route {
  method: string;
  path: string | RegExp;
  answers: Answer[];
}

export class ScriptedServer {
  readonly requests: SeenRequest[] = [];
  private readonly routes: Route[] = [];
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
        this.requests.push(seen);
        const route = this.routes.find(
          (r) => r.method === seen.method && (typeof r.path === 'string' ? seen.url.split('?')[0] === r.path : r.path.test(seen.url)),
        );
        if (!route) return json(404, { error: `no route for ${seen.method} ${seen.url}`, code: 'test.noRoute' })(seen, res);
        // Answers are consumed in order; the last one repeats.
        const answer = route.answers.length > 1 ? route.answers.shift()! : route.answers[0]!;
        answer(seen, res);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Scripts the answers of a route: consumed in order, the last one repeats. */
  on(method: string, path: string | RegExp, ...answers: Answer[]): this {
    this.routes.unshift({ method, path, answers });
    return this;
  }

  count(method: string, path: string | RegExp): number {
    return this.requests.filter((r) => r.method === method && (typeof path === 'string' ? r.url.split('?')[0] === path : path.test(r.url))).length;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return (_req, res) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };
}

export function text(status: number, body: string, contentType = 'text/html'): Answer {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  };
}

/** Destroys the socket without answering: the client sees ECONNRESET / socket closed. */
export const reset: Answer = (_req, res) => {
  res.socket?.destroy();
};

/** Never answers (until the server stops): the client hits its headers timeout. */
export const hang: Answer = () => undefined;
