import { createServer, type Server } from 'node:net';
import { type AddressInfo } from 'node:net';
import { dechunk, parseHead, type RawHead, rawGet } from '../../../src/object-storage/raw-get';

/** A TCP server answering each connection with `answer` cut into `pieces` writes (a real socket, split reads). */
async function serve(answer: (request: string) => Buffer | string, pieces = 1, closeEarly = false): Promise<{ url: string; server: Server; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((socket) => {
    let request = '';
    socket.on('data', (d) => {
      request += d.toString('latin1');
      if (!request.includes('\r\n\r\n')) return;
      requests.push(request);
      const bytes = Buffer.from(answer(request));
      const step = Math.ceil(bytes.length / pieces);
      let at = 0;
      const next = (): void => {
        if (at >= bytes.length || (closeEarly && at >= bytes.length / 2)) {
          socket.end();
          return;
        }
        socket.write(bytes.subarray(at, at + step), () => setTimeout(next, 1));
        at += step;
      };
      next();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

const options = { signal: new AbortController().signal, headersTimeoutMs: 5_000, idleTimeoutMs: 5_000 };

describe('rawGet: an object GET read off the socket', () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  test('the body arrives whole, in order, through a small read buffer, with the head split across reads', async () => {
    const body = Buffer.from(Array.from({ length: 50_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''));
    const s = await serve(() => Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nX-A: 1\r\nx-a: 2\r\n\r\n`), body]), 40);
    servers.push(s.server);
    const got: Buffer[] = [];
    let seen: RawHead | undefined;
    const result = await rawGet(new URL(`${s.url}/bucket/key?X-Sig=abc`), { authorization: 'Bearer t' }, {
      ...options,
      readBufferBytes: 1000,
      onHead: async (head) => {
        seen = head;
        await new Promise((r) => setTimeout(r, 20)); // the caller may wait (the slice's offset): nothing is lost
        return (chunk) => got.push(Buffer.from(chunk));
      },
    });
    expect(result.bodyRead).toBe(true);
    expect(seen).toEqual({ status: 200, headers: { 'content-length': String(body.length), 'x-a': '1, 2' }, contentLength: body.length });
    expect(Buffer.concat(got).equals(body)).toBe(true);
    expect(s.requests[0]).toMatch(/^GET \/bucket\/key\?X-Sig=abc HTTP\/1\.1\r\nHost: 127\.0\.0\.1:\d+\r\nConnection: close\r\nauthorization: Bearer t\r\n\r\n$/);
  });

  test('a body without Content-Length is read as sent until the connection closes; chunked framing comes off with dechunk', async () => {
    const s = await serve(() => 'HTTP/1.1 503 Slow Down\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<Err>\r\n6;x=y\r\nSlowDo\r\n0\r\n\r\n', 3);
    servers.push(s.server);
    const got: Buffer[] = [];
    const result = await rawGet(new URL(s.url), {}, { ...options, onHead: () => (chunk) => got.push(Buffer.from(chunk)) });
    expect(result).toEqual({ head: expect.objectContaining({ status: 503, contentLength: undefined }), bodyRead: true });
    expect(dechunk(Buffer.concat(got)).toString()).toBe('<Err>SlowDo');
    expect(dechunk(Buffer.from('5\r\nabc')).toString()).toBe('abc'); // cut short: as far as it goes
  });

  test('a head the caller does not want leaves the body unread', async () => {
    const s = await serve(() => 'HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 3\r\n\r\nabc');
    servers.push(s.server);
    const result = await rawGet(new URL(s.url), {}, { ...options, onHead: () => undefined });
    expect(result).toEqual({ head: expect.objectContaining({ status: 302, headers: expect.objectContaining({ location: '/elsewhere' }) }), bodyRead: false });
  });

  test('a connection that closes before the end of the body fails the GET', async () => {
    const s = await serve(() => `HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n${'x'.repeat(10000)}`, 10, true);
    servers.push(s.server);
    await expect(rawGet(new URL(s.url), {}, { ...options, onHead: () => () => undefined })).rejects.toThrow('the connection closed before the end of the answer');
  });

  test('a sink that throws, an abort and a silent server each fail the GET', async () => {
    const s = await serve(() => `HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello`);
    servers.push(s.server);
    await expect(rawGet(new URL(s.url), {}, { ...options, onHead: () => () => { throw new Error('disk full'); } })).rejects.toThrow('disk full');
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(rawGet(new URL(s.url), {}, { ...options, signal: controller.signal, onHead: () => () => undefined })).rejects.toThrow('stop');
    const silent = createServer(() => undefined);
    servers.push(silent);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const url = new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    await expect(rawGet(url, {}, { ...options, headersTimeoutMs: 100, onHead: () => undefined })).rejects.toThrow('no answer within 100 ms');
  });

  test('heads: status, repeated headers, Content-Length only without Transfer-Encoding; garbage is refused', () => {
    expect(parseHead('HTTP/1.1 403 Forbidden\r\nContent-Length: 12\r\nx-ms-error-code: AuthenticationFailed')).toEqual({
      status: 403,
      headers: { 'content-length': '12', 'x-ms-error-code': 'AuthenticationFailed' },
      contentLength: 12,
    });
    expect(parseHead('HTTP/1.1 200 OK\r\nContent-Length: 12\r\nTransfer-Encoding: chunked').contentLength).toBeUndefined();
    expect(parseHead('HTTP/1.0 200').contentLength).toBeUndefined();
    expect(() => parseHead('SSH-2.0-OpenSSH')).toThrow('not an HTTP/1.1 answer');
    expect(() => parseHead('HTTP/1.1 200 OK\r\nno colon')).toThrow('malformed header line');
  });
});
