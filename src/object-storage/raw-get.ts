/**
 * A plain HTTP/1.1 GET read straight off the socket: the answer's bytes land in one reused buffer (`onread` of
 * `net`/`tls` sockets) and the body is handed to a sink as views of that buffer, which the sink must consume before
 * it returns (a synchronous positional write does). node:http hands a body out as a stream of freshly allocated
 * ~64 KiB chunks, each through its parser's callbacks and the stream's events; for a large object on a fast link
 * that costs several times the CPU of the bytes themselves (256 MiB over loopback: ~330–440 ms of user CPU in
 * 4,000+ chunks with node:http, ~20–30 ms in ~300 reads of up to 1 MiB here; the copies into the page cache are the
 * same).
 *
 * It reads what object stores answer to a GET of an object: a status line, headers and a body of exactly
 * `Content-Length` bytes, one request per connection (`Connection: close`); a body without `Content-Length` (an
 * error's, say) is read as sent until the connection closes — chunked framing included ({@link dechunk} takes it
 * off). The caller decides from the head what to do with the body ({@link RawGetOptions.onHead}).
 * Built-ins only: it runs in the download threads (`in-place-thread.ts`).
 */
import { isIP } from 'node:net';
import * as net from 'node:net';
import * as tls from 'node:tls';

/** The head of an answer: status and headers (names in lower case; repeated ones joined with `, `). */
export interface RawHead {
  status: number;
  headers: Record<string, string>;
  /** The body's length from `Content-Length`; undefined when absent, malformed, or a `Transfer-Encoding` is set. */
  contentLength: number | undefined;
}

/** Takes the body's bytes: each `chunk` is valid only during the call. Throwing fails the GET. */
export type RawBodySink = (chunk: Buffer) => void;

export interface RawGetOptions {
  signal: AbortSignal;
  /** No complete head within this (ms): the GET fails. */
  headersTimeoutMs: number;
  /** No bytes for this long once the head is in (ms): the GET fails. */
  idleTimeoutMs: number;
  /**
   * Called once with the head (reading waits while it runs): a sink to read the body into (its `contentLength`
   * bytes, or without one every byte until the connection closes, as sent), or undefined to leave the body unread
   * (the connection is closed).
   */
  onHead(head: RawHead): RawBodySink | undefined | Promise<RawBodySink | undefined>;
  /** Size of the read buffer. Default {@link RAW_READ_BUFFER_BYTES}. */
  readBufferBytes?: number;
}

/** What {@link rawGet} settles with: the head, and whether the body was read to its end. */
export interface RawGetResult {
  head: RawHead;
  bodyRead: boolean;
}

/** The socket's read buffer: up to this many bytes per read. */
export const RAW_READ_BUFFER_BYTES = 1024 * 1024;
/** Largest head accepted. */
const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

/** Sends a GET of `url` (http: or https:, certificates checked as by node:https) and reads its answer. */
export function rawGet(url: URL, headers: Record<string, string>, options: RawGetOptions): Promise<RawGetResult> {
  return new Promise<RawGetResult>((resolve, reject) => {
    const { signal } = options;
    const buffer = Buffer.allocUnsafe(options.readBufferBytes ?? RAW_READ_BUFFER_BYTES);
    let headBytes: Buffer | undefined; // the head so far, while it spans reads
    let head: RawHead | undefined;
    let sink: RawBodySink | undefined;
    /** Body bytes still to come; undefined: until the connection closes. */
    let remaining: number | undefined = 0;
    let settled = false;
    const settle = (outcome: { result: RawGetResult } | { error: unknown }): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if ('result' in outcome) resolve(outcome.result);
      else reject(outcome.error);
    };
    const fail = (error: unknown): void => settle({ error });
    const onAbort = (): void => fail(signal.reason ?? new Error('aborted'));

    const body = (view: Buffer): void => {
      if (!sink || remaining === 0) return;
      if (remaining === undefined) return sink(view);
      const part = view.length > remaining ? view.subarray(0, remaining) : view;
      sink(part);
      remaining -= part.length;
      if (remaining === 0) settle({ result: { head: head!, bodyRead: true } });
    };

    const onHeadParsed = (parsed: RawHead, rest: Buffer): void => {
      head = parsed;
      socket.pause(); // nothing is read while the caller decides
      socket.setTimeout(options.idleTimeoutMs);
      Promise.resolve()
        .then(() => options.onHead(parsed))
        .then((taken) => {
          if (settled) return;
          if (!taken) return settle({ result: { head: parsed, bodyRead: false } });
          sink = taken;
          remaining = parsed.contentLength;
          if (remaining === 0) return settle({ result: { head: parsed, bodyRead: true } });
          if (rest.length) body(rest);
          if (!settled) socket.resume();
        })
        .catch(fail);
    };

    const onread = {
      buffer,
      callback: (length: number): boolean => {
        if (settled) return false;
        const view = buffer.subarray(0, length);
        try {
          if (head) body(view);
          else {
            const all: Buffer = headBytes ? Buffer.concat([headBytes, view]) : view;
            const end = all.indexOf(HEAD_END);
            if (end < 0) {
              if (all.length > MAX_HEAD_BYTES) throw new Error(`the answer's head is longer than ${MAX_HEAD_BYTES} bytes`);
              headBytes = Buffer.from(all); // a copy: the read buffer is reused
              return true;
            }
            headBytes = undefined;
            // the rest is copied too: the body waits for onHead, and the read buffer is reused meanwhile
            onHeadParsed(parseHead(all.subarray(0, end).toString('latin1')), Buffer.from(all.subarray(end + HEAD_END.length)));
          }
        } catch (err) {
          fail(err);
          return false;
        }
        return true;
      },
    };

    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const secure = url.protocol === 'https:';
    const port = Number(url.port || (secure ? 443 : 80));
    const send = (): void => {
      const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    };
    const socket: net.Socket = secure
      ? // tls.connect takes `onread` like net.connect (node ≥ 14), though @types/node does not say so
        tls.connect({ host, port, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], onread } as tls.ConnectionOptions, send)
      : net.connect({ host, port, onread }, send);
    socket.setTimeout(options.headersTimeoutMs);
    socket.on('timeout', () => fail(new Error(head ? `no data for ${options.idleTimeoutMs} ms` : `no answer within ${options.headersTimeoutMs} ms`)));
    socket.on('error', fail);
    // the end of a body without Content-Length; a close before the end of any other answer fails it
    socket.on('end', () => remaining === undefined && sink && settle({ result: { head: head!, bodyRead: true } }));
    socket.on('close', () => fail(new Error(head ? 'the connection closed before the end of the answer' : 'the connection closed before an answer')));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Parses a head (status line and header lines, without the blank line). */
export function parseHead(text: string): RawHead {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine);
  if (!match) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(statusLine.slice(0, 100))}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`malformed header line: ${JSON.stringify(line.slice(0, 100))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const declared = headers['content-length'];
  const contentLength = headers['transfer-encoding'] === undefined && declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
  return { status: Number(match[1]), headers, contentLength };
}

/** The data of a chunked body (`Transfer-Encoding: chunked`) as far as it is complete; for error excerpts. */
export function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = bytes.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(bytes.subarray(at, eol).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size) || size <= 0) break;
    parts.push(bytes.subarray(eol + 2, Math.min(eol + 2 + size, bytes.length)));
    at = eol + 2 + size + 2;
    if (at > bytes.length) break;
  }
  return Buffer.concat(parts);
}
