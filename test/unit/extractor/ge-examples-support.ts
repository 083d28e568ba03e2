/**
 * The reference extractor's documentation examples (`/work/shared/ge-examples/examples`, see its README): a local
 * mock server that answers a request only when it matches an example's `.request` file byte for byte (method, URI,
 * body, required headers), and a reader of the expected `_sample_out/` tables.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** Where the examples are (override with `GE_EXAMPLES_DIR`). */
export const EXAMPLES_DIR = process.env.GE_EXAMPLES_DIR ?? '/work/shared/ge-examples/examples';

interface MockEntry {
  method: string;
  uri: string;
  body: string;
  headers: Array<[string, string]>;
  response: string;
  status: number;
  responseHeaders: Array<[string, string]>;
}

function headerLines(file: string): Array<[string, string]> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .filter((line) => line.includes(':'))
    .map((line) => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()]);
}

function loadMocks(): MockEntry[] {
  const entries: MockEntry[] = [];
  for (const folder of readdirSync(EXAMPLES_DIR)) {
    const dir = join(EXAMPLES_DIR, folder);
    if (!existsSync(join(dir, 'config.json'))) continue;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.request'))) {
      const base = join(dir, file.replace(/\.request$/, ''));
      const text = readFileSync(`${base}.request`, 'utf8');
      const [first, ...rest] = text.split(/\r?\n/);
      const [method, uri] = first.trim().split(/\s+/);
      const body = rest.join('\n').replace(/^\r?\n/, '').trim();
      const response = existsSync(`${base}.response`) ? readFileSync(`${base}.response`, 'utf8') : '';
      const status = existsSync(`${base}.responseCode`) ? Number(readFileSync(`${base}.responseCode`, 'utf8').trim()) : 200;
      entries.push({ method, uri, body, headers: headerLines(`${base}.requestHeaders`), response, status, responseHeaders: headerLines(`${base}.responseHeaders`) });
    }
  }
  return entries;
}

/** A running mock of every example at once (`/<folder>/…`). */
export interface ExamplesMock {
  url: string;
  /** Requests received, `METHOD URI` (+ ` BODY` when there is one), including unmatched ones. */
  requests: string[];
  close(): Promise<void>;
}

/** Starts the mock server on a free port. */
export async function startExamplesMock(): Promise<ExamplesMock> {
  const mocks = loadMocks();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8').trim();
      const uri = req.url ?? '/';
      requests.push(`${req.method} ${uri}${body === '' ? '' : ` ${body}`}`);
      const match = mocks.find(
        (m) =>
          m.method === req.method &&
          m.uri === uri &&
          m.body === body &&
          m.headers.every(([name, value]) => req.headers[name.toLowerCase()] === value),
      );
      if (!match) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"no mock for this request"}');
        return;
      }
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      for (const [name, value] of match.responseHeaders) headers[name] = value;
      res.writeHead(match.status, headers).end(match.response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/** An example's configuration with its `baseUrl` origin pointed at the mock. */
export function exampleConfig(folder: string, mockUrl: string): unknown {
  const config = JSON.parse(readFileSync(join(EXAMPLES_DIR, folder, 'config.json'), 'utf8'));
  const api = config.parameters.api;
  api.baseUrl = String(api.baseUrl).replace(/^https?:\/\/mock-server(:80)?/, mockUrl);
  return config;
}

/** Parses the reference's CSV (every value quoted, `""` escapes, newlines inside quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
    i++;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** An expected table: columns (Storage-safe: `-` → `_`), rows as arrays, and the manifest. */
export interface ExpectedTable {
  columns: string[];
  rows: string[][];
  manifest: { incremental?: boolean; primary_key?: string[] };
}

/** The tables of an example's `_sample_out/`, keyed by table name (without the bucket). */
export function expectedTables(folder: string): Record<string, ExpectedTable> {
  const dir = join(EXAMPLES_DIR, folder, '_sample_out');
  const tables: Record<string, ExpectedTable> = {};
  for (const file of readdirSync(dir).filter((f) => !f.endsWith('.manifest'))) {
    const [header, ...rows] = parseCsv(readFileSync(join(dir, file), 'utf8'));
    const manifestFile = join(dir, `${file}.manifest`);
    const manifest = existsSync(manifestFile) ? JSON.parse(readFileSync(manifestFile, 'utf8')) : {};
    const table = file.slice(file.indexOf('.') + 1);
    tables[table] = { columns: header.map((c) => c.replace(/-/g, '_')), rows, manifest };
  }
  return tables;
}
