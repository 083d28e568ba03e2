import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { DEFAULT_EMULATOR_HOST, EMULATOR_OPTIONS_ENV, IMPORTER_PREFIX, type EmulatorOptions } from '../emulator/options';
import { freePort, retryOnPortClash } from './ports';
import { ManagedProcess } from './process';

/** Pause before an emulator that died is started again (ms). */
const EMULATOR_RESTART_DELAY_MS = 1_000;
/** Crashes in a row (each within a minute of its start) after which the emulator is left down. */
const EMULATOR_MAX_QUICK_RESTARTS = 5;

interface EmulatorProcessOptions {
  /** The emulator's options; `port` 0 or absent: a free one, kept across restarts. */
  emulator: EmulatorOptions;
  /** The child's output, and a line for every restart. */
  logFile: string;
  watchdogPidFile?: string;
  /** Told of every restart (default: a line on stderr). */
  onRestart?: (message: string) => void;
}

export interface EmulatorProcess {
  url: string;
  importUrl: string;
  /** The running child's pid (a new one after a restart). */
  readonly pid: number;
  /** Restarts so far. */
  readonly restarts: number;
  /** Stops the child (SIGTERM, then SIGKILL) and restarts no more. */
  stop(): Promise<void>;
}

/** `node <child>` for the compiled module, or through `scripts/ts-register.js` from the TypeScript sources. */
function childArgs(): string[] {
  const compiled = join(__dirname, '..', 'emulator', 'child.js');
  if (existsSync(compiled)) return [compiled];
  return ['-r', join(__dirname, '..', '..', 'scripts', 'ts-register.js'), join(__dirname, '..', 'emulator', 'child.ts')];
}

/**
 * The emulator in a child process: one bad job (a runaway allocation in DuckDB, the OOM killer) ends that process,
 * not the caller's (the dev stack with Temporal, MinIO and the worker). When it dies, it is started again on the same
 * port and data folder (unfinished jobs resume), and the restart is logged, unless it keeps dying right after start.
 */
export async function startEmulatorProcess(options: EmulatorProcessOptions): Promise<EmulatorProcess> {
  const host = options.emulator.host ?? DEFAULT_EMULATOR_HOST;
  const say = (message: string): void => {
    appendFileSync(options.logFile, `[${new Date().toISOString()}] ${message}\n`);
    (options.onRestart ?? ((m: string) => process.stderr.write(`${m}\n`)))(message);
  };
  const start = (port: number) =>
    ManagedProcess.start({
      name: 'emulator',
      command: process.execPath,
      args: childArgs(),
      // glibc's malloc as the worker's wrapper sets it (bin/sapi-temporal): two arenas and a fixed mmap threshold, so
      // DuckDB's and Node's threads do not each keep an arena of freed memory (peak RSS of a wide load grew with how
      // many threads contended, past 1 GB on a busy machine); a value of the caller's wins
      env: {
        MALLOC_ARENA_MAX: '2',
        MALLOC_MMAP_THRESHOLD_: '131072',
        ...process.env,
        [EMULATOR_OPTIONS_ENV]: JSON.stringify({ ...options.emulator, port }),
      },
      logFile: options.logFile,
      watchdogPidFile: options.watchdogPidFile,
      healthy: async () => {
        const res = await request(`http://${host.includes(':') ? `[${host}]` : host}:${port}/v2/storage`, {
          headersTimeout: 1000,
          bodyTimeout: 1000,
          reset: true,
        });
        await res.body.dump();
        return res.statusCode === 200;
      },
    });
  let port = options.emulator.port || 0;
  let child = await retryOnPortClash(async () => {
    port = options.emulator.port || (await freePort(host));
    return start(port);
  });
  const base = (options.emulator.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/$/, '');
  let stopping = false;
  let restarts = 0;
  let quick = 0;
  const watch = (running: ManagedProcess): void => {
    const startedAt = Date.now();
    running.child.once('exit', (code, signal) => {
      if (stopping) return;
      quick = Date.now() - startedAt < 60_000 ? quick + 1 : 1;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (quick > EMULATOR_MAX_QUICK_RESTARTS) {
        say(`emulator (pid ${running.pid}) exited with ${how}, ${quick} times in a row within a minute of its start: left down; see ${options.logFile}`);
        return;
      }
      say(`emulator (pid ${running.pid}) exited with ${how}; restarting it on ${base} (same data folder, unfinished jobs resume)`);
      void (async () => {
        await sleep(EMULATOR_RESTART_DELAY_MS);
        if (stopping) return;
        try {
          child = await start(port);
          restarts += 1;
          say(`emulator restarted (pid ${child.pid}, restart ${restarts})`);
          if (stopping) await child.stop();
          else watch(child);
        } catch (err) {
          say(`emulator could not be restarted: ${(err as Error).message}`);
        }
      })();
    });
  };
  watch(child);
  return {
    url: base,
    importUrl: `${base}${IMPORTER_PREFIX}`,
    get pid() {
      return child.pid;
    },
    get restarts() {
      return restarts;
    },
    stop: async () => {
      stopping = true;
      await child.stop();
    },
  };
}
