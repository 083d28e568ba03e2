// A process that makes HTTP requests through undici (its parser is llhttp compiled to WebAssembly), run by
// test/unit/cli/worker-v8-flags.test.ts with `--trace-wasm-compilation-times`, so V8 prints a line for each function it
// compiles and with which compiler:
//   node --trace-wasm-compilation-times -r ./scripts/ts-register.js test/harness/wasm-tiering-child.ts <mode> <requests>
// mode `start-worker`: `startWorker` first (against a Temporal address that refuses: it rejects, having configured
// the process), then the requests; mode `plain`: the requests alone. Prints `requests <n>` every 100 and at the end.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { loadSettings } from '../../src/config';
import { startWorker } from '../../src/worker';

/** Headers of each response: enough parsing per request that V8 finds the parser hot within ~100 requests. */
const HEADERS = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x-header-${i}`, 'v'.repeat(40)]));

async function main(): Promise<void> {
  const [mode, count] = [process.argv[2], Number(process.argv[3])];
  if (mode === 'start-worker') {
    const settings = loadSettings({ TEMPORAL_ADDRESS: '127.0.0.1:1', SAPI_URL: 'http://127.0.0.1:1', SAPI_TOKEN: 'unused' });
    const started = await startWorker({ settings, worker: { workflowBundle: { code: '' } }, checkConnections: false, stopSignals: false }).then(
      () => 'started',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    process.stdout.write(`startWorker: ${started}\n`);
  } else if (mode !== 'plain') {
    throw new Error(`mode must be start-worker or plain, got ${mode}`);
  }
  const server: Server = createServer((_req, res) => res.writeHead(200, HEADERS).end('ok'));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  for (let i = 1; i <= count; i++) {
    const response = await request(url);
    await response.body.dump();
    if (i % 100 === 0 || i === count) process.stdout.write(`requests ${i}\n`);
  }
  server.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`wasm-tiering-child: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
