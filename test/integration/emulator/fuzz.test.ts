import { randomInt } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { FormData, request } from 'undici';
import { DEFAULT_MAX_TABLE_COLUMNS } from '../../../src/emulator';
import { MAX_BODY_BYTES } from '../../../src/emulator/http';
import { TOKEN, type Json, createBucket, memoryOf, useEmulatorProcess, waitForJob } from './support';

/**
 * The fuzz tier: random and structured hostile inputs for every parser of client input the emulator has (CSV loads,
 * JSON bodies, form bodies, multipart uploads, query strings). Each must end in success or a service-like refusal (a
 * 4xx with `{error, code, exceptionId, status: "error"}`, or a job error other than an internal one), with the
 * emulator's process alive, never restarted and under a memory ceiling. `SAPI_FUZZ_SECONDS` is the budget (default
 * 20 s: `make test`; `make test-fuzz` runs 300 s), `SAPI_FUZZ_SEED` replays a run (the seed is printed).
 */
const BUDGET_MS = Number(process.env.SAPI_FUZZ_SECONDS ?? 20) * 1000;
const SEED = Number(process.env.SAPI_FUZZ_SEED ?? randomInt(2 ** 31));
/** Peak RSS the emulator process may reach in the whole run, MiB (idle ~170). */
const PEAK_RSS_CEILING_MB = 1024;
const LIMIT = DEFAULT_MAX_TABLE_COLUMNS;

jest.setTimeout(BUDGET_MS + 180_000);

/** `encodeURIComponent`, with lone surrogates sent as the invalid UTF-8 they would be. */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value
      .split(/[\uD800-\uDFFF]/)
      .map(encodeURIComponent)
      .join('%ED%A0%80');
  }
}

/** mulberry32: small, seeded, good enough to pick inputs. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number): number => Math.floor(next() * max);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => int(256)));
  const text = (n: number): string => Array.from({ length: n }, () => pick(ALPHABET)).join('');
  return { next, int, pick, bytes, text };
}
type Rng = ReturnType<typeof prng>;

/** Characters that matter to the parsers, and some that matter to nothing. */
const ALPHABET = [
  'a',
  'Z',
  '0',
  '_',
  ',',
  ';',
  '\t',
  '"',
  "'",
  '\\',
  '\n',
  '\r',
  '\r\n',
  ' ',
  '[',
  ']',
  '{',
  '}',
  '=',
  '&',
  '%',
  '%zz',
  '%00',
  '+',
  '\0',
  '\uFEFF',
  'é',
  '😀',
  '\uD800',
  ':',
  '__proto__',
  'constructor',
];

interface Outcome {
  what: string;
  status: number;
  body: Json;
}

