import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { repoRoot, waitForLine } from '../../harness/processes';

/** Requests of the run that must not recompile the parser: ten times what makes it hot without the flags. */
const REQUESTS = 1_000;

/** The test child with V8's trace of each WebAssembly function it compiles (`using Liftoff` / `using TurboFan`). */
function tracedChild(mode: 'start-worker' | 'plain', requests: number): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--trace-wasm-compilation-times',
      '-r',
      resolve(repoRoot, 'scripts', 'ts-register.js'),
      resolve(repoRoot, 'test/harness/wasm-tiering-child.ts'),
      mode,
      String(requests),
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

function outcome(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((ok, fail) => {
    child.once('error', fail);
    child.once('close', (code) => ok({ code, stdout, stderr }));
  });
}

describe("the worker process keeps undici's HTTP parser on V8's baseline compiler", () => {
  it('without startWorker, the requests make V8 recompile the parser with TurboFan (what the test would miss)', async () => {
    // requests until the recompile shows: this process does as much work per request as the next test's
    const child = tracedChild('plain', 100 * REQUESTS);
    try {
      // the optimizing compile of the parser's main function, which holds tens of MB of compiler memory at once (≥ 10
      // MB: 8 digits; its small helpers are recompiled too, with ~46 KB)
      const [, maxBytes] = await waitForLine(child, /^Compiled function .* using TurboFan, took \d+ ms and (\d{8,}) \/ \d+ max\/total bytes/);
      expect(Number(maxBytes)).toBeGreaterThan(10_000_000);
    } finally {
      child.kill();
    }
  });

  it('after startWorker, the same requests leave every WebAssembly function on Liftoff (no ~30 MB optimizing compile)', async () => {
    const { code, stdout, stderr } = await outcome(tracedChild('start-worker', REQUESTS));
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('startWorker: TEMPORAL_ADDRESS 127.0.0.1:1'); // it ran, and failed at the connection
    expect(stdout).toContain(`requests ${REQUESTS}\n`);
    expect(stdout).toMatch(/using Liftoff/); // the trace works in this run
    expect(stdout).not.toMatch(/using TurboFan/);
  });
});
