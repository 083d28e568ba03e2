/**
 * Runs one documentation example of the reference extractor (`../shared/ge-examples/examples/<folder>`) through
 * the engine against the mock API and compares the tables with the reference's `_sample_out/`: table names,
 * columns in order (`-` → `_`, Storage's rule), rows in order, and the manifests' primary key and incremental flag.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connect } from 'node:net';
import { parse } from 'csv-parse/sync';
import { Agent } from 'undici';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { LoginSessions } from '../../../src/extractor/auth/apply-auth';
import { createRequestSender, requestAuthOf } from '../../../src/extractor/http/send-request';
import { parseRunState, runTimesOf, type ExtractRunState } from '../../../src/extractor/run-state';
import { runExtraction, type ExtractionResult } from '../run-extraction';
import { assertReferencesResolvable, clearSecretsError, findClearSecrets } from '../../../src/extractor/secrets';
import type { ExtractRunTimes } from '../../../src/extractor/types';
import type { MockApi } from './mock-api';

/** `../shared/ge-examples/examples` beside the checkout. */
export const EXAMPLES_DIR = resolve(__dirname, '..', '..', '..', '..', 'shared', 'ge-examples', 'examples');

/** The examples' clock: their expected requests were recorded on 2017-09-07 (UTC), e.g. `to=2017-09-07`. */
export const EXAMPLES_NOW_MS = Date.UTC(2017, 8, 7, 12, 0, 0);

/**
 * Examples whose tables show the reference run's clock: 091's `date()` in `userData` ("now" at each job's
 * start) was recorded at 2017-04-20 15:53:50 UTC, its second job starting in the next second. Their clock starts
 * there and moves 0.6 s per reading (job run start, step after each page), which puts the second job at :51.
 */
const EXAMPLE_CLOCKS: Readonly<Record<string, number>> = {
  '091-function-user-data': Date.UTC(2017, 3, 20, 15, 53, 50),
};

/** The clock of an example's run: fixed at {@link EXAMPLES_NOW_MS}, or the reference run's ticking clock. */
function exampleClock(folder: string): () => number {
  const start = EXAMPLE_CLOCKS[folder];
  if (start === undefined) return () => EXAMPLES_NOW_MS;
  let readings = 0;
  return () => start + 600 * readings++;
}

/** Prefix of the environment variables the clear `#` values of an example are moved to. */
const SECRET_PREFIX = 'SAPI_SECRET_GE_';

