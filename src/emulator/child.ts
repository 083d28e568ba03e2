/**
 * The emulator in a process of its own (the dev stack's): {@link EmulatorOptions} as JSON in
 * `SAPI_EMULATOR_OPTIONS`; prints `EMULATOR_READY {"url":…,"importUrl":…}` once it listens; SIGTERM closes it
 * (unfinished jobs resume on the next start on the same `dataDir`). A crash here costs the stack nothing but a restart.
 */
import { EMULATOR_OPTIONS_ENV, createEmulator, type EmulatorOptions } from './index';

async function main(): Promise<void> {
  const raw = process.env[EMULATOR_OPTIONS_ENV];
  if (!raw) throw new Error(`${EMULATOR_OPTIONS_ENV} is not set: pass the EmulatorOptions as JSON`);
  const emulator = await createEmulator(JSON.parse(raw) as EmulatorOptions);
  process.stdout.write(`EMULATOR_READY ${JSON.stringify({ url: emulator.url, importUrl: emulator.importUrl })}\n`);
  process.once('SIGTERM', () => {
    void emulator.close().finally(() => process.exit(0));
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`emulator: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
