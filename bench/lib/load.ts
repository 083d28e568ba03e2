/**
 * A fixed CPU load beside a scenario (`--load-cores N`): N child processes that each keep one core busy, as other work
 * does on a shared worker host. Each checks every 100 ms that the bench still runs and exits when it is gone, so a
 * killed bench leaves no spinning process behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

const SPIN = `const parent = Number(process.argv[1]);
for (;;) {
  const until = Date.now() + 100;
  while (Date.now() < until);
  try { process.kill(parent, 0); } catch { process.exit(0); }
}`;

export interface CpuLoad {
  pids: number[];
  stop(): Promise<void>;
}

/** Starts `cores` busy processes (none for 0). */
export function startCpuLoad(cores: number): CpuLoad {
  const children: ChildProcess[] = [];
  for (let i = 0; i < cores; i++) {
    children.push(spawn(process.execPath, ['-e', SPIN, String(process.pid)], { stdio: 'ignore' }));
  }
  return {
    pids: children.map((c) => c.pid!).filter(Boolean),
    async stop() {
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = once(child, 'exit');
          child.kill('SIGKILL');
          await exited;
        }),
      );
    },
  };
}

/** The label of a pass under `cores` busy cores: '' unloaded, ` [1 busy core]`, ` [2 busy cores]`. */
export function loadLabel(cores: number): string {
  return cores === 0 ? '' : ` [${cores} busy core${cores === 1 ? '' : 's'}]`;
}
