/**
 * `recursionFilter` of a child job: which parent rows start a child run. The reference's filter grammar
 * (keboola/php-filter), pure and workflow-safe.
 *
 * - A condition is `<path><operator><value>`, whitespace-sensitive; operators `==`, `!=`, `>=`, `<=`, `~~` (like),
 *   `!~` (not like), `>`, `<`. The operator is the leftmost two-character one, else the leftmost `>`/`<`; the text
 *   before it is the path (dot-separated, into the parent row), the text after it up to a further occurrence of
 *   the operator is the value.
 * - The row's value is compared as PHP's `(string)` cast makes it (`true` → "1", `false`/`null`/absent → "").
 *   `==`/`!=` compare the strings exactly; `<`, `>`, `<=`, `>=` compare numerically when both sides are numeric
 *   strings, else byte-wise; in like patterns `%` matches any run of characters, nothing else is special.
 * - Conditions combine with `&` and `|` (no parentheses); `&` binds tighter: `a==1&b==2|c==3` is
 *   `(a==1&b==2)|c==3`.
 */
import { ExtractorDataError } from './errors';
import { getPath } from './path';
import { phpNumberString } from './php-values';

type Operator = '==' | '!=' | '>=' | '<=' | '~~' | '!~' | '>' | '<';

/** One parsed condition. */
interface FilterCondition {
  path: string;
  operator: Operator;
  value: string;
}

/** A parsed filter: a condition, or two filters joined by `&`/`|`. */
type RecursionFilter = FilterCondition | { operator: '&' | '|'; left: RecursionFilter; right: RecursionFilter };

/** A filter string the grammar refuses (the message is the reference's wording). */
export class RecursionFilterSyntaxError extends Error {}

const TWO_CHAR = /(>=|<=|==|!=|~~|!~)/;
const ONE_CHAR = /(>|<)/;

function parseCondition(text: string): FilterCondition {
  const match = TWO_CHAR.exec(text) ?? ONE_CHAR.exec(text);
  if (!match) {
    throw new RecursionFilterSyntaxError(
      `Error creating a filter from ${text}: Operator couldn't be determined. Please use one of [==, !=, >=, <=, >, <, ~~, !~]`,
    );
  }
  const operator = match[1] as Operator;
  // PHP's explode + list(): the part before the first occurrence and the part up to the second one
  const parts = text.split(operator);
  return { path: parts[0], operator, value: parts[1] };
}

function parseExpression(items: string[]): RecursionFilter {
  if (items.length % 2 === 0) throw new RecursionFilterSyntaxError(`Invalid syntax in logical expression: '${items.join('')}'.`);
  if (items.length === 1) return parseCondition(items[0]);
  for (const operator of ['|', '&'] as const) {
    for (let i = 1; i < items.length; i += 2) {
      if (items[i] === operator) {
        return { operator, left: parseExpression(items.slice(0, i)), right: parseExpression(items.slice(i + 1)) };
      }
    }
  }
  throw new RecursionFilterSyntaxError(`Invalid logical operator: '${items[1]}'.`);
}

/** Parses a `recursionFilter` string; throws {@link RecursionFilterSyntaxError} with the reference's message. */
export function parseRecursionFilter(text: string): RecursionFilter {
  const items = text.split(/([&|])/);
  return items.length > 1 ? parseExpression(items) : parseCondition(items[0]);
}

/** PHP's `(string)` cast of a decoded JSON value (arrays give "Array", as PHP does; objects cannot be cast). */
function phpString(value: unknown, path: string): string {
  if (value === undefined || value === null || value === false) return '';
  if (value === true) return '1';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return phpNumberString(value);
  if (Array.isArray(value)) return 'Array';
  throw new ExtractorDataError(`recursionFilter: the value at '${path}' is an object and cannot be compared as a string (filter a scalar field).`);
}

/** PHP 8's numeric strings: optional surrounding whitespace, a decimal integer or float (with exponent). */
const NUMERIC = /^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t\n\r\v\f]*$/;

/** PHP 8's `<=>` on two strings: numeric when both are numeric strings, else byte-wise. */
function compareStrings(a: string, b: string): number {
  if (NUMERIC.test(a) && NUMERIC.test(b)) {
    const x = Number(a.trim());
    const y = Number(b.trim());
    return x < y ? -1 : x > y ? 1 : 0;
  }
  // UTF-8 byte order is code point order
  const ac = [...a].map((ch) => ch.codePointAt(0) as number);
  const bc = [...b].map((ch) => ch.codePointAt(0) as number);
  for (let i = 0; i < Math.min(ac.length, bc.length); i++) if (ac[i] !== bc[i]) return ac[i] - bc[i];
  return ac.length - bc.length;
}

function like(value: string, pattern: string): boolean {
  const body = pattern
    .split('%')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*?');
  // PCRE's `$` also matches before a final newline
  return new RegExp(`^${body}\\n?$`).test(value);
}

function matchesCondition(c: FilterCondition, row: unknown): boolean {
  const found = getPath(row, c.path);
  const value = phpString(found.found ? found.value : null, c.path);
  switch (c.operator) {
    case '==':
      return value === c.value;
    case '!=':
      return value !== c.value;
    case '>=':
      return compareStrings(value, c.value) >= 0;
    case '<=':
      return compareStrings(value, c.value) <= 0;
    case '>':
      return compareStrings(value, c.value) > 0;
    case '<':
      return compareStrings(value, c.value) < 0;
    case '~~':
      return like(value, c.value);
    case '!~':
      return !like(value, c.value);
  }
}

/** Whether a parent row passes the filter. */
export function matchesRecursionFilter(filter: RecursionFilter, row: unknown): boolean {
  if ('path' in filter) return matchesCondition(filter, row);
  if (filter.operator === '&') return matchesRecursionFilter(filter.left, row) && matchesRecursionFilter(filter.right, row);
  return matchesRecursionFilter(filter.left, row) || matchesRecursionFilter(filter.right, row);
}
