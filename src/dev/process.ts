import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync, appendFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a managed process gets to become healthy before start-up fails (ms). */
const DEFAULT_HEALTH_TIMEOUT_MS = 60_000;
/** How long a managed process gets to exit after SIGTERM before SIGKILL (ms). */
const DEFAULT_STOP_GRACE_MS = 5_000;

interface ManagedProcessOptions {
  /** Short name used in messages: `temporal`, `minio`, `emulator`, `worker`. */
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** stdout and stderr of the process are appended here. */
  logFile: string;
  /** Resolves true once the process serves requests; polled every 200 ms. */
  healthy: () => Promise<boolean>;
  healthTimeoutMs?: number;
  /** File the stack's watchdog reads to kill orphans if the caller dies without stopping us. */
  watchdogPidFile?: string;
}

/** A child process started in its own process group, with a health wait and a clean stop. */
export class ManagedProcess {
  private exited: Promise<void>;
  private exitCode: number | null = null;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logFile: string,
    private readonly watchdogPidFile?: string,
  ) {
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : 0);
        done();
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.exitCode === null;
  }

  static async start(options: ManagedProcessOptions): Promise<ManagedProcess> {
    mkdirSync(dirname(options.logFile), { recursive: true });
    const log = createWriteStream(options.logFile, { flags: 'a' });
    await new Promise((ready) => log.once('open', ready));
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true, // own process group: stop() kills the group, and Ctrl-C of the caller does not race us
      stdio: ['ignore', log, log],
    });
    const started = new ManagedProcess(options.name, child, options.logFile, options.watchdogPidFile);
    try {
      await new Promise<void>((ok, fail) => {
        child.once('spawn', ok);
        child.once('error', (err) => fail(new Error(`${options.name}: could not start ${options.command}: ${err.message}`)));
      });
    } finally {
      log.close(); // the child holds its own copy of the descriptor; ours would keep the caller's event loop alive
    }
    if (options.watchdogPidFile) appendFileSync(options.watchdogPidFile, `${child.pid}\n`);
    const timeoutMs = options.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!started.running) {
        throw new Error(`${options.name} exited with code ${started.exitCode} during start-up; see ${options.logFile}:\n${tail(options.logFile)}`);
      }
      if (await options.healthy().catch(() => false)) return started;
      if (Date.now() > deadline) {
        await started.stop();
        throw new Error(`${options.name} was not healthy within ${timeoutMs} ms; see ${options.logFile}:\n${tail(options.logFile)}`);
      }
      await sleep(200);
    }
  }

  /** SIGTERM to the process group, SIGKILL after a grace period; resolves once the process has exited. */
  async stop(graceMs = DEFAULT_STOP_GRACE_MS): Promise<void> {
    if (this.running) {
      signalGroup(this.pid, 'SIGTERM');
      const killed = await Promise.race([this.exited.then(() => true), sleep(graceMs, undefined, { ref: false }).then(() => false)]);
      if (!killed) signalGroup(this.pid, 'SIGKILL');
      await this.exited;
    }
    if (this.watchdogPidFile) removePid(this.watchdogPidFile, this.pid);
  }

  /** SIGKILL without grace, as a crash would (chaos tests). */
  async kill(): Promise<void> {
    if (this.running) signalGroup(this.pid, 'SIGKILL');
    await this.exited;
    if (this.watchdogPidFile) removePid(this.watchdogPidFile, this.pid);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

function removePid(file: string, pid: number): void {
  try {
    const rest = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line && line !== String(pid));
    writeFileSync(file, rest.map((line) => `${line}\n`).join(''));
  } catch {
    /* file gone: the stack stopped */
  }
}

/**
 * The log's last lines, preceded by the first line that says why a process died when that line is further up: a Go
 * panic (`panic: …`, `fatal error: …`) prints its reason first and a goroutine dump after it, so the last lines alone
 * show only stack frames (and a port clash in the reason would go unrecognised by `isPortClash`).
 */
export function logExcerpt(text: string, lines = 15): string {
  const all = text.trimEnd().split('\n');
  const last = all.slice(-lines);
  const reasonAt = all.findIndex((line) => /^(panic|fatal error): /.test(line));
  if (reasonAt < 0 || reasonAt >= all.length - lines) return last.join('\n');
  return [...all.slice(reasonAt, reasonAt + 2), '\t…', ...last].join('\n');
}

function tail(file: string): string {
  try {
    return logExcerpt(readFileSync(file, 'utf8'));
  } catch {
    return '(no log)';
  }
}

/**
 * Starts a detached watchdog that kills every pid listed in `pidFile` (one per line, each its own process group)
 * once `parentPid` is gone, then exits. It also exits when `pidFile` is removed (a clean stop). This is what keeps
 * a crashed caller (SIGKILL, OOM) from leaving Temporal and MinIO running.
 */
export function startWatchdog(parentPid: number, pidFile: string): ChildProcess {
  writeFileSync(pidFile, '');
  const code = `
    const fs = require('fs');
    const [parent, file] = process.argv.slice(1);
    const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
    const pids = () => { try { return fs.readFileSync(file, 'utf8').split('\\n').filter(Boolean).map(Number); } catch { return null; } };
    const kill = (sig) => { for (const pid of pids() || []) { try { process.kill(-pid, sig); } catch { try { process.kill(pid, sig); } catch {} } } };
    setInterval(() => {
      if (pids() === null) process.exit(0);
      if (!alive(Number(parent))) { kill('SIGTERM'); setTimeout(() => { kill('SIGKILL'); try { fs.rmSync(file); } catch {} process.exit(0); }, 3000); }
    }, 500);`;
  const child = spawn(process.execPath, ['-e', code, String(parentPid), pidFile], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

/** Ends the watchdog of a cleanly stopped stack by removing its pid file. */
export function stopWatchdog(pidFile: string): void {
  rmSync(pidFile, { force: true });
}
