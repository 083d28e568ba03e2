// A caller that starts a dev stack, prints its pids and then waits to be killed (for the orphan test).
import { startDevStack } from '../../src/dev/stack';

void (async () => {
  const stack = await startDevStack({ dataDir: process.argv[2], headless: true });
  process.stdout.write(`PIDS ${stack.temporal.process.pid} ${stack.minio.process.pid}\n`);
  setInterval(() => undefined, 60_000);
})();
