import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './processes';

/** Where the tools installer puts the official Python client (kbcstorage) and its dependencies (SAPI_TOOLS_DIR moves the tools folder). */
export const PYTHONPATH = join(process.env.SAPI_TOOLS_DIR ?? join(repoRoot, '.tools'), 'python');
/** The Python interpreter: `SAPI_PYTHON` or `python3`. */
export const PYTHON = process.env.SAPI_PYTHON ?? 'python3';

/** A check script of `test/python/` by name, e.g. `kbc_client_check.py`. */
export const pythonCheck = (name: string): string => join(repoRoot, 'test', 'python', name);

/** Runs the interpreter with `args` and `childEnv`, collecting its output; killed after 110 s. */
export function runPython(args: string[], childEnv: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(PYTHON, args, { env: childEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 110_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolveRun({ status, stdout, stderr });
    });
  });
}
