/**
 * `Retry-After` parsing, shared by the Storage API client and the extractor's page fetcher. Pure (the clock is
 * passed in).
 */

/**
 * Reads a `Retry-After` header: delay-seconds (`"120"`, also decimals) or an HTTP date. Returns milliseconds to
 * wait (0 for a date in the past), or undefined when absent or unreadable. HTTP dates always name a weekday or a
 * month, so a value without letters that is not a number is refused rather than guessed at by `Date.parse`.
 */
export function parseRetryAfterMs(header: string | readonly string[] | null | undefined, nowMs: number = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : (header as string | null | undefined);
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
