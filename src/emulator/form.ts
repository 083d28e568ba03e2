/**
 * Request parameter decoding: PHP-style nested form keys (`tags[]=a`, `tags[0]=a`, `whereFilters[0][values][]=x`)
 * and the loose scalars the real clients send (`1`, `"true"`, `0`...).
 */

type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormObject = { [key: string]: FormValue };

/** Splits `a[b][]` into `['a', 'b', '']`. A key without brackets is one segment. */
function keySegments(key: string): string[] {
  const open = key.indexOf('[');
  if (open <= 0 || !key.endsWith(']')) return [key];
  const segments = [key.slice(0, open)];
  const rest = key.slice(open);
  const re = /\[([^\]]*)\]/g;
  let match: RegExpExecArray | null;
  while ((match = re.exec(rest)) !== null) segments.push(match[1] ?? '');
  return segments;
}

function assign(target: FormObject | FormValue[], segments: string[], value: string): void {
  const [head, ...tail] = segments as [string, ...string[]];
  if (Array.isArray(target)) {
    const index = head === '' ? target.length : Number(head);
    if (tail.length === 0) {
      target[index] = value;
      return;
    }
    const child = target[index] ?? (tail[0] === '' || /^\d+$/.test(tail[0]!) ? [] : {});
    target[index] = child;
    if (typeof child !== 'string') assign(child, tail, value);
    return;
  }
  if (tail.length === 0) {
    target[head] = value;
    return;
  }
  let child = target[head];
  if (child === undefined || typeof child === 'string') {
    child = tail[0] === '' || /^\d+$/.test(tail[0]!) ? [] : {};
    target[head] = child;
  }
  assign(child, tail, value);
}

/** Decodes name/value pairs into a nested object; a repeated plain key becomes an array. */
export function decodePairs(pairs: Iterable<[string, string]>): FormObject {
  const out: FormObject = {};
  for (const [key, value] of pairs) {
    const segments = keySegments(key);
    if (segments.length === 1 && out[key] !== undefined) {
      const prev = out[key]!;
      out[key] = Array.isArray(prev) ? [...prev, value] : [prev as FormValue, value];
      continue;
    }
    assign(out, segments, value);
  }
  return compactArrays(out) as FormObject;
}

/** Sparse arrays from `tags[3]=x` become dense. */
function compactArrays(value: FormValue): FormValue {
  if (Array.isArray(value)) return value.filter((v) => v !== undefined).map(compactArrays);
  if (typeof value === 'object') {
    const out: FormObject = {};
    for (const [k, v] of Object.entries(value)) out[k] = compactArrays(v);
    return out;
  }
  return value;
}

export function decodeQueryString(query: string): FormObject {
  return decodePairs(new URLSearchParams(query));
}

/** Booleans as the clients send them: true/1/"1"/"true" and false/0/"0"/"false"/"" (any case); anything else is `undefined`. */
export function parseBool(value: unknown): boolean | undefined {
  if (typeof value === 'string') value = value.trim().toLowerCase();
  if (value === true || value === 1 || value === '1' || value === 'true') return true;
  if (value === false || value === 0 || value === '0' || value === 'false' || value === '') return false;
  return undefined;
}

export function parseIntParam(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

/** A list parameter: an array, a single scalar, or absent. */
export function parseList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.map((v) => String(v));
  if (typeof value === 'object') return Object.values(value as object).map((v) => String(v));
  return [String(value)];
}

/** Plain string parameter; numbers are stringified, objects rejected as `undefined`. */
export function parseString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}
