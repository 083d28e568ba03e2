import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type InPlaceJob, runInPlaceJob, SliceFailure, type SlicePlace } from '../../../src/object-storage/in-place-thread';

// The fetching half of an in-place download against a real HTTP server (node:http's, answering as stores do).
describe('runInPlaceJob: slices fetched into their places', () => {
  let server: Server;
  let base = '';
  const dir = mkdtempSync(join(tmpdir(), 'in-place-job-'));
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/s0') res.writeHead(200, { 'content-length': 3 }).end('aaa');
      else if (req.url === '/s1') res.writeHead(302, { location: '/moved/s1', 'content-length': 0 }).end();
      else if (req.url === '/moved/s1') res.writeHead(200, { 'content-length': 4 }).end('bbbb');
      else if (req.url === '/chunked') res.writeHead(200).end('no length'); // node:http sends it chunked
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

  test('an error answer fails with its status, code and body (chunked framing taken off)', async () => {
    const err = await runInPlaceJob(job('err', ['/busy']), { size: () => undefined, slice: () => undefined }, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SliceFailure);
    expect((err as SliceFailure).failure).toEqual({ kind: 'http', index: 0, status: 503, body: '<Error><Code>SlowDown</Code></Error>', errorCode: 'ServerBusy' });
  });

  test('a 200 without Content-Length fails unless an earlier attempt knew the size, then node:http reads it', async () => {
    const err = await runInPlaceJob(job('unsized', ['/chunked']), { size: () => undefined, slice: () => undefined }, new AbortController().signal).catch((e: unknown) => e);
    expect((err as SliceFailure).failure).toMatchObject({ kind: 'size', message: expect.stringContaining('no Content-Length') });
    const known = job('known', ['/chunked'], [9]);
    await runInPlaceJob(known, { size: () => undefined, slice: () => undefined }, new AbortController().signal);
    expect(readFileSync(known.partial, 'utf8')).toBe('h\nno length');
  });
});
