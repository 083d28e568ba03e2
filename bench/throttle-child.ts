// A per-connection rate-limited TCP proxy to MinIO in its own process (BENCH_THROTTLE_TARGET, BENCH_THROTTLE_BPS):
// with it, one S3 connection moves at most that many bytes per second, like a connection to a distant object store,
// so the benefit of parallel transfers shows. Prints `THROTTLE_READY <url>`.
import { startThrottleProxy } from '../test/harness/throttle-proxy';

void (async () => {
  const target = process.env.BENCH_THROTTLE_TARGET;
  const bytesPerSecond = Number(process.env.BENCH_THROTTLE_BPS);
  if (!target || !(bytesPerSecond > 0))
    throw new Error('set BENCH_THROTTLE_TARGET (http://host:port) and BENCH_THROTTLE_BPS (bytes per second per connection)');
  const proxy = await startThrottleProxy(target, bytesPerSecond);
  process.stdout.write(`THROTTLE_READY ${proxy.url}\n`);
  process.once('SIGTERM', () => void proxy.close().finally(() => process.exit(0)));
})().catch((err: unknown) => {
  process.stderr.write(`throttle-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
