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
