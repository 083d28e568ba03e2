/**
 * Swap races against the local-path policy (issue 35): a folder under the root is flipped between a real folder
 * and a symbolic link to a folder outside the root, as fast as another process can, while sources are opened and
 * read and destinations are checked and written through the functions the activities use (`createConfinement`'s
 * `openSource` / `confineDestination`, then the download). Whatever the timing, nothing outside is read or written:
 * each operation either works on the real folder or is refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { closeDefaultHttpPools } from '../../../src/http';
import { downloadFile } from '../../../src/object-storage/download';
import { createConfinement } from '../../../src/activities/confine';
import type { InputPolicy } from '../../../src/security/policy';

jest.setTimeout(120_000);

/** The flipper: swaps each `<dir>/<name>` between the real folder and a link to outside, until killed. */
const FLIPPER = `
const fs = require('node:fs');
const dirs = JSON.parse(process.argv[1]);
// each state held 0.3 ms, and every 8th folder state 20 ms: the races meet both states mid-operation, and an
// operation sometimes fits in one folder state (a read checks each step, so under 0.3 ms alone it may never finish)
const spin = (ns) => { const end = process.hrtime.bigint() + ns; while (process.hrtime.bigint() < end); };
process.stdout.write('ready\\n');
for (let n = 0; ; n++) {
  for (const d of dirs) { fs.renameSync(d, d + '.real'); fs.renameSync(d + '.link', d); }
  spin(300000n);
  for (const d of dirs) { fs.renameSync(d, d + '.link'); fs.renameSync(d + '.real', d); }
  spin(n % 8 === 0 ? 20000000n : 300000n);
}
`;

async function readAll(s: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('a folder under the root flipped between a folder and a link to outside', () => {
  let base: string;
  let root: string;
  let outside: string;
  let flipper: ChildProcess | undefined;
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'swap-races-'));
    root = join(base, 'root');
    outside = join(base, 'outside');
    for (const dir of [root, outside, join(root, 'sw'), join(root, 'swd'), join(outside, 'sw'), join(outside, 'swd')]) mkdirSync(dir);
    writeFileSync(join(root, 'sw', 'data.csv'), 'id\ninside\n');
    writeFileSync(join(outside, 'sw', 'data.csv'), 'id\nOUTSIDE SECRET\n');
    symlinkSync(join(outside, 'sw'), join(root, 'sw.link'));
    symlinkSync(join(outside, 'swd'), join(root, 'swd.link'));
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-length': 'id\nexported\n'.length });
      res.end('id\nexported\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/file.csv`;
  });
  afterAll(async () => {
    if (flipper?.pid !== undefined && flipper.exitCode === null) flipper.kill('SIGKILL');
    server?.close();
    await closeDefaultHttpPools();
    rmSync(base, { recursive: true, force: true });
  });

  it('reads 50 sources and writes 50 destinations (or more) without one byte read from or written outside the root', async () => {
    const policy: InputPolicy = { localRoots: [root], allowedNetworks: [], internalOrigins: [], objectPrefixes: [] };
    const dispatcher = new Agent();
    const confinement = createConfinement({ policy, s3: () => undefined as never, sources: dispatcher, stagingUrl: join(base, 'staging') });

    flipper = spawn(process.execPath, ['-e', FLIPPER, JSON.stringify([join(root, 'sw'), join(root, 'swd')])], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => flipper!.stdout!.once('data', () => resolve()));

    const reads = { inside: 0, outside: 0, refused: 0, failed: 0 };
    const writes = { inside: 0, refused: 0, failed: 0 };
    const outcome = (err: unknown) => ((err as { code?: string }).code === 'SAPI_INPUT_FORBIDDEN' ? 'refused' : 'failed');
    const read = async (i: number) => {
      try {
        const source = await confinement.openSource(join(root, 'sw', 'data.csv'), 'source');
        // as an import reads it: the part pipeline's positional reads (openHandle), or a stream from an offset
        let text: string;
        if (i % 2 === 0 && source.openHandle) {
          const handle = await source.openHandle();
          text = (await handle.readFile()).toString('utf8');
          await handle.close();
        } else {
          text = await readAll(await source.open(0));
        }
        reads[text.includes('OUTSIDE') ? 'outside' : 'inside']++;
      } catch (err) {
        reads[outcome(err)]++;
      }
    };
    const write = async (i: number) => {
      try {
        const destination = await confinement.confineDestination(join(root, 'swd', `out-${i}.csv`), 'destination', false);
        await downloadFile({ file: { id: i, isSliced: false, url }, destination, destinationChecked: true });
        writes.inside++;
      } catch (err) {
        writes[outcome(err)]++;
      }
    };
    // 50 + 50 at least, and on until each kind worked once (so the race met both states)
    let rounds = 0;
    for (; rounds < 25 || ((reads.inside === 0 || writes.inside === 0) && rounds < 500); rounds++) {
      await Promise.all([read(2 * rounds), write(2 * rounds), read(2 * rounds + 1), write(2 * rounds + 1)]);
    }
    flipper.kill('SIGKILL');
    await dispatcher.close();

    const writtenOutside = readdirSync(join(outside, 'swd')).length + readdirSync(outside).filter((name) => name !== 'sw' && name !== 'swd').length;
    process.stdout.write(`swap races: reads ${JSON.stringify(reads)}, writes ${JSON.stringify(writes)}, entries written outside ${writtenOutside}\n`);
    // nothing read from outside, nothing written there (files or folders)
    expect(reads.outside).toBe(0);
    expect(readdirSync(join(outside, 'swd'))).toEqual([]);
    expect(readdirSync(outside).sort()).toEqual(['sw', 'swd']);
    // and the race was real: some operations worked, some met the link
    expect(reads.inside + reads.refused + reads.failed).toBe(2 * rounds);
    expect(writes.inside + writes.refused + writes.failed).toBe(2 * rounds);
    expect(reads.inside).toBeGreaterThan(0);
    expect(writes.inside).toBeGreaterThan(0);
  });
});
