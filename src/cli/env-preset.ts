// `--env`: the Temporal CLI's environment presets (`temporal env set --env prod -k address -v …`), kept in
// `~/.config/temporalio/temporal.yaml` as `env: {<name>: {<flag name>: <value>}}`. A preset gives defaults to the
// connection flags, as it does for `temporal`.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SapiInvalidInputError } from '../errors';
import type { TemporalFlags } from './context';

/** Name of the preset used when none is named (`--env`, `TEMPORAL_ENV`); applied only when the file has it. */
const DEFAULT_ENV_NAME = 'default';

/** The preset keys (the Temporal CLI's flag names) this CLI takes, and the flag each sets. */
const PRESET_KEYS: Readonly<Record<string, keyof TemporalFlags>> = {
  address: 'address',
  namespace: 'namespace',
  'api-key': 'apiKey',
  tls: 'tls',
  'tls-cert-path': 'tlsCertPath',
  'tls-key-path': 'tlsKeyPath',
  'tls-ca-path': 'tlsCaPath',
  'tls-server-name': 'tlsServerName',
  'tls-disable-host-verification': 'tlsDisableHostVerification',
  profile: 'profile',
  'config-file': 'configFile',
};

const BOOLEAN_FLAGS: ReadonlySet<keyof TemporalFlags> = new Set(['tls', 'tlsDisableHostVerification']);

/** The default presets file: `$HOME/.config/temporalio/temporal.yaml`, where `temporal env set` writes. */
function defaultEnvFile(env: NodeJS.ProcessEnv): string {
  return join(env.HOME ?? homedir(), '.config', 'temporalio', 'temporal.yaml');
}

/**
 * The flags the `--env` preset sets: the one named by `--env` or `TEMPORAL_ENV` (it must exist), else `default`
 * when the file has it, else none. Throws a `SapiInvalidInputError` naming the file or the preset.
 */
export function envPreset(env: NodeJS.ProcessEnv, flags: Pick<TemporalFlags, 'env' | 'envFile'>): TemporalFlags {
  const named = flags.env ?? (env.TEMPORAL_ENV?.trim() || undefined);
  const file = flags.envFile ?? defaultEnvFile(env);
  if (!existsSync(file)) {
    if (flags.envFile !== undefined) throw new SapiInvalidInputError(`env file ${file} not found (--env-file)`);
    if (named !== undefined)
      throw new SapiInvalidInputError(`env ${named} not found: no env file ${file} (create one with \`temporal env set --env ${named} …\`)`);
    return {};
  }
  let presets: Record<string, Record<string, string>>;
  try {
    presets = parseEnvFile(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new SapiInvalidInputError(`cannot read env file ${file}: ${err instanceof Error ? err.message : String(err)}`, undefined, {
      cause: err,
    });
  }
  const preset = presets[named ?? DEFAULT_ENV_NAME];
  if (preset === undefined) {
    if (named === undefined) return {};
    const known = Object.keys(presets);
    throw new SapiInvalidInputError(`env ${named} not found in ${file} (${known.length ? `it has ${known.join(', ')}` : 'it has none'})`);
  }
  const flagsOfPreset: TemporalFlags = {};
  for (const [key, value] of Object.entries(preset)) {
    const flag = PRESET_KEYS[key];
    if (flag === undefined) continue;
    (flagsOfPreset as Record<string, unknown>)[flag] = BOOLEAN_FLAGS.has(flag) ? /^(true|1|yes)$/i.test(value) : value;
  }
  return flagsOfPreset;
}

/**
 * Reads the presets file: a top-level `env:` mapping of names to mappings of scalars (what `temporal env set`
 * writes), plain or quoted; comments and other top-level keys are skipped. Throws on any other shape.
 */
export function parseEnvFile(text: string): Record<string, Record<string, string>> {
  const presets: Record<string, Record<string, string>> = {};
  let inEnv = false;
  let nameIndent: number | undefined;
  let current: Record<string, string> | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.replace(/\s+#.*$/, '').replace(/^\s*#.*$/, '');
    if (line.trim() === '') return;
    const indent = line.length - line.trimStart().length;
    const match = /^\s*("[^"]*"|'[^']*'|[^:]+?)\s*:(?:\s+(.*))?$/.exec(line);
    if (!match) throw new Error(`line ${index + 1}: expected "key: value"`);
    const key = unquote(match[1]!);
    const value = match[2] === undefined ? undefined : unquote(match[2].trim());
    if (indent === 0) {
      inEnv = key === 'env' && value === undefined;
      nameIndent = undefined;
      current = undefined;
      return;
    }
    if (!inEnv) return;
    nameIndent ??= indent;
    if (indent === nameIndent) {
      if (value !== undefined && value !== '{}') throw new Error(`line ${index + 1}: env ${key} must be a mapping`);
      current = presets[key] = {};
      return;
    }
    if (indent < nameIndent || current === undefined || value === undefined) throw new Error(`line ${index + 1}: unexpected indentation`);
    current[key] = value;
  });
  return presets;
}

function unquote(text: string): string {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) return JSON.parse(text) as string;
  if (text.length >= 2 && text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
  return text;
}
