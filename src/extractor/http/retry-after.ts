/**
 * `Retry-After` parsing and backoff delays for the page fetcher. Pure (clock and randomness passed in).
 */

/**
 * Reads a `Retry-After` header: delta seconds (`"120"`) or an HTTP date. Returns milliseconds to wait (0 for a date
 * in the past), or `null` when absent or unreadable.
 */
export function parseRetryAfterMs(header: string | string[] | undefined | null, nowMs: number): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === null) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/**
 * Capped exponential backoff with "equal jitter": the n-th retry waits between half and all of
 * `min(maxDelayMs, baseDelayMs × 2^(n-1))`.
 */
export function backoffDelayMs(retry: number, baseDelayMs: number, maxDelayMs: number, random: () => number): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

const SECRET_PARAM = /(key|token|secret|password|passwd|signature|sig|auth|credential|session)/i;

/** The URL with the values of secret-looking query params replaced by `***` (for error messages and logs). */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq === -1) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=***` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}
