/**
 * The mock API of the reference extractor's documentation examples (`../shared/ge-examples/README.md`): every
 * example folder served at once under `/<folder>/`. A request gets `<name>.response` (with `<name>.responseheaders`
 * and `<name>.responsecode`) only when it matches a `<name>.request` file: method, URI (path + query, byte for
 * byte) and body, and carries the headers of `<name>.requestheaders`; anything else is a 404 naming what arrived.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

/** One canned exchange of an example folder. */
interface Exchange {
  file: string;
  method: string;
  uri: string;
  body: string;
  requestHeaders: Array<[string, string]>;
  status: number;
  responseHeaders: Array<[string, string]>;
  response: Buffer;
}

/** A request the mock received, with the exchange it matched (`null`: answered 404). */
export interface SeenRequest {
  method: string;
  uri: string;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  matched: string | null;
}

export interface MockApi {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  origin: string;
  /** Every request received, in order. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** `Name: value` lines (CRLF or LF). */
function headerLines(text: string | undefined): Array<[string, string]> {
  if (!text) return [];
  return text
    .split(/\r?\n/)
    .filter((line) => line.includes(':'))
    .map((line) => {
      const at = line.indexOf(':');
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    });
}

/** Every `<name>.request` of every example folder under `examplesDir`. */
export function loadExchanges(examplesDir: string): Exchange[] {
  const exchanges: Exchange[] = [];
  for (const folder of readdirSync(examplesDir).sort()) {
    const dir = join(examplesDir, folder);
    const files = readdirSync(dir);
    // the examples spell the suffixes both ways (`users.requestHeaders`, `users.requestheaders`)
    const sibling = (name: string) => {
      const found = files.find((f) => f.toLowerCase() === name.toLowerCase());
      return found === undefined ? undefined : readFileSync(join(dir, found));
    };
    for (const file of files.filter((f) => f.endsWith('.request')).sort()) {
      const base = file.slice(0, -'.request'.length);
      const text = readFileSync(join(dir, file), 'utf8');
      const blank = text.search(/\r?\n\r?\n/);
      const line = (blank === -1 ? text : text.slice(0, blank)).trim();
      const body = blank === -1 ? '' : text.slice(blank).replace(/^\r?\n\r?\n/, '');
      const space = line.indexOf(' ');
      exchanges.push({
        file: `${folder}/${file}`,
        method: line.slice(0, space).toUpperCase(),
        uri: line.slice(space + 1).trim(),
        body: body.trim(),
        requestHeaders: headerLines(sibling(`${base}.requestHeaders`)?.toString('utf8')),
        status: Number(sibling(`${base}.responseCode`)?.toString('utf8').trim() || 200),
        responseHeaders: headerLines(sibling(`${base}.responseHeaders`)?.toString('utf8')),
        response: sibling(`${base}.response`) ?? Buffer.alloc(0),
      });
    }
  }
  return exchanges;
}

/** Bodies match byte for byte, or as equal JSON values (the files are pretty-printed by hand). */
function bodiesMatch(expected: string, actual: string): boolean {
  if (expected === actual.trim()) return true;
  try {
    return isDeepStrictEqual(JSON.parse(expected), JSON.parse(actual));
  } catch {
    return false;
  }
}

function headersMatch(required: Array<[string, string]>, request: IncomingMessage): boolean {
  return required.every(([name, value]) => {
    const got = request.headers[name.toLowerCase()];
    if (got === undefined) return false;
    // `Name: *`: present, any value
    return value === '*' || (Array.isArray(got) ? got.join(', ') : got) === value;
  });
}

/** Starts the mock on a free local port. */
export async function startMockApi(examplesDir: string): Promise<MockApi> {
  const exchanges = loadExchanges(examplesDir);
  const seen: SeenRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const method = (request.method ?? 'GET').toUpperCase();
      const uri = request.url ?? '/';
      const match = exchanges.find((e) => e.method === method && e.uri === uri && bodiesMatch(e.body, body) && headersMatch(e.requestHeaders, request));
      seen.push({ method, uri, body, headers: request.headers, matched: match?.file ?? null });
      if (!match) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end(`no mock for ${method} ${uri}${body ? ` ${body}` : ''}`);
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      for (const [name, value] of match.responseHeaders) headers[name] = value;
      response.writeHead(match.status, headers).end(match.response);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
