/**
 * `responseFilter`: properties of each record that are not flattened but kept as one JSON-encoded cell, as the
 * reference's `Response\Filter` does before parsing. Pure module, workflow-safe.
 *
 * A path is split at the job's `responseFilterDelimiter` (default `.`); a segment ending in `[]` applies the rest
 * of the path to every item of that array (`contacts[].properties`). Paths apply one after the other to every record.
 * - compatLevel 3 (default): a record without the property is left alone; the value (even a string or `null`) is
 *   replaced by its `json_encode`.
 * - compatLevel 2: an *empty* value (PHP `empty()`) is left alone; a scalar becomes its text, anything else JSON.
 */
import { ExtractorDataError } from './errors';
import { phpCell } from './json-parser';
import { phpJsonEncode } from './php-values';
import type { ResponseFilterConfig } from './types';

/** Default `responseFilterDelimiter`. */
export const DEFAULT_RESPONSE_FILTER_DELIMITER = '.';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** PHP's `empty()` of a decoded JSON value (an object, even `{}`, is not empty). */
function phpEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === 0 || v === '' || v === '0' || (Array.isArray(v) && v.length === 0);
}

function encode(value: unknown, legacy: boolean): string {
  if (legacy && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) return phpCell(value);
  return phpJsonEncode(value);
}

function filterItem(item: unknown, path: string, filter: ResponseFilterConfig): unknown {
  const at = path.indexOf(filter.delimiter);
  const head = at === -1 ? path : path.slice(0, at);
  const rest = at === -1 ? null : path.slice(at + filter.delimiter.length);
  const many = head.endsWith('[]');
  const key = many ? head.slice(0, -2) : head;
  if (!isObject(item)) return item;
  if (filter.legacy ? phpEmpty(item[key]) : !Object.prototype.hasOwnProperty.call(item, key)) return item;
  const value = item[key];
  const apply = (v: unknown) => (rest === null ? encode(v, filter.legacy) : filterItem(v, rest, filter));
  if (many) {
    if (!Array.isArray(value)) throw new ExtractorDataError(`Error filtering response. '${key}' is not an array.`);
    return { ...item, [key]: value.map(apply) };
  }
  return { ...item, [key]: apply(value) };
}

/** Returns the records with the filter's properties JSON-encoded (new objects; the input is not changed). */
export function applyResponseFilter(records: readonly unknown[], filter: ResponseFilterConfig | null | undefined): unknown[] {
  let result = [...records];
  for (const path of filter?.paths ?? []) result = result.map((item) => filterItem(item, path, filter!));
  return result;
}
