/** Small pure numeric helpers of the benchmark: medians, percentiles, ratios, throughput. */

/** Bytes in one MB as throughput and memory are reported (decimal, like the targets: "300 MB", "MB/s"). */
export const MB = 1_000_000;
/** Bytes in one MiB (sizes of generated files). */
export const MIB = 1024 * 1024;

/** Median of the values (mean of the two middle ones for an even count); undefined for none. */
export function median(values: readonly number[]): number | undefined {
  return percentile(values, 50);
}

/**
 * Percentile `p` (0–100) with linear interpolation between closest ranks (the "R-7" / spreadsheet definition):
 * p50 of [1, 2, 3, 4] is 2.5, p100 is the maximum. Undefined for an empty list; NaN values are ignored.
 */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

/** `ours / baseline`; undefined when either is missing or the baseline is 0. */
export function ratio(ours: number | undefined, baseline: number | undefined): number | undefined {
  if (ours === undefined || baseline === undefined || !Number.isFinite(ours) || !Number.isFinite(baseline) || baseline === 0) return undefined;
  return ours / baseline;
}

/** Throughput in MB/s (decimal) of `bytes` moved in `ms`; undefined for a non-positive duration. */
export function mbPerSecond(bytes: number, ms: number): number | undefined {
  return ms > 0 ? bytes / MB / (ms / 1000) : undefined;
}

/** Rounds to `digits` decimals (undefined stays undefined). */
export function round(value: number | undefined, digits = 2): number | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A target such as "≥ 0.9" or "≤ 300". */
export interface Target {
  op: '>=' | '<=';
  value: number;
}

/** Whether `value` meets `target`; undefined when there is no value to judge. */
export function meets(value: number | undefined, target: Target): boolean | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  return target.op === '>=' ? value >= target.value : value <= target.value;
}

/** Least-squares slope of y over x (units of y per unit of x); undefined for fewer than two distinct x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number | undefined {
  if (points.length < 2) return undefined;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? undefined : num / den;
}
