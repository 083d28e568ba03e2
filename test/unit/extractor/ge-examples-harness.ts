/**
 * Runs Generic-Extractor documentation examples (`/work/shared/ge-examples/examples/<NNN-name>/`) against a local
 * mock of their API and reads the reference's expected tables, for unit tests of user functions and authentication.
 *
 * The mock follows the examples' README: a `<name>.request` file (`METHOD URI`, blank line, body) matches a request
 * by method, URI (path + query, byte for byte) and body, and by the headers of `<name>.requestHeaders`; every folder
 * is served under `/<folder>/`. The configuration's `http://mock-server[:80]` origin is rewritten to the mock, and
 * clear `#` values become `${env:SAPI_SECRET_…}` references with the values in the run's own environment.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { createRequestSender, requestAuthOf } from '../../../src/extractor/http/send-request';
import { runExtraction } from '../../../src/extractor/run-loop';

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

function headerLines(text: string): Array<[string, string]> {
  return text
    .split(/\r?\n/)
    .filter((l) => l.includes(':'))
    .map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]);
}

function loadEntries(): MockEntry[] {
  const entries: MockEntry[] = [];
  for (const folder of readdirSync(EXAMPLES_DIR)) {
    const dir = join(EXAMPLES_DIR, folder);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.request'))) {
      const name = file.replace(/\.request$/, '');
      const text = readFileSync(join(dir, file), 'utf8');
      const [first, ...rest] = text.split(/\r?\n/);
      const [method, uri] = first!.trim().split(/\s+/);
      const read = (ext: string) => (existsSync(join(dir, `${name}.${ext}`)) ? readFileSync(join(dir, `${name}.${ext}`), 'utf8') : undefined);
      entries.push({
        method: method!,
        uri: uri!,
        body: rest.join('\n').trim(),
        headers: headerLines(read('requestHeaders') ?? ''),
        response: read('response') ?? '',
        status: Number((read('responseCode') ?? '200').trim()),
        responseHeaders: headerLines(read('responseHeaders') ?? ''),
      });
    }
  }
  return entries;
}

/** What the mock saw: `METHOD URI` of every request (answered or not). */
export interface ExamplesMock {
  url: string;
  seen: string[];
  close(): Promise<void>;
}

/** Starts the mock of every example's API on a free port. */
export async function startExamplesMock(): Promise<ExamplesMock> {
  const entries = loadEntries();
  const seen: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8').trim();
      seen.push(`${req.method} ${req.url}`);
      const match = entries.find(
        (e) =>
          e.method === req.method &&
          e.uri === req.url &&
          e.body === body &&
          e.headers.every(([k, v]) => String(req.headers[k] ?? '') === v),
      );
      if (!match) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`no mock for ${req.method} ${req.url}`);
        return;
      }
      res.writeHead(match.status, Object.fromEntries(match.responseHeaders));
      res.end(match.response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The example's configuration pointed at the mock, with clear `#` values turned into references (and their env). */
export function exampleConfig(example: string, mockUrl: string): { config: Record<string, unknown>; env: Record<string, string> } {
  const host = new URL(mockUrl);
  // the server also appears as attributes that functions build the base URL from (087, 088, 119)
  const text = readFileSync(join(EXAMPLES_DIR, example, 'config.json'), 'utf8')
    .replace(/http:\/\/mock-server(:80)?/g, mockUrl)
    .replace(/"mock-server:80"/g, `"${host.host}"`)
    .replace(/"address": "mock-server"/g, `"address": "${host.hostname}"`)
    .replace(/"port": "80"/g, `"port": "${host.port}"`);
  const env: Record<string, string> = {};
  let n = 0;
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => {
        if (k.startsWith('#') && typeof v === 'string' && v !== '') {
          const name = `SAPI_SECRET_${k.slice(1).toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${n++}`;
          env[name] = v;
          return [k, `\${env:${name}}`];
        }
        return [k, visit(v)];
      }),
    );
  };
  return { config: visit(JSON.parse(text)) as Record<string, unknown>, env };
}

/** Expected tables of an example: table → {columns (`-` → `_`), rows (arrays)}; manifests' incremental/primary key. */
export function expectedTables(example: string): Record<string, { columns: string[]; rows: string[][] }> {
  const dir = join(EXAMPLES_DIR, example, '_sample_out');
  const tables: Record<string, { columns: string[]; rows: string[][] }> = {};
  for (const file of readdirSync(dir).filter((f) => !f.endsWith('.manifest'))) {
    const table = file.slice(file.indexOf('.') + 1);
    const lines = readFileSync(join(dir, file), 'utf8').split(/\r?\n/).filter((l) => l !== '');
    const parse = (line: string) => [...line.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1]!.replace(/""/g, '"'));
    const [header, ...rows] = lines.map(parse);
    tables[table] = { columns: header!.map((c) => c.replace(/-/g, '_')), rows };
  }
  return tables;
}

/** Runs an example with the plain loop and the activity's request sender; tables as columns + row arrays. */
export async function runExample(example: string, mock: ExamplesMock, overrides: { nowSeconds?: () => number; nonce?: () => string } = {}) {
  const { config, env } = exampleConfig(example, mock.url);
  const parsed = parseExtractorConfig(config);
  const fetchPage = createRequestSender({
    secrets: { env },
    auth: requestAuthOf(parsed),
    fetch: { maxAttempts: 1 },
    ...overrides,
  });
  const result = await runExtraction(parsed, { fetchPage });
  const tables: Record<string, { columns: string[]; rows: string[][] }> = {};
  for (const [name, table] of Object.entries(result.tables)) {
    tables[name] = { columns: table.columns.map((c) => c.replace(/-/g, '_')), rows: table.rows.map((r) => table.columns.map((c) => r[c] ?? '')) };
  }
  return { tables, requests: result.requests, env };
}