describe('fuzz: the emulator parsers end every input in success or a service-like refusal', () => {
  const env = useEmulatorProcess();
  const failures: string[] = [];
  /** One parser's failures: a test reports its own, not an earlier test's again. */
  const failuresOf = (kind: string): string[] => failures.filter((f) => f.startsWith(`${kind}: `));
  const counts: Record<string, number> = {};
  let tableId = '';

  beforeAll(async () => {
    await createBucket(env.api, 'fuzz');
    const created = await waitForJob(
      env.api,
      (await env.api('POST', '/buckets/in.c-fuzz/tables-async', { json: { name: 't', dataFileId: await upload(Buffer.from('id,name\n1,a\n')) } })).body.id,
    );
    expect(created.status).toBe('success');
    tableId = 'in.c-fuzz.t';
    process.stderr.write(`\n[fuzz] seed ${SEED} (SAPI_FUZZ_SEED=${SEED} replays it), budget ${BUDGET_MS / 1000} s\n`);
  });

  async function send(
    method: string,
    path: string,
    body: Buffer | string | undefined,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: Json }> {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${env.emulator.url}${path}`, {
        method: method as 'POST',
        headers: { 'x-storageapi-token': TOKEN, ...headers },
        body,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      });
    } catch (error) {
      // a body over the limit is answered 413 and the connection closed while the client still writes it
      const code = (error as { code?: string }).code ?? '';
      if (Buffer.byteLength(body ?? '') > MAX_BODY_BYTES && ['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(code))
        return { status: 413, body: { error: 'closed', code: 'closed', exceptionId: `exception-${'0'.repeat(32)}`, status: 'error' } };
      throw error;
    }
    const text = await res.body.text();
    let parsed: Json = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: checked below
    }
    return { status: res.statusCode, body: parsed };
  }

  async function upload(content: Buffer): Promise<number> {
    const form = new FormData();
    form.append('data', new Blob([content]), 'fuzz.csv');
    const res = await request(`${env.emulator.importUrl}/upload-file`, { method: 'POST', headers: { 'x-storageapi-token': TOKEN }, body: form });
    const body = (await res.body.json()) as Json;
    if (res.statusCode !== 200) throw new Error(`upload: ${res.statusCode} ${JSON.stringify(body)}`);
    return body.id;
  }

  /** Records a failure unless the outcome is a success or a refusal shaped like the service's. */
  function judge(kind: string, o: Outcome): void {
    counts[kind] = (counts[kind] ?? 0) + 1;
    const shaped = (b: Json): boolean =>
      typeof b === 'object' &&
      b !== null &&
      typeof b.error === 'string' &&
      typeof b.code === 'string' &&
      /^exception-[0-9a-f]{32}$/.test(b.exceptionId) &&
      b.status === 'error';
    const problem =
      o.status >= 500 ? `HTTP ${o.status}` : o.status >= 400 && !shaped(o.body) ? `HTTP ${o.status} without the service's error shape` : undefined;
    if (problem) failures.push(`${kind}: ${o.what} → ${problem}: ${JSON.stringify(o.body).slice(0, 300)}`);
  }

  const tableRoutes = () => [
    '/v2/storage/buckets',
    '/v2/storage/buckets/in.c-fuzz/tables-async',
    '/v2/storage/buckets/in.c-fuzz/tables-definition',
    '/v2/storage/files/prepare',
    `/v2/storage/tables/${tableId}/export-async`,
    `/v2/storage/tables/${tableId}/import-async`,
  ];

  /** A JSON value, nested up to `depth`, with hostile keys and scalars. */
  function jsonValue(r: Rng, depth: number): unknown {
    const kind = depth <= 0 ? r.int(4) : r.int(7);
    switch (kind) {
      case 0:
        return r.text(r.int(40));
      case 1:
        return r.pick([0, -1, 1e308, -1e308, 2 ** 53 + 1, 0.5, NaN, true, false, null]);
      case 2:
        return r.pick(['1', 'true', '', ' ', 'in.c-fuzz', 'id', '\\t', '"', '%']);
      case 3:
        return r.text(r.int(2) ? 5 : 70_000);
      case 4:
        return Array.from({ length: r.int(6) }, () => jsonValue(r, depth - 1));
      default: {
        const keys = [
          'name',
          'stage',
          'dataFileId',
          'columns',
          'primaryKey',
          'delimiter',
          'enclosure',
          'whereFilters',
          'orderBy',
          'limit',
          'definition',
          'type',
          'nullable',
          '__proto__',
          'constructor',
          r.text(8),
        ];
        return Object.fromEntries(Array.from({ length: r.int(6) }, () => [r.pick(keys), jsonValue(r, depth - 1)]));
      }
    }
  }

  function jsonBody(r: Rng): { what: string; body: Buffer | string } {
    switch (r.int(6)) {
      case 0:
        return { what: 'deep arrays', body: '['.repeat(1 + r.int(200_000)) };
      case 1:
        return { what: 'deep objects', body: '{"a":'.repeat(1 + r.int(50_000)) + '1' + '}'.repeat(r.int(50_000)) };
      case 2:
        return { what: 'random bytes', body: r.bytes(r.int(2000)) };
      case 3:
        return { what: 'a body over the size limit', body: JSON.stringify({ name: 'x'.repeat(17 * 1024 * 1024) }) };
      default: {
        const body = JSON.stringify(jsonValue(r, 1 + r.int(6))) ?? 'null';
        return { what: `JSON ${body.slice(0, 120)}`, body: r.int(10) ? body : body.slice(0, r.int(body.length)) };
      }
    }
  }

  function formKey(r: Rng): string {
    const base = r.pick(['name', 'columns', 'whereFilters', 'tags', 'primaryKey', 'delimiter', 'dataFileId', '__proto__', 'constructor', 'a', '']);
    const segments = Array.from(
      { length: r.int(r.int(4) ? 4 : 40) },
      () => `[${r.pick(['', '0', '1', String(r.int(2 ** 32)), '__proto__', 'prototype', 'column', 'values', r.text(3)])}]`,
    );
    return base + segments.join('') + (r.int(8) ? '' : r.pick(['[', ']', '][']));
  }

  function formBody(r: Rng): string {
    if (!r.int(10)) return `${'a=1&'.repeat(r.int(40_000))}`;
    if (!r.int(10)) return r.text(r.int(3000));
    return Array.from({ length: 1 + r.int(30) }, () => `${encode(formKey(r))}=${r.int(2) ? encode(r.text(r.int(20))) : r.text(r.int(20))}`).join('&');
  }

  function multipartBody(r: Rng): { body: Buffer; headers: Record<string, string> } {
    const boundary = r.int(10) ? `fuzz${r.int(1e9)}` : r.text(r.int(80)).replace(/[^\x21-\x7e]/g, '-');
    const parts: Buffer[] = [];
    const count = r.int(12) ? 1 + r.int(6) : r.pick([2_100, 3_000]);
    for (let i = 0; i < count; i++) {
      const file = r.int(3) === 0;
      const name = r.int(4) ? r.pick(['data', 'name', 'tags[]', 'isPermanent', 'columns', 'delimiter']) : r.int(2) ? formKey(r) : 'n'.repeat(2_000);
      const disposition = `Content-Disposition: form-data; name="${name}"${file ? `; filename="${r.int(2) ? 'f.csv' : r.text(10)}"` : ''}`;
      const headers = r.int(20) ? disposition : `${disposition}\r\n${Array.from({ length: 200 }, (_, h) => `X-H${h}: v`).join('\r\n')}`;
      const value = file ? (r.int(2) ? Buffer.from('a,b\n1,2\n') : r.bytes(r.int(5000))) : Buffer.from(r.int(30) ? r.text(r.int(50)) : 'v'.repeat(1_100_000));
      parts.push(Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), value, Buffer.from('\r\n'));
    }
    if (r.int(6)) parts.push(Buffer.from(`--${boundary}--\r\n`));
    let body = Buffer.concat(parts);
    if (!r.int(8)) body = body.subarray(0, r.int(body.length));
    return {
      body,
      headers: {
        'content-type': r.int(15)
          ? `multipart/form-data; boundary=${boundary}`
          : r.pick(['multipart/form-data', 'multipart/form-data; boundary=', `multipart/mixed; boundary=${boundary}`]),
      },
    };
  }

  function queryString(r: Rng): string {
    if (!r.int(10)) return 'limit=1&'.repeat(r.int(30_000));
    if (!r.int(8)) return r.text(r.int(500));
    return Array.from({ length: 1 + r.int(12) }, () => {
      const key = r.int(2)
        ? formKey(r)
        : r.pick([
            'limit',
            'offset',
            'columns',
            'format',
            'changedSince',
            'changedUntil',
            'whereColumn',
            'whereValues[]',
            'whereOperator',
            'orderBy[0][column]',
            'orderBy[0][order]',
            'tags[]',
            'q',
            'runId',
          ]);
      const value = r.pick(['1', '-1', '1e309', '99999999999999999999', 'json', 'rfc', 'id', 'name,id', '-2 days', 'yesterday', '%', r.text(r.int(30))]);
      return `${encode(key)}=${r.int(4) ? encode(value) : value}`;
    }).join('&');
  }

  /** A CSV, one of a few hostile shapes, sometimes gzipped. */
  function csvFile(r: Rng): { what: string; content: Buffer } {
    const cols = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(',');
    let what: string;
    let content: Buffer;
    switch (r.int(9)) {
      case 0:
        what = 'random bytes';
        content = r.bytes(r.int(5000));
        break;
      case 1: {
        const n = r.pick([1, LIMIT - 1, LIMIT, LIMIT + 1, 5_000, 50_000]);
        what = `a header of ${n} columns`;
        content = Buffer.from(`${cols(n)}\n${Array.from({ length: n }, () => '1').join(',')}\n`);
        break;
      }
      case 2:
        what = 'a header of 1 MiB+ of one-character values';
        content = Buffer.from(`${'a,'.repeat(600_000 + r.int(400_000))}a\n`);
        break;
      case 3:
        what = 'a field of several MiB';
        content = Buffer.from(`id,v\n1,"${'x'.repeat(1 + r.int(6 * 1024 * 1024))}"\n`);
        break;
      case 4:
        what = 'an unclosed quote at the start';
        content = Buffer.from(`id,v\n1,"${'y\n'.repeat(r.int(100_000))}`);
        break;
      default: {
        const width = 1 + r.int(8);
        const header = r.int(6) ? cols(width) : Array.from({ length: width }, () => r.text(r.int(6))).join(',');
        const rows = Array.from({ length: r.int(50) }, () =>
          Array.from({ length: r.int(3) ? width : r.int(12) }, () => r.text(r.int(12))).join(r.pick([',', ',', ';'])),
        );
        what = `random text, ${width} columns`;
        content = Buffer.from(`${r.int(10) ? '' : '\uFEFF'}${header}${r.pick(['\n', '\r\n', '\r'])}${rows.join(r.pick(['\n', '\r\n']))}`);
      }
    }
    return r.int(6)
      ? { what, content }
      : { what: `${what}, gzipped${r.int(2) ? '' : ' and cut'}`, content: ((g) => (r.int(2) ? g : g.subarray(0, r.int(g.length))))(gzipSync(content)) };
  }

  /** Load parameters, some of them hostile. */
  function loadParams(r: Rng): Record<string, unknown> {
    const params: Record<string, unknown> = {};
    if (!r.int(3)) params.delimiter = r.pick([';', '\t', '\\t', '', ',,', '"', '\n']);
    if (!r.int(3)) params.enclosure = r.pick(['', "'", '"', '""']);
    if (!r.int(4)) params.escapedBy = r.pick(['\\', '', '"']);
    if (!r.int(5)) params.ignoredLinesCount = r.pick([1, 3, -1, 1e9]);
    if (!r.int(6)) params.treatValuesAsNull = r.pick([['NULL'], [''], 'x']);
    if (!r.int(6)) params.columns = r.pick([['a', 'b'], Array.from({ length: LIMIT + 1 }, (_, i) => `k${i}`), 'a,b']);
    if (!r.int(8)) params.withoutHeaders = true;
    if (!r.int(5)) params.primaryKey = r.pick(['c0', 'id', ['nope']]);
    return params;
  }

  /** Runs `one` with fresh randomness until the share of the budget is spent. */
  async function fuzz(kind: string, share: number, one: (r: Rng) => Promise<void>): Promise<void> {
    const r = prng(SEED ^ [...kind].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7));
    const deadline = Date.now() + Math.max(1_000, BUDGET_MS * share);
    do await one(r);
    while (Date.now() < deadline);
  }

  test('JSON bodies', async () => {
    await fuzz('json', 0.15, async (r) => {
      const { what, body } = jsonBody(r);
      const path = r.pick(tableRoutes());
      judge('json', {
        what: `${path} ${what}`,
        ...(await send('POST', path, body, { 'content-type': r.int(10) ? 'application/json' : 'application/json; charset=latin1' })),
      });
    });
    expect(failuresOf('json')).toEqual([]);
  });

  test('form bodies', async () => {
    await fuzz('form', 0.15, async (r) => {
      const body = formBody(r);
      const path = r.pick(tableRoutes());
      judge('form', {
        what: `${path} ${body.slice(0, 160)}`,
        ...(await send('POST', path, body, {
          'content-type': r.int(8) ? 'application/x-www-form-urlencoded' : r.pick(['text/plain', 'application/octet-stream', 'x/y']),
        })),
      });
    });
    expect(failuresOf('form')).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('multipart uploads', async () => {
    await fuzz('multipart', 0.15, async (r) => {
      const { body, headers } = multipartBody(r);
      const path = r.int(2) ? '/import/upload-file' : r.pick(tableRoutes());
      judge('multipart', { what: `${path} ${body.length} bytes (${headers['content-type']})`, ...(await send('POST', path, body, headers)) });
    });
    expect(failuresOf('multipart')).toEqual([]);
  });

  test('query strings', async () => {
    await fuzz('query', 0.15, async (r) => {
      const path = r.pick([
        `/v2/storage/tables/${tableId}/data-preview`,
        '/v2/storage/jobs',
        '/v2/storage/files',
        '/v2/storage/tables',
        '/v2/storage/events',
        `/v2/storage/tables/${tableId}`,
        '/v2/storage',
      ]);
      const query = queryString(r);
      judge('query', { what: `GET ${path}?${query.slice(0, 160)}`, ...(await send('GET', `${path}?${query}`, undefined, {})) });
    });
    expect(failuresOf('query')).toEqual([]);
  });

  test('CSV loads', async () => {
    let n = 0;
    await fuzz('csv', 0.4, async (r) => {
      const { what, content } = csvFile(r);
      const params = loadParams(r);
      const fileId = await upload(content);
      const create = r.int(3) > 0;
      const path = create ? '/v2/storage/buckets/in.c-fuzz/tables-async' : `/v2/storage/tables/${tableId}/import-async`;
      const res = await send(
        'POST',
        path,
        JSON.stringify({ ...params, ...(create ? { name: `f${++n}` } : { incremental: r.int(2) === 0 }), dataFileId: fileId }),
        { 'content-type': 'application/json' },
      );
      const described = `${path} of ${what} with ${JSON.stringify(params).slice(0, 200)}`;
      judge('csv', { what: described, ...res });
      if (res.status !== 202) return;
      const job = await waitForJob(env.api, res.body.id, 120_000);
      if (job.status === 'error' && (job.error.code === 'storage.jobs.internalError' || !/^exception-/.test(job.error.exceptionId))) {
        failures.push(`csv: ${described} → job error ${job.error.code}: ${String(job.error.message).slice(0, 300)}`);
      }
    });
    expect(failuresOf('csv')).toEqual([]);
  });

  test('the emulator stayed up, was never restarted, and stayed under its memory ceiling', async () => {
    expect(env.restarts).toEqual([]);
    expect((await env.api('GET', '/tables')).status).toBe(200);
    const { peakMb } = memoryOf(env.emulator.pid);
    process.stderr.write(`[fuzz] inputs per parser: ${JSON.stringify(counts)}; emulator peak RSS ${peakMb} MB\n`);
    expect(peakMb).toBeLessThan(PEAK_RSS_CEILING_MB);
  });
});
