import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '..', '..');

/** Starts `node <script.ts> ...args` from the TypeScript sources (see ts-register.js), output piped to the test. */
export function spawnTs(script: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, script), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** What a finished command printed and its exit code. */
export interface CommandOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the `sapi-temporal` CLI from the sources to its end (as `bin/sapi-temporal` does). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CommandOutcome> {
  const child = spawnTs('bin/sapi-temporal.js', ['--', ...args], env);
  const outcome = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (outcome.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (outcome.stderr += chunk.toString()));
  return new Promise((ok, fail) => {
    child.once('error', fail);
    child.once('close', (code) => ok({ code, ...outcome }));
  });
}

/** Resolves with the first line of the child's stdout that matches, or rejects when it exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  return new Promise((ok, fail) => {
    let buffered = '';
    let stderr = '';
    const timer = setTimeout(() => fail(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        const match = line.match(pattern);
        if (match) {
          clearTimeout(timer);
          ok(match);
          return;
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`process exited with ${code} before printing ${pattern}; stderr: ${stderr}`));
    });
  });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `predicate` every 100 ms until it holds or `timeoutMs` passes (then throws `message`). */
export async function eventually(predicate: () => boolean | Promise<boolean>, timeoutMs: number, message: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((r) => setTimeout(r, 100));
  }
}