/** Every example folder, in order. */
export function exampleFolders(): string[] {
  return readdirSync(EXAMPLES_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/** A table as the reference wrote it (or as we produced it). */
export interface TableOut {
  columns: string[];
  rows: string[][];
  primaryKey: string[];
  incremental: boolean;
}

export type ExampleOutcome =
  { status: 'pass' } | { status: 'differs'; differences: string[] } | { status: 'rejected'; message: string } | { status: 'failed'; message: string };

/** The reference's tables of an example: `_sample_out/<bucket>.<table>` + `.manifest`, keyed by table name. */
export function expectedTables(folder: string): Record<string, TableOut> {
  const dir = join(EXAMPLES_DIR, folder, '_sample_out');
  const tables: Record<string, TableOut> = {};
  for (const file of readdirSync(dir)
    .filter((f) => !f.endsWith('.manifest'))
    .sort()) {
    const records = parse(readFileSync(join(dir, file)), { relax_column_count: true }) as string[][];
    const manifest = existsSync(join(dir, `${file}.manifest`))
      ? (JSON.parse(readFileSync(join(dir, `${file}.manifest`), 'utf8')) as { primary_key?: string[]; incremental?: boolean })
      : {};
    const name = file.slice(file.indexOf('.') + 1);
    tables[name] = {
      columns: (records[0] ?? []).map((c) => c.replace(/-/g, '_')),
      rows: records.slice(1),
      primaryKey: (manifest.primary_key ?? []).map((c) => c.replace(/-/g, '_')),
      incremental: manifest.incremental ?? false,
    };
  }
  return tables;
}

/**
 * The example's configuration for the mock at `origin`: the mock-server origins rewritten, every clear `#` value
 * moved to an environment variable and referenced as `${env:…}` (as a user of this project must write it).
 */
export function exampleConfig(folder: string, origin: string): { config: unknown; env: Record<string, string> } {
  const host = new URL(origin);
  // the server also appears as attributes that user functions build the base URL from (087, 088, 119)
  const text = readFileSync(join(EXAMPLES_DIR, folder, 'config.json'), 'utf8')
    .replace(/https?:\/\/mock-server[a-z-]*(?::\d+)?/g, origin)
    .replace(/"mock-server:80"/g, `"${host.host}"`)
    .replace(/"address": "mock-server"/g, `"address": "${host.hostname}"`)
    .replace(/"port": "80"/g, `"port": "${host.port}"`);
  const env: Record<string, string> = {};
  let n = 0;
  const seal = (value: unknown, key?: string): unknown => {
    if (typeof value === 'string' && key?.startsWith('#') && value !== '') {
      const name = `${SECRET_PREFIX}${folder.slice(0, 3)}_${n++}`;
      env[name] = value;
      return `\${env:${name}}`;
    }
    if (Array.isArray(value)) return value.map((v) => seal(v));
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, seal(v, k)]));
    return value;
  };
  const config = seal(JSON.parse(text));
  // values our policy takes for credentials (a header like `X-AppKey`) move too, as a user has to move them;
  // the words of the function language (`{"function": …}`, `{"attr": "#password"}`) are not values
  for (const path of findClearSecrets(config)) {
    const steps = path.match(/[^.[\]]+/g) ?? [];
    const last = steps.at(-1)!;
    if (FUNCTION_WORDS.has(last)) continue;
    const holder = steps.slice(0, -1).reduce<any>((node, step) => node?.[step], config); // eslint-disable-line @typescript-eslint/no-explicit-any
    if (typeof holder?.[last] !== 'string') continue;
    const name = `${SECRET_PREFIX}${folder.slice(0, 3)}_${n++}`;
    env[name] = holder[last];
    holder[last] = `\${env:${name}}`;
  }
  return { config, env };
}

/** Keys of the reference's function language: their values name things, they are not secrets. */
const FUNCTION_WORDS = new Set(['function', 'attr', 'time', 'user', 'consumer', 'response']);

/** What we produced, in the shape of `_sample_out`. */
function producedTables(result: ExtractionResult, raw: unknown): Record<string, TableOut> {
  const incrementalOutput = Boolean((raw as { parameters?: { config?: { incrementalOutput?: unknown } } }).parameters?.config?.incrementalOutput);
  const tables: Record<string, TableOut> = {};
  for (const [name, table] of Object.entries(result.tables)) {
    const extra = table as { primaryKey?: string[]; incremental?: boolean };
    tables[name] = {
      columns: table.columns,
      rows: table.rows.map((row) => table.columns.map((c) => row[c] ?? '')),
      primaryKey: extra.primaryKey ?? [],
      incremental: extra.incremental ?? incrementalOutput,
    };
  }
  return tables;
}

/** Human-readable differences between the reference's tables and ours (empty: identical). */
export function compareTables(expected: Record<string, TableOut>, actual: Record<string, TableOut>): string[] {
  const differences: string[] = [];
  const names = (o: object) => Object.keys(o).sort().join(', ');
  if (names(expected) !== names(actual)) differences.push(`tables: expected [${names(expected)}], got [${names(actual)}]`);
  for (const [name, want] of Object.entries(expected)) {
    const got = actual[name];
    if (!got) continue;
    if (want.columns.join(',') !== got.columns.join(',')) differences.push(`${name}: columns: expected ${want.columns.join(',')} got ${got.columns.join(',')}`);
    if (want.rows.length !== got.rows.length) differences.push(`${name}: ${want.rows.length} rows expected, ${got.rows.length} produced`);
    const firstDiff = want.rows.findIndex((row, i) => JSON.stringify(row) !== JSON.stringify(got.rows[i]));
    if (firstDiff !== -1)
      differences.push(`${name}: row ${firstDiff + 1}: expected ${JSON.stringify(want.rows[firstDiff])} got ${JSON.stringify(got.rows[firstDiff])}`);
    if (want.primaryKey.join(',') !== got.primaryKey.join(',')) differences.push(`${name}: primary key: expected [${want.primaryKey}] got [${got.primaryKey}]`);
    if (want.incremental !== got.incremental) differences.push(`${name}: incremental: expected ${want.incremental} got ${got.incremental}`);
  }
  return differences;
}

