/**
 * Safe table and column names, as the reference's JSON parser makes them. Pure module.
 */
import { md5Hex } from './md5';

/** Longest name kept as is; longer names are shortened like the reference does. */
export const MAX_NAME_LENGTH = 64;

/**
 * Makes a name safe for Storage: characters outside `[A-Za-z0-9-]` become `_`, runs collapse to one `_`, and
 * `_` at the edges is trimmed (`users/{id}/orders` → `users_id_orders`, `_id` → `id`). Names longer than 64
 * characters are shortened as the reference does (an acronym or an MD5, then the name's tail).
 */
export function safeName(name: string): string {
  let result = name.replace(/[^A-Za-z0-9-]/g, '_');
  if (result.length > MAX_NAME_LENGTH) result = shorten(result);
  return result.replace(/[^A-Za-z0-9-]+/g, '_').replace(/^_+|_+$/g, '');
}

function shorten(name: string): string {
  const words = name.match(/[A-Za-z'-]+/g) ?? [];
  const initials = [...name.matchAll(/\b(\w)/g)].map((m) => m[1]);
  const short = `${words.length > 1 && initials.length > 0 ? initials.join('') : md5Hex(name)}_`;
  const remaining = MAX_NAME_LENGTH - short.length;
  const from = Math.max(0, name.length - remaining);
  let next = name.indexOf(' ', from);
  if (next <= 0) next = name.indexOf('_', from);
  return next <= 0 ? short : short + name.slice(next);
}

// keys that already are column names
/**
 * Marks a header key that already is its final column name (the legacy JSON parser names its columns itself):
 * `columnNamesFor` keeps what follows the mark as it is. It may follow the parent mark (`\u001f`).
 */
export const VERBATIM_KEY_MARK = '\u001e';

/** The column name a key gives: the name after {@link VERBATIM_KEY_MARK}, else `safeName(key)`. */
function baseColumnName(key: string): string {
  const verbatim = key.indexOf(VERBATIM_KEY_MARK);
  if (verbatim === 0 || verbatim === 1) return key.slice(verbatim + 1) || 'column';
  return safeName(key) || 'column';
}

/**
 * Turns flattened keys (in first-appearance order) into unique column names: `safeName(key)` (a verbatim key: its
 * name), and when two keys give the same name, the later gets `_u0`, `_u1`, … (the reference's rule). Returns
 * names aligned with `keys`.
 */
export function columnNamesFor(keys: readonly string[]): string[] {
  const used = new Set<string>();
  return keys.map((key) => {
    const base = baseColumnName(key);
    let name = base;
    for (let i = 0; used.has(name); i++) name = `${base}_u${i}`;
    used.add(name);
    return name;
  });
}
