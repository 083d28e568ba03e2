/**
 * Decoded JSON values as the reference's PHP prints them, where its output depends on it: `serialize` (the hash
 * behind mapping link values), `json_encode` (`forceType` columns) and the `(string)` cast (filters). Pure module.
 *
 * A JSON number without fraction or exponent is a PHP integer when it fits 64 bits; every other number is a float.
 * JavaScript cannot tell `1.0` from `1`, so a whole number is always taken as an integer here.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether PHP's `json_decode` gives an integer for this number. */
function isPhpInt(value: number): boolean {
  return Number.isInteger(value) && Math.abs(value) < 2 ** 63;
}

/**
 * PHP's `zend_gcvt`: `precision` significant digits, trailing zeros dropped, exponential form (`1.0E+25`,
 * `1.0E-5`) when the decimal exponent is below -4 or above `precision`.
 */
export function phpGcvt(value: number, precision: number, exponentChar = 'E'): string {
  if (Number.isNaN(value)) return 'NAN';
  if (!Number.isFinite(value)) return value > 0 ? 'INF' : '-INF';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  const [mantissa, exp] = Math.abs(value).toExponential(precision - 1).split('e');
  const digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  const decpt = Number(exp) + 1;
  if (decpt < 0 ? decpt < -3 : decpt > precision) {
    const e = decpt - 1;
    return `${sign}${digits[0]}.${digits.length > 1 ? digits.slice(1) : '0'}${exponentChar}${e < 0 ? '-' : '+'}${Math.abs(e)}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (digits.length <= decpt) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/** PHP's `(string)` of a number: integers as they are, floats with `precision` = 14. */
export function phpNumberString(value: number): string {
  return isPhpInt(value) ? String(value) : phpGcvt(value, 14);
}

/** Floats in `serialize`/`json_encode`: the reference's JSON parser sets `serialize_precision` to 17. */
const SERIALIZE_PRECISION = 17;

/** Length of `text` in UTF-8 bytes (PHP string lengths are bytes). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** A PHP array key: decimal integer strings become integer keys. */
function serializeArrayKey(key: string): string {
  if (/^(0|-?[1-9][0-9]*)$/.test(key) && Math.abs(Number(key)) < 2 ** 63) return `i:${key};`;
  return `s:${utf8Length(key)}:"${key}";`;
}

/**
 * PHP's `serialize` of a value decoded by `json_decode` without `assoc`: JSON objects are `stdClass` objects,
 * arrays are lists. With `assocRoot`, the outermost object is a PHP array instead (configuration values such as
 * user data, decoded as associative arrays).
 */
export function phpSerialize(value: unknown, assocRoot = false): string {
  if (value === null || value === undefined) return 'N;';
  if (typeof value === 'boolean') return `b:${value ? 1 : 0};`;
  if (typeof value === 'number') return isPhpInt(value) ? `i:${value};` : `d:${phpGcvt(value, SERIALIZE_PRECISION)};`;
  if (typeof value === 'string') return `s:${utf8Length(value)}:"${value}";`;
  if (Array.isArray(value)) return `a:${value.length}:{${value.map((item, i) => `i:${i};${phpSerialize(item)}`).join('')}}`;
  if (isObject(value)) {
    const entries = Object.entries(value);
    if (assocRoot) return `a:${entries.length}:{${entries.map(([k, v]) => serializeArrayKey(k) + phpSerialize(v, true)).join('')}}`;
    const props = entries.map(([k, v]) => `s:${utf8Length(k)}:"${k}";${phpSerialize(v)}`).join('');
    return `O:8:"stdClass":${entries.length}:{${props}}`;
  }
  return 'N;';
}

function jsonString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '/') out += '\\/';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code >= 0x80) {
      // json_encode's default: everything outside ASCII as \u escapes (UTF-16 code units)
      for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

/** PHP's `json_encode` with default flags (`\/`, `\u00e9`; floats with 17 significant digits, `1.0e+25`). */
export function phpJsonEncode(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return isPhpInt(value) ? String(value) : phpGcvt(value, SERIALIZE_PRECISION, 'e');
  if (typeof value === 'string') return jsonString(value);
  if (Array.isArray(value)) return `[${value.map((v) => phpJsonEncode(v)).join(',')}]`;
  if (isObject(value)) return `{${Object.entries(value).map(([k, v]) => `${jsonString(k)}:${phpJsonEncode(v)}`).join(',')}}`;
  return 'null';
}
