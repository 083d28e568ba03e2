/** Figures of a bench run and their text table (pure). */
import { meets, ratio as ratioOf, round, type Target } from './stats';

/** One reported figure: our number, the baseline's from the same run, their ratio, and a target when there is one. */
export interface Figure {
  scenario: string;
  metric: string;
  unit: string;
  ours?: number;
  baseline?: number;
  /** `ours / baseline` (computed by {@link figure} unless given). */
  ratio?: number;
  /** What the target applies to: the ratio or our absolute number. */
  target?: Target & { on: 'ratio' | 'ours' };
  met?: boolean;
  note?: string;
  /** The issue target this figure is judged for (`issue 41 target 2`): listed again in the summary of targets. */
  goal?: string;
}

/** Builds a figure: computes the ratio (unless given) and whether the target is met. */
export function figure(input: Omit<Figure, 'met'>): Figure {
  const ratio = input.ratio ?? ratioOf(input.ours, input.baseline);
  const judged = input.target ? meets(input.target.on === 'ratio' ? ratio : input.ours, input.target) : undefined;
  return { ...input, ours: round(input.ours), baseline: round(input.baseline), ratio: round(ratio, 3), met: judged };
}

/** The target as text: `ratio ≥ 0.9`, `≤ 300 MB`. */
export function formatTarget(target: Figure['target'], unit: string): string {
  if (!target) return '';
  const op = target.op === '>=' ? '≥' : '≤';
  return target.on === 'ratio' ? `ratio ${op} ${target.value}` : `${op} ${target.value} ${unit}`.trim();
}

/** A fixed-width text table of the figures, one line each, with a verdict column (MET / MISSED / blank). */
export function formatTable(figures: readonly Figure[]): string {
  const header = ['scenario', 'metric', 'ours', 'baseline', 'ratio', 'target', 'verdict', 'note'];
  const rows = figures.map((f) => [
    f.scenario,
    f.unit ? `${f.metric} (${f.unit})` : f.metric,
    show(f.ours),
    show(f.baseline),
    f.ratio === undefined ? '' : `${f.ratio.toFixed(2)}×`,
    formatTarget(f.target, f.unit),
    f.met === undefined ? (f.target ? 'n/a' : '') : f.met ? 'MET' : 'MISSED',
    f.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}

/** An issue's target as the summary lists it: its name (the figures' `goal`), what it asks, the scenarios measuring it. */
export interface Goal {
  name: string;
  asks: string;
  scenarios: readonly string[];
}

/** The targets of issue 41, each measured by the figures whose `goal` names it. */
export const ISSUE_41_GOALS: readonly Goal[] = [
  { name: 'issue 41 target 1', asks: 'small imports: worker CPU ≤ 1.3× the SDK floor, rate ≥ 0.9× the floor, ≤ 2 activity tasks, 0 timers, ≤ 30 events', scenarios: ['concurrency'] },
  { name: 'issue 41 target 2', asks: 'transfers: CPU per GB ≤ 1.2× mc, throughput ≥ 0.9× mc, upload and download, unloaded and loaded (--load-cores 0,1)', scenarios: ['upload', 'download'] },
  { name: 'issue 41 target 3', asks: 'long jobs: ≤ 30 history events and ≤ 10 billed actions per hour after the first minutes, end noticed within max(1 s, 25 %)', scenarios: ['long-job'] },
  { name: 'issue 41 target 4', asks: 'idle worker ≤ the SDK floor + 15 MB', scenarios: ['idle'] },
];

/**
 * The summary of `goals`: per goal a verdict line (MET when every figure judged for it met its target, MISSED when
 * one missed, NOT MEASURED when this run had none: its scenarios were not run, or failed), then its figures.
 */
export function formatGoals(figures: readonly Figure[], goals: readonly Goal[]): string {
  const lines: string[] = [];
  for (const goal of goals) {
    const judged = figures.filter((f) => f.goal === goal.name);
    // a pass of one of its scenarios that failed (e.g. the loaded upload) leaves the target unjudged there
    const failed = figures.filter((f) => goal.scenarios.includes(f.scenario) && f.metric.startsWith('FAILED'));
    const verdict =
      judged.length === 0 && failed.length === 0
        ? 'NOT MEASURED'
        : judged.some((f) => f.met === false)
          ? 'MISSED'
          : judged.length > 0 && failed.length === 0 && judged.every((f) => f.met === true)
            ? 'MET'
            : 'INCOMPLETE';
    const why =
      judged.length === 0 && failed.length === 0 ? ` (run ${goal.scenarios.join(', ')})` : verdict === 'INCOMPLETE' ? (failed.length ? ' (a pass failed)' : ' (a figure has no value)') : '';
    lines.push(`${goal.name}: ${verdict}${why} — ${goal.asks}`);
    for (const f of judged) {
      const value = f.target?.on === 'ratio' ? `${f.ratio === undefined ? '?' : `${f.ratio.toFixed(2)}×`} (${show(f.ours)} vs ${show(f.baseline)} ${f.unit})` : `${show(f.ours) || '?'} ${f.unit}`.trim();
      lines.push(`  ${f.met === undefined ? 'n/a   ' : f.met ? 'MET   ' : 'MISSED'} ${f.scenario}: ${f.metric}: ${value}, target ${formatTarget(f.target, f.unit)}`);
    }
    for (const f of failed) lines.push(`  FAILED ${f.scenario}: ${f.metric}: ${f.note ?? ''}`.trimEnd());
  }
  return lines.join('\n');
}

function show(value: number | undefined): string {
  if (value === undefined) return '';
  return Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** `2024-05-01T10-20-30Z`: a file-name-safe timestamp. */
export function fileTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
}

/** The error with its cause chain (a workflow failure's activity failure and application failure), one per line. */
export function describeError(err: unknown): string {
  const lines: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 6; depth++) {
    if (current instanceof Error) {
      const type = (current as { type?: unknown }).type;
      lines.push(`${depth ? 'caused by: ' : ''}${current.name}${typeof type === 'string' ? ` [${type}]` : ''}: ${current.message}`);
      current = (current as { cause?: unknown }).cause;
    } else {
      lines.push(`${depth ? 'caused by: ' : ''}${String(current)}`);
      break;
    }
  }
  const stack = err instanceof Error ? err.stack?.split('\n').slice(1, 4).join('\n') : undefined;
  return stack ? `${lines.join('\n')}\n${stack}` : lines.join('\n');
}
