/**
 * How the reference (PHP 7.4, `json_decode` without `assoc`) turns decoded JSON values into text: `serialize` (the
 * input of its link-id hashes), `json_encode` (nested arrays and `responseFilter` cells) and string conversion (CSV
 * cells). Pure module, workflow-safe.
 *
 * A decoded JSON object is a PHP `stdClass`, a JSON array a PHP list. JavaScript cannot tell `1.0` from `1` after
 * `JSON.parse`, so an integral number is taken as a PHP integer when it fits 64 bits (else a float), any other
 * number as a float.
 */

/** The parser sets `serialize_precision` to 17 (used by `serialize` and `json_encode`). */
const PHP_SERIALIZE_PRECISION = 17;
/** PHP's default `precision` (string conversion of floats, e.g. CSV cells). */
const PHP_PRECISION = 14;

const INT64_LIMIT = 2 ** 63;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when PHP would hold `n` as an integer (see the module comment). */
function isPhpInteger(n: number): boolean {
  return Number.isInteger(n) && n < INT64_LIMIT && n >= -INT64_LIMIT;
}

/**
 * PHP's `php_gcvt(value, precision, '.', exponentChar)`: `precision` significant digits (trailing zeros dropped),
 * exponential form (`1.0E+25`, `1.5E-7`) when the exponent is below -4 or at least `precision`.
 */
export function phpFloatString(value: number, precision: number, exponentChar: 'E' | 'e' = 'E'): string {
  if (Number.isNaN(value)) return 'NAN';
  if (!Number.isFinite(value)) return value > 0 ? 'INF' : '-INF';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  const [mantissa, exp] = Math.abs(value)
    .toExponential(precision - 1)
    .split('e');
  const digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  const decpt = Number(exp) + 1; // position of the decimal point relative to the digits
  if (decpt < 0 ? decpt < -3 : decpt > precision) {
    const e = decpt - 1;
    const frac = digits.length > 1 ? digits.slice(1) : '0';
    return `${sign}${digits[0]}.${frac}${exponentChar}${e < 0 ? '-' : '+'}${Math.abs(e)}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (digits.length <= decpt) return sign + digits + '0'.repeat(decpt - digits.length);
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/** A number as PHP prints it in a string context (`(string) $n`, precision 14 for floats). */
export function phpNumberString(n: number): string {
  if (isPhpInteger(n)) return String(n);
  // fast path: JavaScript's shortest form, when it has at most 14 digits and PHP would not use an exponent
  const text = String(n);
  const abs = Math.abs(n);
  if (abs >= 1e-4 && abs < 1e14 && /^-?\d+\.\d+$/.test(text) && text.replace(/^-?0*\.?0*/, '').replace('.', '').length <= PHP_PRECISION) {
    return text;
  }
  return phpFloatString(n, PHP_PRECISION);
}

function utf8Length(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) length += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length += 2; // a pair: 2 units, 4 bytes
      i++;
    } else length += 2; // 3 bytes (a lone surrogate becomes U+FFFD, also 3)
  }
  return length;
}

/** PHP's `serialize()` of a decoded JSON value (objects are `stdClass`, arrays lists). */
export function phpSerialize(value: unknown): string {
  if (value === null || value === undefined) return 'N;';
  if (typeof value === 'string') return `s:${utf8Length(value)}:"${value}";`;
  if (typeof value === 'number') {
    return isPhpInteger(value) ? `i:${value === 0 ? 0 : value};` : `d:${phpFloatString(value, PHP_SERIALIZE_PRECISION)};`;
  }
  if (typeof value === 'boolean') return value ? 'b:1;' : 'b:0;';
  if (Array.isArray(value)) {
    let out = `a:${value.length}:{`;
    for (let i = 0; i < value.length; i++) out += `i:${i};${phpSerialize(value[i])}`;
    return `${out}}`;
  }
  if (isObject(value)) {
    let out = '';
    let count = 0;
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      out += `s:${utf8Length(key)}:"${key}";${phpSerialize(value[key])}`;
      count++;
    }
    return `O:8:"stdClass":${count}:{${out}}`;
  }
  return phpSerialize(String(value));
}

const JSON_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function jsonString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const code = text.charCodeAt(i);
    if (JSON_ESCAPES[ch] !== undefined) out += JSON_ESCAPES[ch];
    else if (code < 0x20 || code >= 0x80) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * PHP's `json_encode()` with default flags: `/` → `\/`, non-ASCII → `\uXXXX` (UTF-16 units), floats with
 * `serialize_precision` 17 (`0.1` → `0.10000000000000001`), `{}` for an empty object and `[]` for an empty list.
 */
export function phpJsonEncode(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return isPhpInteger(value) ? String(value === 0 ? 0 : value) : phpFloatString(value, PHP_SERIALIZE_PRECISION, 'e');
  if (typeof value === 'string') return jsonString(value);
  if (Array.isArray(value)) return `[${value.map(phpJsonEncode).join(',')}]`;
  if (isObject(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${jsonString(k)}:${phpJsonEncode(v)}`)
      .join(',')}}`;
  return jsonString(String(value));
}
