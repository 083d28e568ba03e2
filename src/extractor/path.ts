/**
 * Dot paths into decoded JSON, and the reference's notions of "empty" and "truthy". Pure module.
 */

/** Result of a path lookup: `found: false` when a segment is missing (or its value is null, like PHP's `isset`). */
export type PathLookup = { found: true; value: unknown } | { found: false; value: undefined };

const ABSENT: PathLookup = { found: false, value: undefined };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads `path` (segments separated by `delimiter`, default `.`) in `data`. Numeric segments index arrays
 * (`links.0.cursor`); object keys are matched literally. An empty path, or a path equal to the delimiter, is the
 * whole value. A missing segment, or a `null` on the way, gives `{found: false}`.
 */
export function getPath(data: unknown, path: string, delimiter = '.'): PathLookup {
  if (path === '' || path === delimiter) return { found: true, value: data };
  let current: unknown = data;
  for (const key of path.split(delimiter)) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return ABSENT;
      current = current[Number(key)];
    } else if (isPlainObject(current)) {
      if (!Object.prototype.hasOwnProperty.call(current, key)) return ABSENT;
      current = current[key];
    } else {
      return ABSENT;
    }
    if (current === undefined) return ABSENT;
  }
  if (current === null) return { found: true, value: null };
  return { found: true, value: current };
}

/**
 * Empty as the reference (PHP `empty()`) sees it: absent, `null`, `""`, `false`, `0`, `"0"`, `[]`.
 * An empty object `{}` is NOT empty.
 */
export function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '' || value === '0') return true;
  if (typeof value === 'number') return value === 0 || Number.isNaN(value);
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/** PHP's `(bool)` cast: the opposite of `isEmptyValue` (so `{}` and `"false"` are truthy). */
export function isTruthy(value: unknown): boolean {
  return !isEmptyValue(value);
}
