/**
 * URL and query-string helpers for request building. Pure module (uses only the global `URL`, which Temporal's
 * workflow sandbox provides).
 */

/**
 * Encodes a query key or value as the reference does (PHP's `urlencode`, `http_build_query`'s default): letters,
 * digits and `-_.` stay, space → `+`, everything else `%XX` of its UTF-8 bytes (so also `~!*'()`).
 */
export function encodeQueryComponent(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

function decodeQueryComponent(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

/**
 * Flattens params to ordered `[key, value]` pairs the way PHP's `http_build_query` does: nested objects and arrays
 * become `key[sub]`, `true` → `"1"`, `false` → `"0"`, `null`/`undefined` are left out.
 */
export function toQueryPairs(params: Record<string, unknown>, prefix?: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [rawKey, value] of Object.entries(params)) {
    const key = prefix === undefined ? rawKey : `${prefix}[${rawKey}]`;
    if (value === null || value === undefined) continue;
    if (typeof value === 'object') {
      const nested = Array.isArray(value) ? Object.fromEntries(value.map((v, i) => [String(i), v])) : value;
      pairs.push(...toQueryPairs(nested as Record<string, unknown>, key));
    } else if (typeof value === 'boolean') {
      pairs.push([key, value ? '1' : '0']);
    } else {
      pairs.push([key, String(value)]);
    }
  }
  return pairs;
}

/** Encodes pairs as `a=1&b=2` (also the `application/x-www-form-urlencoded` body). */
export function encodePairs(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${encodeQueryComponent(k)}=${encodeQueryComponent(v)}`).join('&');
}

/**
 * Sets query params on a URL. Params already in the URL's query keep their position and get the new value
 * (a param of the same name replaces instead of duplicating); new ones are appended in order. The fragment is
 * dropped (never sent over HTTP).
 */
export function setQueryParams(url: string, pairs: Array<[string, string]>): string {
  const withoutFragment = url.split('#')[0];
  const q = withoutFragment.indexOf('?');
  const base = q === -1 ? withoutFragment : withoutFragment.slice(0, q);
  const existing = q === -1 ? '' : withoutFragment.slice(q + 1);
  if (pairs.length === 0) return existing === '' ? base : `${base}?${existing}`;

  const merged: Array<[string, string]> = [];
  for (const part of existing.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decodeQueryComponent(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? '' : decodeQueryComponent(part.slice(eq + 1));
    const index = merged.findIndex(([k]) => k === key);
    if (index === -1) merged.push([key, value]);
    else merged[index] = [key, value];
  }
  for (const [key, value] of pairs) {
    const index = merged.findIndex(([k]) => k === key);
    if (index === -1) merged.push([key, value]);
    else merged[index] = [key, value];
  }
  return merged.length === 0 ? base : `${base}?${encodePairs(merged)}`;
}

/**
 * Resolves an endpoint against the base URL as RFC 3986 says (`users` against `http://h/api/` →
 * `http://h/api/users`; against `http://h/api` → `http://h/users`). An absolute URL is returned as it is.
 */
export function resolveEndpoint(baseUrl: string, endpoint: string): string {
  return new URL(endpoint, baseUrl).toString();
}

/** True when `value` parses as an absolute `http:`/`https:` URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '';
  } catch {
    return false;
  }
}
