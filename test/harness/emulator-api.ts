/**
 * The emulator's HTTP API as tests call it (a small undici client, uploads, jobs, buckets, tables), and an emulator
 * on the in-memory store for a test file: route and job semantics run in-process, in the unit tier, with no other
 * process. Tests that need a real object-storage server use `test/integration/emulator/support.ts` (MinIO).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FormData, request } from 'undici';
import { createEmulator, type EmulatorHandle, type EmulatorOptions } from '../../src/emulator';

/** Parsed JSON of a response: tests read fields freely and assert on them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiResponse<T = Json> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

export const TOKEN = 'test-token-1';
export const OTHER_TOKEN = 'test-token-2';

/** A small HTTP client over undici: JSON in and out, token sent unless `token: null`. */
export function client(emulator: { url: string; importUrl: string }) {
  async function call<T = Json>(
    method: string,
    path: string,
    options: {
      json?: unknown;
      form?: string | Record<string, string>;
      multipart?: FormData;
      /** A body sent as is (with its content-type in `headers`). */
      raw?: string;
      token?: string | null;
      base?: 'service' | 'import' | 'root';
      headers?: Record<string, string>;
    } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== null) headers['x-storageapi-token'] = options.token ?? TOKEN;
    let body: string | FormData | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = typeof options.form === 'string' ? options.form : new URLSearchParams(options.form).toString();
    } else if (options.multipart) {
      body = options.multipart;
    } else if (options.raw !== undefined) {
      body = options.raw;
    }
    const base = options.base === 'import' ? emulator.importUrl : options.base === 'root' ? emulator.url : `${emulator.url}/v2/storage`;
    const res = await request(`${base}${path}`, { method: method as 'GET', headers, body });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.statusCode, headers: res.headers, body: parsed as T };
  }
  return call;
}

export type Client = ReturnType<typeof client>;

/** Uploads CSV text through the importer and returns the file id. */
export async function uploadViaImporter(api: Client, content: string | Buffer, name = 'data.csv', fields: Record<string, string> = {}): Promise<number> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('data', new Blob([content]), name);
  const res = await api('POST', '/upload-file', { multipart: form, base: 'import' });
  if (res.status !== 200) throw new Error(`importer upload failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as number;
}

/** Polls a job until it is finished. */
export async function waitForJob(api: Client, jobId: number, timeoutMs = 60_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api('GET', `/jobs/${jobId}`);
    if (res.status !== 200) throw new Error(`job ${jobId}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    if (res.body.status === 'success' || res.body.status === 'error') return res.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function createBucket(api: Client, name = 'main', stage = 'in'): Promise<string> {
  const res = await api('POST', '/buckets', { json: { name, stage } });
  if (res.status !== 201) throw new Error(`bucket create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Creates a table from CSV text (importer upload + tables-async) and returns the finished job. */
export async function createTable(api: Client, bucketId: string, name: string, csv: string | Buffer, extra: Record<string, unknown> = {}): Promise<Json> {
  const fileId = await uploadViaImporter(api, csv);
  const res = await api('POST', `/buckets/${bucketId}/tables-async`, { json: { name, dataFileId: fileId, ...extra } });
  if (res.status !== 202) throw new Error(`tables-async failed: ${res.status} ${JSON.stringify(res.body)}`);
  return waitForJob(api, res.body.id);
}

export async function importTable(api: Client, tableId: string, csv: string | Buffer, extra: Record<string, unknown> = {}): Promise<Json> {
  const fileId = await uploadViaImporter(api, csv);
  const res = await api('POST', `/tables/${tableId}/import-async`, { json: { dataFileId: fileId, ...extra } });
  if (res.status !== 202) throw new Error(`import-async failed: ${res.status} ${JSON.stringify(res.body)}`);
  return waitForJob(api, res.body.id);
}

/** Fails with the job's own error message when it did not succeed. */
export function expectSuccess(job: Json): Json {
  if (job.status !== 'success') throw new Error(`job ${job.id} (${job.operationName}) ended ${job.status}: ${JSON.stringify(job.error)}`);
  return job;
}

/** Options for an emulator on the in-memory store (files, tables and records in its memory), in a fresh data folder for temp files. */
export function memoryEmulatorOptions(extra: Partial<EmulatorOptions> = {}): EmulatorOptions {
  return {
    port: 0,
    dataDir: extra.dataDir ?? mkdtempSync(join(tmpdir(), 'sapi-emulator-data-')),
    store: 'memory',
    tokens: [
      { token: TOKEN, id: 101, description: 'test token' },
      { token: OTHER_TOKEN, id: 102 },
    ],
    ...extra,
  };
}

/** One emulator on the in-memory store for a test file. */
export function useMemoryEmulator(extra: Partial<EmulatorOptions> = {}) {
  const env = {} as { emulator: EmulatorHandle; api: Client; dataDir: string };
  beforeAll(async () => {
    const options = memoryEmulatorOptions(extra);
    env.dataDir = options.dataDir;
    env.emulator = await createEmulator(options);
    env.api = client(env.emulator);
  });
  afterAll(async () => {
    await env.emulator?.close();
    if (env.dataDir) rmSync(env.dataDir, { recursive: true, force: true });
  });
  return env;
}
