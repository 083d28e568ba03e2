import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  downloadThreadJobs,
  downloadThreadPairsStarted,
  IN_THREAD_DOWNLOAD_BYTES,
  type InPlaceJob,
  inPlaceRunner,
  SliceFailure,
} from '../../../src/object-storage/in-place-thread';

// The download threads (loaded through scripts/ts-register.js from the sources) run one job after another: a job that
// succeeds leaves its pair idle for the next download, a job that fails has its pair stopped.
describe('in-place download threads', () => {
  let server: Server;
  let base = '';
  const dir = mkdtempSync(join(tmpdir(), 'in-place-threads-'));
  const body = (name: string) => Buffer.alloc(300_000, name);
  const trickleStarted: string[] = [];
  const trickleClosed: string[] = [];
  let onTrickleStarted = (): void => undefined;
  let onTrickleClosed = (): void => undefined;
  const until = (ready: () => boolean, set: (wake: () => void) => void): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => (ready() ? resolve() : undefined);
      set(check);
      check();
    });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const name = (req.url ?? '').slice(1);
      if (name === 'missing') res.writeHead(404, { 'content-length': 9 }).end('not found');
      else if (name.startsWith('trickle')) {
        // a slice that never ends: 64 KiB every 20 ms until the client goes away
        res.writeHead(200, { 'content-length': 1024 * 1024 * 1024 });
        const timer = setInterval(() => res.write(Buffer.alloc(64 * 1024, 't')), 20);
        res.on('close', () => {
          clearInterval(timer);
          trickleClosed.push(name);
          onTrickleClosed();
        });
        trickleStarted.push(name);
        onTrickleStarted();
      } else res.writeHead(200, { 'content-length': body(name).length }).end(body(name));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function download(
    name: string,
    paths: string[],
    expectedBytes?: number,
    signal?: AbortSignal,
  ): Promise<{ sha256: string; expected: string; file: Buffer }> {
    const partial = join(dir, `${name}.partial`);
    writeFileSync(partial, 'h\n');
    const job: InPlaceJob = {
      partial,
      start: 2,
      slices: paths.map((p) => ({ url: `${base}/${p}`, headers: {} })),
      sizes: paths.map(() => null),
      finished: [],
      concurrency: 2,
    };
    const runner = inPlaceRunner(expectedBytes);
    try {
      const sha256 = await runner.run(job, Buffer.from('h\n'), { size: () => undefined, slice: () => undefined }, signal);
      const file = readFileSync(partial);
      return { sha256, expected: createHash('sha256').update(file).digest('hex'), file };
    } finally {
      await runner.close();
    }
  }

  test('a download its file detail says is small runs in this thread, with the same bytes and hash; a larger one in the threads', async () => {
    const jobs = downloadThreadJobs();
    const small = await download('small', ['f', 'g'], 600_000);
    expect(downloadThreadJobs()).toBe(jobs); // no thread ran it
    expect(small.sha256).toBe(small.expected);
    expect(small.file).toEqual(Buffer.concat([Buffer.from('h\n'), body('f'), body('g')]));
    const large = await download('large', ['f', 'g'], IN_THREAD_DOWNLOAD_BYTES + 1);
    expect(downloadThreadJobs()).toBe(jobs + 1);
    expect(large.sha256).toBe(small.sha256);
  });

  test('a second download reuses the idle threads of the first, and each hash is its own file', async () => {
    const first = await download('one', ['a', 'b', 'c']);
    const started = downloadThreadPairsStarted();
    const second = await download('two', ['d', 'e']);
    expect(downloadThreadPairsStarted()).toBe(started); // no new threads
    expect(first.sha256).toBe(first.expected);
    expect(second.sha256).toBe(second.expected);
    expect(second.file).toEqual(Buffer.concat([Buffer.from('h\n'), body('d'), body('e')]));
  });

  test('a failed job stops its threads; the next download starts new ones and succeeds', async () => {
    await download('warm', ['a']);
    const started = downloadThreadPairsStarted();
    const err = await download('bad', ['a', 'missing']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SliceFailure);
    expect((err as SliceFailure).failure).toMatchObject({ kind: 'http', index: 1, status: 404 });
    const next = await download('after', ['f']);
    expect(next.sha256).toBe(next.expected);
    expect(downloadThreadPairsStarted()).toBe(started + 1);
  });

  test('a runner closed without a job leaves its threads to the next download', async () => {
    await download('warm2', ['a']);
    const started = downloadThreadPairsStarted();
    await inPlaceRunner().close();
    const next = await download('after2', ['g']);
    expect(next.sha256).toBe(next.expected);
    expect(downloadThreadPairsStarted()).toBe(started);
  });

  test('an abort of slices still streaming stops the threads before the download settles: nothing is written after it', async () => {
    const partial = join(dir, 'aborted.partial');
    const controller = new AbortController();
    const pending = download('aborted', ['trickle-a1', 'trickle-a2'], undefined, controller.signal).catch((e: unknown) => e);
    await until(
      () => trickleStarted.includes('trickle-a1') && trickleStarted.includes('trickle-a2'),
      (wake) => (onTrickleStarted = wake),
    );
    controller.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(SliceFailure);
    expect((err as SliceFailure).failure).toMatchObject({ kind: 'aborted' });
    const size = statSync(partial).size;
    await until(
      () => trickleClosed.includes('trickle-a1') && trickleClosed.includes('trickle-a2'),
      (wake) => (onTrickleClosed = wake),
    );
    expect(statSync(partial).size).toBe(size);
  });
});