/** The previous run's state of an example: its `in/state.json`, if any. */
export function exampleRunState(folder: string): ExtractRunState | null {
  const file = join(EXAMPLES_DIR, folder, 'in', 'state.json');
  return existsSync(file) ? parseRunState(JSON.parse(readFileSync(file, 'utf8'))).state : null;
}

/** The run times of an example: `previousStart` from its `in/state.json` (the previous run's state), if any. */
export function exampleRunTimes(folder: string): ExtractRunTimes {
  return runTimesOf(exampleRunState(folder), EXAMPLE_CLOCKS[folder] ?? EXAMPLES_NOW_MS);
}

/**
 * Examples whose requests are signed over the host, the clock and a fresh nonce (OAuth 1.0 HMAC-SHA1, OAuth 2.0
 * MAC): they run against the reference's own origin `http://mock-server` (port 80), connected to the mock, with the
 * nonce and clock of the reference run (from the `Authorization` header the mock requires), so the mock's exact
 * header check judges the signature too.
 */
const REFERENCE_SIGNING: Readonly<Record<string, { nowSeconds: number; nonce: string }>> = {
  '102-oauth1': { nowSeconds: 1492904452, nonce: '72469d96572dabb4d0ea02b057ea4f246d722b72' },
  '104-oauth2-hmac': { nowSeconds: 1492958193, nonce: '605cce2a2f687253' },
};

/** A connection pool whose every connection goes to the mock, whatever host the URL names. */
function towardsMock(mock: MockApi): Agent {
  const { hostname, port } = new URL(mock.origin);
  return new Agent({
    connect: (_options, callback) => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.once('connect', () => callback(null, socket)).once('error', (err) => callback(err, null));
    },
  });
}

/** Runs the example `folder` against `mock` and compares; never throws. */
export async function runExample(folder: string, mock: MockApi): Promise<ExampleOutcome> {
  const signing = REFERENCE_SIGNING[folder];
  const { config: raw, env } = exampleConfig(folder, signing ? 'http://mock-server' : mock.origin);
  const source = { env: { ...process.env, ...env }, prefix: 'SAPI_SECRET_' };
  let config;
  try {
    config = parseExtractorConfig(raw);
    const clear = findClearSecrets(raw);
    if (clear.length > 0) throw clearSecretsError(clear);
    assertReferencesResolvable(raw, source);
  } catch (err) {
    return { status: 'rejected', message: err instanceof Error ? err.message : String(err) };
  }
  // as the activity sends: deferred user functions finished, secrets filled (the request's and the client config's:
  // client certificate, AWS key), authentication applied, errors scrubbed; runExtraction passes `api.client`
  const dispatcher = signing ? towardsMock(mock) : undefined;
  const fetchPage = createRequestSender({
    secrets: source,
    auth: requestAuthOf(config),
    fetch: { maxAttempts: 1, dispatcher },
    sessions: new LoginSessions(),
    ...(signing ? { nowSeconds: () => signing.nowSeconds, nonce: () => signing.nonce } : {}),
  });
  try {
    const result = await runExtraction(config, { fetchPage, now: exampleClock(folder), runTimes: exampleRunTimes(folder), runState: exampleRunState(folder) });
    const differences = compareTables(expectedTables(folder), producedTables(result, raw));
    return differences.length === 0 ? { status: 'pass' } : { status: 'differs', differences };
  } catch (err) {
    return { status: 'failed', message: err instanceof Error ? err.message : String(err) };
  } finally {
    await dispatcher?.close();
  }
}
