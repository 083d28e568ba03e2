/**
 * Parses `forceStop.time`: a number of seconds, or a relative duration string as PHP's `strtotime(..., 0)` reads
 * it (`"1 hour"`, `"30 seconds"`, `"+2 days 3 hours"`, `"1 week"`). Pure module.
 */

const UNIT_SECONDS: Record<string, number> = {
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  s: 1,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  m: 60,
  hour: 3600,
  hours: 3600,
  h: 3600,
  day: 86_400,
  days: 86_400,
  d: 86_400,
  week: 604_800,
  weeks: 604_800,
  w: 604_800,
  fortnight: 1_209_600,
  fortnights: 1_209_600,
  // strtotime counts calendar months/years from the epoch: January 1970 has 31 days, 1970 has 365.
  month: 2_678_400,
  months: 2_678_400,
  year: 31_536_000,
  years: 31_536_000,
};

/**
 * Returns the duration in milliseconds, or `null` when the value cannot be read. Numbers and digit-only strings
 * are seconds.
 */
export function parseDurationMs(value: number | string): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : null;
  const text = value.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const re = /([+-]?)\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*/gy;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null;
  while ((match = re.exec(text)) !== null) {
    const seconds = UNIT_SECONDS[match[3]];
    if (seconds === undefined) return null;
    total += (match[1] === '-' ? -1 : 1) * Number(match[2]) * seconds;
    consumed = re.lastIndex;
  }
  if (consumed !== text.length || consumed === 0 || total < 0) return null;
  return total * 1000;
}
