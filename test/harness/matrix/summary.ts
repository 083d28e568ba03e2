import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where each matrix test file writes its results and the summary goes (git-ignored). */
export const MATRIX_RESULTS_DIR = resolve(__dirname, '..', '..', '..', '.data', 'fault-matrix');

export type CellStatus = 'pass' | 'fail' | 'n/a' | 'not run';

export interface CellResult {
  id: string;
  operation: string;
  step: string;
  boundary: string;
  fault: string;
  status: CellStatus;
  /** Seconds the cell took (run cells). */
  seconds?: number;
  /** Why it failed, or why it does not apply. */
  note?: string;
}

export interface OperationResults {
  operation: string;
  mode: string;
  finishedAt: string;
  cells: CellResult[];
}

/** Writes one operation's results (and a copy under the jest run's data folder, when given). */
export function writeOperationResults(results: OperationResults, runDir?: string): string {
  const file = join(MATRIX_RESULTS_DIR, `${results.operation}.json`);
  mkdirSync(MATRIX_RESULTS_DIR, { recursive: true });
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  if (runDir) {
    mkdirSync(join(runDir, 'fault-matrix'), { recursive: true });
    writeFileSync(join(runDir, 'fault-matrix', `${results.operation}.json`), `${JSON.stringify(results, null, 2)}\n`);
  }
  return file;
}

/** The results of every operation written so far. */
export function readAllResults(dir = MATRIX_RESULTS_DIR): OperationResults[] {
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'summary.json');
  } catch {
    return [];
  }
  return files.sort().map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as OperationResults);
}

/** A plain-text table: one line per cell that ran or does not apply, then totals per operation and overall. */
export function formatSummary(all: OperationResults[], options: { listNa?: boolean } = {}): string {
  const lines: string[] = [];
  const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
  lines.push(`${pad('cell', 58)} ${pad('status', 7)} ${pad('time', 7)} note`);
  const totals = { cells: 0, pass: 0, fail: 0, na: 0, notRun: 0, seconds: 0 };
  const perOperation: string[] = [];
  for (const op of all) {
    const t = { pass: 0, fail: 0, na: 0, notRun: 0, seconds: 0 };
    for (const c of op.cells) {
      totals.cells++;
      if (c.status === 'pass') t.pass++;
      if (c.status === 'fail') t.fail++;
      if (c.status === 'n/a') t.na++;
      if (c.status === 'not run') t.notRun++;
      t.seconds += c.seconds ?? 0;
      if (c.status === 'not run' || (c.status === 'n/a' && !options.listNa)) continue;
      const time = c.seconds === undefined ? '' : `${c.seconds.toFixed(1)}s`;
      lines.push(`${pad(c.id, 58)} ${pad(c.status, 7)} ${pad(time, 7)} ${(c.note ?? '').replace(/\s+/g, ' ').slice(0, 160)}`);
    }
    totals.pass += t.pass;
    totals.fail += t.fail;
    totals.na += t.na;
    totals.notRun += t.notRun;
    totals.seconds += t.seconds;
    const ran = t.pass + t.fail;
    perOperation.push(
      `${pad(op.operation, 16)} ${op.mode.padEnd(6)} ran ${String(ran).padStart(3)}  pass ${String(t.pass).padStart(3)}  fail ${String(t.fail).padStart(3)}  n/a ${String(t.na).padStart(3)}  not run ${String(t.notRun).padStart(3)}  ${t.seconds.toFixed(0)} s (${ran ? (t.seconds / ran).toFixed(1) : '-'} s/cell)`,
    );
  }
  lines.push('', ...perOperation);
  const ran = totals.pass + totals.fail;
  lines.push(
    `${pad('all', 16)} ${''.padEnd(6)} ran ${String(ran).padStart(3)}  pass ${String(totals.pass).padStart(3)}  fail ${String(totals.fail).padStart(3)}  n/a ${String(totals.na).padStart(3)}  not run ${String(totals.notRun).padStart(3)}  ${totals.seconds.toFixed(0)} s (${ran ? (totals.seconds / ran).toFixed(1) : '-'} s/cell); ${totals.cells} cells in the matrix`,
  );
  return lines.join('\n');
}

/** Writes the combined summary JSON next to the per-operation files; returns its path. */
export function writeSummary(all: OperationResults[], dir = MATRIX_RESULTS_DIR): string {
  const file = join(dir, 'summary.json');
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, `${JSON.stringify({ writtenAt: new Date().toISOString(), operations: all }, null, 2)}\n`);
  return file;
}
