import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';

/** Default port of `sapi-temporal codec-server` (the one Temporal's codec-server samples use). */
export const DEFAULT_CODEC_SERVER_PORT = 8888;
/** Default interface: only this machine. */
export const DEFAULT_CODEC_SERVER_HOST = '127.0.0.1';
/** Largest request body accepted (bytes): a history's payloads are decoded a few events at a time. */
const CODEC_SERVER_MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Environment variable with the bearer token the codec server requires (`sapi-temporal codec-server`, the dev stack). */
export const CODEC_SERVER_TOKEN_ENV = 'SAPI_CODEC_SERVER_TOKEN';
/** Headers the Temporal UI and CLI send with codec requests (answered in CORS preflights). */
export const CODEC_SERVER_ALLOWED_HEADERS = 'content-type, x-namespace, authorization';

export interface CodecServerOptions {
  /** The codec whose `encode`/`decode` the endpoints run. */
  codec: PayloadCodec;
  /** Bearer token every `/encode` and `/decode` request must carry (`Authorization: Bearer <token>`). */
  token: string;
  /** Browser origins allowed to call the server (the Temporal UI, e.g. `http://localhost:8233`); `*` allows any. Default none. */
  corsOrigins?: readonly string[];
  /** Default 0: a free port. */
  port?: number;
  /** Default {@link DEFAULT_CODEC_SERVER_HOST}. */
  host?: string;
}

export interface CodecServerHandle {
  /** Base URL, e.g. `http://127.0.0.1:8888`: give it to the UI or to `temporal --codec-endpoint`. */
  url: string;
  close(): Promise<void>;
}

/** A payload in the protobuf JSON form of the codec-server protocol: bytes as base64. */
interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A Temporal codec server: `POST …/encode` and `POST …/decode` take and return `{"payloads":[{"metadata":{k:base64},
 * "data":base64}]}` (only the last path segment counts, so the server can sit under any prefix). Every call needs
 * the bearer token, as `Authorization: Bearer <token>` or, for a UI that cannot send headers, as the path segment
 * before `encode`/`decode` (`/<token>/decode`); 401 otherwise. CORS preflights are answered without the token, and
 * `Access-Control-Allow-Origin` is sent only to the configured origins.
 */
export async function createCodecServer(options: CodecServerOptions): Promise<CodecServerHandle> {
  if (options.token.trim() === '') throw new Error('the codec server needs a bearer token: set SAPI_CODEC_SERVER_TOKEN');
  const origins = new Set(options.corsOrigins ?? []);
  const expected = Buffer.from(options.token, 'utf8');

  const authorised = (request: IncomingMessage, segments: string[]): boolean => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    const candidates = [match?.[1], pathToken(segments.at(-2))];
    return candidates.some((candidate) => candidate !== undefined && equalSecret(Buffer.from(candidate, 'utf8'), expected));
  };

  const server = createServer((request, response) => {
    const origin = request.headers.origin;
    if (origin && (origins.has('*') || origins.has(origin))) {
      response.setHeader('Access-Control-Allow-Origin', origins.has('*') ? '*' : origin);
      if (!origins.has('*')) response.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    response.setHeader('Vary', 'Origin');
    handle(request, response).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      if (status === 401) response.setHeader('WWW-Authenticate', 'Bearer realm="sapi-temporal codec server"');
      sendJson(response, status, { error: err instanceof Error ? err.message : String(err) });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const segments = new URL(request.url ?? '/', 'http://codec').pathname.split('/').filter((segment) => segment !== '');
    const action = segments.at(-1);
    if (request.method === 'OPTIONS') {
      response.writeHead(204, {
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': CODEC_SERVER_ALLOWED_HEADERS,
        'Access-Control-Max-Age': '600',
      });
      response.end();
      return;
    }
    if (action !== 'encode' && action !== 'decode') {
      request.resume();
      throw new HttpError(404, `unknown endpoint ${JSON.stringify(request.url)}: POST …/encode or …/decode`);
    }
    if (request.method !== 'POST') {
      request.resume();
      response.setHeader('Allow', 'POST, OPTIONS');
      throw new HttpError(405, `${request.method} is not allowed on /${action}: use POST`);
    }
    if (!authorised(request, segments)) {
      request.resume();
      throw new HttpError(401, 'missing or wrong bearer token: send Authorization: Bearer <SAPI_CODEC_SERVER_TOKEN>');
    }
    const body = parseBody(await readBody(request));
    const payloads = body.payloads.map(fromJson);
    let result: Payload[];
    try {
      result = action === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
    } catch (err) {
      throw new HttpError(400, `${action} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    sendJson(response, 200, { payloads: result.map(toJson) });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? DEFAULT_CODEC_SERVER_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function pathToken(segment: string | undefined): string | undefined {
  try {
    return segment === undefined ? undefined : decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function equalSecret(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > CODEC_SERVER_MAX_BODY_BYTES) {
      request.destroy();
      throw new HttpError(413, `request body over ${CODEC_SERVER_MAX_BODY_BYTES} bytes: send fewer payloads per call`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string): { payloads: JsonPayload[] } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, `request body is not JSON: expected {"payloads":[{"metadata":{…},"data":"<base64>"}]}, got ${JSON.stringify(text.slice(0, 80))}`);
  }
  const payloads = (body as { payloads?: unknown } | null)?.payloads ?? [];
  if (!Array.isArray(payloads) || !payloads.every(isJsonPayload)) {
    throw new HttpError(400, 'request body must be {"payloads":[{"metadata":{"<key>":"<base64>"},"data":"<base64>"}]}');
  }
  return { payloads };
}

function isJsonPayload(value: unknown): value is JsonPayload {
  if (typeof value !== 'object' || value === null) return false;
  const { metadata, data } = value as JsonPayload;
  const metadataOk = metadata == null || (typeof metadata === 'object' && Object.values(metadata).every((v) => typeof v === 'string'));
  return metadataOk && (data == null || typeof data === 'string');
}

function fromJson({ metadata, data }: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
    data: Buffer.from(data ?? '', 'base64'),
  };
}

function toJson({ metadata, data }: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
    data: Buffer.from(data ?? new Uint8Array()).toString('base64'),
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}
