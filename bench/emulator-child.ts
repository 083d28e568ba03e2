// The Storage API emulator in its own process, so the bench can read its RSS and CPU apart from the worker's and
// its own. Options (EmulatorOptions as JSON) come from BENCH_EMULATOR_OPTIONS; prints one line
// `EMULATOR_READY {"url":…,"importUrl":…}` once listening; SIGTERM closes it (jobs resume on the next start).
import { createEmulator, type EmulatorOptions } from '../src/emulator';

void (async () => {
  const raw = process.env.BENCH_EMULATOR_OPTIONS;
  if (!raw) throw new Error('BENCH_EMULATOR_OPTIONS is not set: pass the EmulatorOptions as JSON');
  const emulator = await createEmulator(JSON.parse(raw) as EmulatorOptions);
  process.stdout.write(`EMULATOR_READY ${JSON.stringify({ url: emulator.url, importUrl: emulator.importUrl })}\n`);
  process.once('SIGTERM', () => {
    void emulator.close().finally(() => process.exit(0));
  });
})().catch((err: unknown) => {
  process.stderr.write(`emulator-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
