/**
 * Request parameter decoding: PHP-style nested form keys (`tags[]=a`, `tags[0]=a`, `whereFilters[0][values][]=x`)
 * and the loose scalars the real clients send (`1`, `"true"`, `0`...).
 */

import { ApiError } from './errors';

/** Most name/value pairs in one request's query string or body (PHP, the service's runtime, stops at 1,000 by default). */
export const MAX_FORM_PAIRS = 20_000;
/** Most bracket levels in one name: `a[b][c]` is 3 (PHP's `max_input_nesting_level` is 64). */
export const MAX_FORM_DEPTH = 16;
/** Largest explicit list index, `tags[<index>]`: a sparse list is made dense, so its length is what costs. */
export const MAX_FORM_INDEX = MAX_FORM_PAIRS;
/** Names that would reach an object's prototype instead of a parameter. */
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

const refuse = (message: string): ApiError => new ApiError(400, 'storage.validation', message);

type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormObject = { [key: string]: FormValue };

/**
 * Splits `a[b][]` into `['a', 'b', '']`. A key without brackets is one segment. Refuses (400) more than
 * {@link MAX_FORM_DEPTH} levels, a list index above {@link MAX_FORM_INDEX} and `__proto__`-like names.
 */
function keySegments(key: string): string[] {
  const open = key.indexOf('[');
  const segments = [open <= 0 || !key.endsWith(']') ? key : key.slice(0, open)];
  if (segments[0] !== key) {
    const rest = key.slice(open);
    const re = /\[([^\]]*)\]/g;
    let match: RegExpExecArray | null;
    while ((match = re.exec(rest)) !== null) {
      if (segments.length > MAX_FORM_DEPTH) throw refuse(`parameter ${JSON.stringify(key.slice(0, 200))} is nested deeper than ${MAX_FORM_DEPTH} levels`);
      segments.push(match[1] ?? '');
    }
  }
  for (const segment of segments) {
    if (FORBIDDEN_SEGMENTS.has(segment)) throw refuse(`parameter ${JSON.stringify(key.slice(0, 200))}: "${segment}" is not a parameter name`);
    if (/^\d+$/.test(segment) && Number(segment) > MAX_FORM_INDEX)
      throw refuse(`parameter ${JSON.stringify(key.slice(0, 200))}: list index ${segment.slice(0, 20)} is above ${MAX_FORM_INDEX}`);
  }
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
  let count = 0;
  for (const [key, value] of pairs) {
    if (++count > MAX_FORM_PAIRS) throw refuse(`more than ${MAX_FORM_PAIRS} parameters in one request`);
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
  // counted before URLSearchParams splits them all
  let pairs = 1;
  for (let at = query.indexOf('&'); at !== -1; at = query.indexOf('&', at + 1)) {
    if (++pairs > MAX_FORM_PAIRS) throw refuse(`more than ${MAX_FORM_PAIRS} parameters in one request`);
  }
  return decodePairs(new URLSearchParams(query));
}

/** Deepest nesting of a JSON body (`[[…]]`, `{"a":{…}}`); the service's bodies need a handful of levels. */
export const MAX_JSON_DEPTH = 64;

/** Parses a JSON body, refusing (400) one nested deeper than {@link MAX_JSON_DEPTH} before parsing it. */
export function parseJsonBody(text: string): unknown {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) throw refuse(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw refuse(`request body is not valid JSON: ${(error as Error).message}`);
  }
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

/**
 * The items of a list parameter as sent: an array, the values of a PHP-style keyed object (`a[0]=x&a[1]=y`), a single
 * scalar, or `undefined` when absent (a JSON `null` counts as absent rather than failing the request).
 */
export function listItems(value: unknown): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value;
  if (typeof value === 'object') return Object.values(value);
  return [value];
}

/** A list parameter: an array, a single scalar, or absent. */
export function parseList(value: unknown): string[] | undefined {
  return listItems(value)?.map((v) => String(v));
}

/** Plain string parameter; numbers are stringified, objects rejected as `undefined`. */
export function parseString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}
