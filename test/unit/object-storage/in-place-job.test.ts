import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvHttpProxyAgent } from 'undici';
import {
  ENV_HTTP_PROXY_AGENT_MODULE,
  envHttpProxyAgent,
  type InPlaceJob,
  runInPlaceJob,
  SliceFailure,
  type SlicePlace,
  writeAllAt,
} from '../../../src/object-storage/in-place-thread';

// The fetching half of an in-place download against a real HTTP server (node:http's, answering as stores do).
describe('runInPlaceJob: slices fetched into their places', () => {
  let server: Server;
  let base = '';
  const BIG = Buffer.from(Array.from({ length: 8 * 1024 * 1024 }, (_, i) => (i * 31 + (i >> 13)) & 0xff));
  const dir = mkdtempSync(join(tmpdir(), 'in-place-job-'));
  const seen: string[] = [];
  const EARLY = Buffer.alloc(16 * 1024, 'e'); // fits the socket's buffers: sent whole while the client holds it
  let earlyServed: () => void = () => undefined;
  const earlySent = new Promise<void>((resolve) => (earlyServed = resolve));

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/s0') res.writeHead(200, { 'content-length': 3 }).end('aaa');
      else if (req.url === '/s1') res.writeHead(302, { location: '/moved/s1', 'content-length': 0 }).end();
      else if (req.url === '/moved/s1') res.writeHead(200, { 'content-length': 4 }).end('bbbb');
      else if (req.url === '/chunked')
        res.writeHead(200).end('no length'); // node:http sends it chunked
      else if (req.url === '/big') {
        // 8 MiB in 1 MiB writes: many chunks, each written at its place
        res.writeHead(200, { 'content-length': BIG.length });
        for (let at = 0; at < BIG.length; at += 1024 * 1024) res.write(BIG.subarray(at, at + 1024 * 1024));
        res.end();
      } else if (req.url === '/cut') {
        res.writeHead(200, { 'content-length': 1000 });
        res.write('x'.repeat(400), () => res.destroy()); // the connection drops after 400 of 1,000 bytes
      } else if (req.url === '/silent') {
        res.writeHead(200, { 'content-length': 10 }); // the head, then nothing until the test aborts
        res.flushHeaders();
      } else if (req.url === '/early') {
        // answered whole at once, while the slice before it (/held) has not said its size
        res.writeHead(200, { 'content-length': EARLY.length }).end(EARLY, () => earlyServed());
      } else if (req.url === '/held') void earlySent.then(() => res.writeHead(200, { 'content-length': 5 }).end('held-'));
      else if (req.url === '/long-error') res.writeHead(500).end('e'.repeat(50_000));
      else res.writeHead(503, { 'x-ms-error-code': 'ServerBusy' }).end('<Error><Code>SlowDown</Code></Error>'); // chunked too
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function job(name: string, paths: string[], sizes: Array<number | null> = paths.map(() => null)): InPlaceJob {
    const partial = join(dir, `${name}.partial`);
    writeFileSync(partial, 'h\n');
    return { partial, start: 2, slices: paths.map((p) => ({ url: `${base}${p}`, headers: {} })), sizes, finished: [], concurrency: 2 };
  }

  test('each slice lands after the ones before it, a redirect followed, and its size and place are reported', async () => {
    const j = job('ok', ['/s0', '/s1']);
    const places: Array<[number, SlicePlace]> = [];
    const sizes: Array<[number, number]> = [];
    await runInPlaceJob(j, { size: (i, s) => sizes.push([i, s]), slice: (i, p) => places.push([i, p]) }, new AbortController().signal);
    expect(readFileSync(j.partial, 'utf8')).toBe('h\naaabbbb');
    expect(places.sort((a, b) => a[0] - b[0])).toEqual([
      [0, { offset: 2, size: 3 }],
      [1, { offset: 5, size: 4 }],
    ]);
    expect(sizes.sort((a, b) => a[0] - b[0])).toEqual([
      [0, 3],
      [1, 4],
    ]);
    expect(seen).toEqual(expect.arrayContaining(['/s0', '/s1', '/moved/s1']));
  });

  test('a slice whose body arrives before the slice ahead of it has a size waits, then lands after it', async () => {
    const j = job('held', ['/held', '/early']);
    const places: Array<[number, SlicePlace]> = [];
    await runInPlaceJob(j, { size: () => undefined, slice: (i, p) => places.push([i, p]) }, new AbortController().signal);
    expect(readFileSync(j.partial)).toEqual(Buffer.concat([Buffer.from('h\nheld-'), EARLY]));
    expect(places.sort((a, b) => a[0] - b[0])).toEqual([
      [0, { offset: 2, size: 5 }],
      [1, { offset: 7, size: EARLY.length }], // placed after the held slice, whose size came later
    ]);
  });

  test('a long error answer fails with the first 1,000 characters of its body', async () => {
    const err = await runInPlaceJob(job('long-error', ['/long-error']), { size: () => undefined, slice: () => undefined }, new AbortController().signal).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SliceFailure);
    expect((err as SliceFailure).failure).toEqual({ kind: 'http', index: 0, status: 500, body: 'e'.repeat(1000), errorCode: undefined });
  });

  test('an error answer fails with its status, code and body (chunked framing taken off)', async () => {
    const err = await runInPlaceJob(job('err', ['/busy']), { size: () => undefined, slice: () => undefined }, new AbortController().signal).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SliceFailure);
    expect((err as SliceFailure).failure).toEqual({
      kind: 'http',
      index: 0,
      status: 503,
      body: '<Error><Code>SlowDown</Code></Error>',
      errorCode: 'ServerBusy',
    });
  });

  test('a 200 without Content-Length fails unless an earlier attempt knew the size, then its chunked body is read', async () => {
    const err = await runInPlaceJob(job('unsized', ['/chunked']), { size: () => undefined, slice: () => undefined }, new AbortController().signal).catch(
      (e: unknown) => e,
    );
    expect((err as SliceFailure).failure).toMatchObject({ kind: 'size', message: expect.stringContaining('no Content-Length') });
    const known = job('known', ['/chunked'], [9]);
    await runInPlaceJob(known, { size: () => undefined, slice: () => undefined }, new AbortController().signal);
    expect(readFileSync(known.partial, 'utf8')).toBe('h\nno length');
  });

  test('a large slice arrives whole and in order, chunk after chunk at its place', async () => {
    const j = job('big', ['/s0', '/big']);
    await runInPlaceJob(j, { size: () => undefined, slice: () => undefined }, new AbortController().signal);
    expect(readFileSync(j.partial).equals(Buffer.concat([Buffer.from('h\naaa'), BIG]))).toBe(true);
  });

  test('a connection that drops before the end of the slice fails it as a network failure saying what was written', async () => {
    const err = await runInPlaceJob(job('cut', ['/cut']), { size: () => undefined, slice: () => undefined }, new AbortController().signal).catch(
      (e: unknown) => e,
    );
    expect((err as SliceFailure).failure).toMatchObject({ kind: 'network', index: 0, written: 400, message: expect.stringContaining('download interrupted') });
  });

  test('an abort stops a slice whose body does not come', async () => {
    const controller = new AbortController();
    const running = runInPlaceJob(job('silent', ['/silent']), { size: () => controller.abort(), slice: () => undefined }, controller.signal).catch(
      (e: unknown) => e,
    );
    expect(((await running) as SliceFailure).failure).toEqual({ kind: 'aborted' });
  });

  test('the slices go through the proxy HTTP_PROXY names', async () => {
    // a forward proxy: CONNECT tunnels (what undici's proxy agent opens) and absolute-URI requests, each counted
    const through: string[] = [];
    const proxy = createServer((req, res) => {
      through.push(`GET ${req.url}`);
      const target = new URL(req.url ?? '');
      const forwarded = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forwarded);
    });
    proxy.on('connect', (req, client, head) => {
      through.push(`CONNECT ${req.url}`);
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const saved = { HTTP_PROXY: process.env['HTTP_PROXY'], NO_PROXY: process.env['NO_PROXY'], no_proxy: process.env['no_proxy'] };
    process.env['HTTP_PROXY'] = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    delete process.env['NO_PROXY'];
    delete process.env['no_proxy'];
    try {
      const j = job('proxied', ['/s0', '/s1']);
      await runInPlaceJob(j, { size: () => undefined, slice: () => undefined }, new AbortController().signal);
      expect(readFileSync(j.partial, 'utf8')).toBe('h\naaabbbb');
      expect(through.length).toBeGreaterThan(0);
      expect(through.every((line) => line.includes(new URL(base).host))).toBe(true);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });
});

describe('writeAllAt: a batch of received chunks written at its place', () => {
  test('every chunk lands in order at the position, empty chunks and more chunks than one writev takes included', () => {
    const dir = mkdtempSync(join(tmpdir(), 'write-all-at-'));
    try {
      const path = join(dir, 'f');
      writeFileSync(path, Buffer.alloc(10, '.'));
      const chunks = Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? Buffer.alloc(0) : Buffer.alloc(1 + (i % 5), 97 + (i % 26))));
      const fd = openSync(path, 'r+');
      try {
        writeAllAt(fd, chunks, 4);
      } finally {
        closeSync(fd);
      }
      expect(readFileSync(path).equals(Buffer.concat([Buffer.alloc(4, '.'), ...chunks]))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("envHttpProxyAgent: the download thread loads undici's proxy agent alone", () => {
  test("the module it loads is undici's EnvHttpProxyAgent itself (a later undici that moved it fails here, not silently)", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(require(ENV_HTTP_PROXY_AGENT_MODULE)).toBe(EnvHttpProxyAgent);
    expect(envHttpProxyAgent()).toBe(EnvHttpProxyAgent);
  });
});
