import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Environment variable with the codec keys: comma-separated `id:base64key` (first encrypts, any decrypts). */
export const CODEC_KEYS_ENV = 'SAPI_CODEC_KEYS';
/** Environment variable with the path of a key file: one `id:base64key` per line (first encrypts, any decrypts). */
export const CODEC_KEY_FILE_ENV = 'SAPI_CODEC_KEY_FILE';
/** AES-256 keys are 32 bytes. */
export const CODEC_KEY_BYTES = 32;

/**
 * One payload-encryption key: `id` goes into every payload it encrypts (metadata `encryption-key-id`), `key` is the
 * 32-byte AES-256 key in base64. Kept as a string so the worker's settings can stay frozen.
 */
export interface CodecKey {
  readonly id: string;
  readonly key: string;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Parses `id:base64key` entries (from `SAPI_CODEC_KEYS`, or lines of a key file). Blank entries and `#` comment
 * lines are skipped. Throws one error naming `source` for a malformed entry, a key that is not 32 bytes, or a
 * repeated id. The first key encrypts; every key decrypts.
 */
export function parseCodecKeys(entries: readonly string[], source: string): CodecKey[] {
  const keys: CodecKey[] = [];
  entries.forEach((raw, index) => {
    const entry = raw.trim();
    if (entry === '' || entry.startsWith('#')) return;
    const where = `${source} entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new Error(`${where} must be id:base64key (e.g. k2025:${'A'.repeat(43)}=), got no colon`);
    const id = entry.slice(0, colon).trim();
    const encoded = entry.slice(colon + 1).trim();
    if (!KEY_ID.test(id)) throw new Error(`${where}: key id ${JSON.stringify(id)} must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    const bytes = Buffer.from(encoded, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || bytes.length !== CODEC_KEY_BYTES) {
      throw new Error(
        `${where} (key "${id}"): the key must be ${CODEC_KEY_BYTES} bytes in base64, got ${bytes.length} bytes; generate one with \`openssl rand -base64 32\``,
      );
    }
    if (keys.some((known) => known.id === id)) throw new Error(`${where}: key id "${id}" is listed twice; each key needs its own id`);
    keys.push({ id, key: bytes.toString('base64') });
  });
  return keys;
}

/**
 * The codec keys configured in `env`: `SAPI_CODEC_KEYS` or `SAPI_CODEC_KEY_FILE` (not both), else
 * `undefined` (the codec is off). A variable that is set but lists no key is an error, not a silent "off".
 */
export function loadCodecKeys(env: NodeJS.ProcessEnv = process.env): CodecKey[] | undefined {
  const inline = env[CODEC_KEYS_ENV];
  const file = env[CODEC_KEY_FILE_ENV];
  const hasInline = inline !== undefined && inline.trim() !== '';
  const hasFile = file !== undefined && file.trim() !== '';
  if (hasInline && hasFile) throw new Error(`set either ${CODEC_KEYS_ENV} or ${CODEC_KEY_FILE_ENV}, not both`);
  let keys: CodecKey[];
  if (hasInline) {
    keys = parseCodecKeys(inline.split(','), CODEC_KEYS_ENV);
  } else if (hasFile) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`${CODEC_KEY_FILE_ENV}=${file} cannot be read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    keys = parseCodecKeys(text.split(/\r?\n/), `${CODEC_KEY_FILE_ENV} (${file})`);
  } else {
    return undefined;
  }
  if (keys.length === 0)
    throw new Error(
      `${hasInline ? CODEC_KEYS_ENV : `${CODEC_KEY_FILE_ENV} (${file})`} lists no key; give id:base64key entries or unset it to turn the codec off`,
    );
  return keys;
}

/**
 * The variable of `env` that configures the codec keys, to hand on to other processes (the dev stack's env file):
 * `{SAPI_CODEC_KEYS: …}` or `{SAPI_CODEC_KEY_FILE: <absolute path>}`; `{}` when neither is set.
 */
export function codecKeysEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const inline = env[CODEC_KEYS_ENV];
  if (inline !== undefined && inline.trim() !== '') return { [CODEC_KEYS_ENV]: inline };
  const file = env[CODEC_KEY_FILE_ENV];
  if (file !== undefined && file.trim() !== '') return { [CODEC_KEY_FILE_ENV]: resolve(file) };
  return {};
}
