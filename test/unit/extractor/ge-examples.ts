/**
 * Test support: the reference extractor's documentation examples (`/work/shared/ge-examples/examples`, or
 * `GE_EXAMPLES_DIR`) served by a local mock API that behaves like the reference's mock server (a response only for
 * a request matching method, URI byte for byte, body and required headers; 404 otherwise), and a runner that checks
 * an example's output against its `_sample_out/`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';

/** `../shared/ge-examples/examples` beside the checkout (CI puts `../shared` there), or `GE_EXAMPLES_DIR`. */
export const GE_EXAMPLES_DIR = process.env.GE_EXAMPLES_DIR ?? resolve(__dirname, '..', '..', '..', '..', 'shared', 'ge-examples', 'examples');
if (!existsSync(GE_EXAMPLES_DIR))
  throw new Error(`the reference extractor's examples are missing at ${GE_EXAMPLES_DIR}: put ../shared beside the checkout or set GE_EXAMPLES_DIR`);

interface Mock {
  method: string;
  uri: string;
  body: string;
  requestHeaders: Array<[string, string]>;
  status: number;
  responseHeaders: Array<[string, string]>;
  response: Buffer;
}

/** A file of the example next to `<base>.request`, whatever the case of its suffix (`.responseCode`, `.responsecode`). */
function sibling(dir: string, files: string[], base: string, suffix: string): string | undefined {
  const name = files.find((f) => f.toLowerCase() === `${base}.${suffix}`.toLowerCase());
  return name === undefined ? undefined : readFileSync(join(dir, name), 'utf8');
}

const headerLines = (text: string | undefined): Array<[string, string]> =>
  (text ?? '')
    .split(/\r?\n/)
    .filter((l) => l.includes(':'))
    .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]);

function loadMocks(): Mock[] {
  const mocks: Mock[] = [];
  for (const folder of readdirSync(GE_EXAMPLES_DIR)) {
    const dir = join(GE_EXAMPLES_DIR, folder);
    let files: string[];
    try {
      files = readdirSync(dir);
    } catch {
      continue;
    }
    for (const file of files.filter((f) => f.endsWith('.request'))) {
      const base = file.slice(0, -'.request'.length);
      const text = readFileSync(join(dir, file), 'utf8');
      const [head = '', ...rest] = text.split(/\r?\n/);
      const [method = 'GET', uri = '/'] = head.trim().split(/\s+/);
      const responseName = files.find((f) => f === `${base}.response`);
      mocks.push({
        method,
        uri,
        body: rest.join('\n').trim(),
        requestHeaders: headerLines(sibling(dir, files, base, 'requestHeaders')),
        status: Number(sibling(dir, files, base, 'responseCode')?.trim() ?? '200'),
        responseHeaders: headerLines(sibling(dir, files, base, 'responseHeaders')),
        response: responseName ? readFileSync(join(dir, responseName)) : Buffer.alloc(0),
      });
    }
  }
  return mocks;
}

/** What the mock API saw. */
export interface SeenRequest {
  method: string;
  uri: string;
  body: string;
  headers: IncomingMessage['headers'];
}

export interface ExampleServer {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts the mock API of every example (http, or https with `tls`) on a free port. */
export async function startExampleServer(tls?: ServerOptions): Promise<ExampleServer> {
  const mocks = loadMocks();
  const requests: SeenRequest[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const seen = { method: req.method ?? 'GET', uri: req.url ?? '/', body, headers: req.headers };
      requests.push(seen);
      const mock = mocks.find(
        (m) =>
          m.method === seen.method &&
          m.uri === seen.uri &&
          m.body === body.trim() &&
          m.requestHeaders.every(([name, value]) => {
            const got = req.headers[name.toLowerCase()];
            return got !== undefined && (value === '*' || got === value);
          }),
      );
      if (!mock) {
        res.writeHead(404).end(`no mock for ${seen.method} ${seen.uri}`);
        return;
      }
      res.writeHead(mock.status, Object.fromEntries(mock.responseHeaders));
      res.end(mock.response);
    });
  };
  const server: Server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The example's `config.json`. */
export function exampleConfig(example: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(GE_EXAMPLES_DIR, example, 'config.json'), 'utf8')) as Record<string, unknown>;
}

/** The config with `baseUrl`'s origin replaced by the mock server's. */
export function pointAt(config: Record<string, unknown>, url: string): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(config)) as { parameters: { api: { baseUrl: string } } };
  copy.parameters.api.baseUrl = copy.parameters.api.baseUrl.replace(/^https?:\/\/[^/]+/, url);
  return copy as unknown as Record<string, unknown>;
}

/**
 * The config with every clear `#` value replaced by an `${env:SAPI_SECRET_GE_<n>}` reference, and the environment
 * holding the values (what the conformance harness does: the project refuses secrets in clear).
 */
export function withEnvSecrets(config: Record<string, unknown>): { config: Record<string, unknown>; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => {
        if (k.startsWith('#') && typeof v === 'string' && v !== '') {
          const name = `SAPI_SECRET_GE_${Object.keys(env).length}`;
          env[name] = v;
          return [k, `\${env:${name}}`];
        }
        return [k, visit(v)];
      }),
    );
  };
  return { config: visit(config) as Record<string, unknown>, env };
}

/** One expected output table of an example. */
export interface SampleTable {
  /** Table name as the reference names it (`-` kept). */
  name: string;
  columns: string[];
  rows: string[][];
  incremental: boolean;
  primaryKey: string[];
}

/** The tables of `_sample_out/` (`<bucket>.<table>` CSV + manifest). */
export function sampleTables(example: string): SampleTable[] {
  const dir = join(GE_EXAMPLES_DIR, example, '_sample_out');
  return readdirSync(dir)
    .filter((f) => !f.endsWith('.manifest'))
    .sort()
    .map((file) => {
      const [columns = [], ...rows] = parse(readFileSync(join(dir, file)), { relax_column_count: true }) as string[][];
      const manifest = JSON.parse(readFileSync(join(dir, `${file}.manifest`), 'utf8')) as { incremental?: boolean; primary_key?: string[] };
      return { name: file.slice(file.indexOf('.') + 1), columns, rows, incremental: manifest.incremental === true, primaryKey: manifest.primary_key ?? [] };
    });
}

/** Storage-safe comparison of names: `-` → `_`. */
export const storageSafe = (name: string) => name.replace(/-/g, '_');
