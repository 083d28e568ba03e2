import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { codecDataConverter, EncryptionCodec, parseCodecKeys } from '../../../src/codec';
import { findTemporal } from '../../../src/dev/tools';
import { startWorker } from '../../../src/worker';
import { IDENTIFYING_SEARCH_ATTRIBUTES } from '../../../src/contracts/search-attributes';
import { historyText } from '../../harness/history';
import { eventually, spawnTs, waitForLine } from '../../harness/processes';
import { noteSecret } from '../../harness/secret-ledger';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

const run = promisify(execFile);
/** The CLI the test stack runs (SAPI_TEMPORAL_BIN, PATH or the tools folder, SAPI_TOOLS_DIR included). */
const temporalCli = findTemporal().path;
const UI_ORIGIN = 'http://ui.example:8080';

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** `temporal … --output json` with every payload's base64 `data` decoded to text, for searching. */
function cliHistoryText(stdout: string): string {
  return JSON.stringify(JSON.parse(stdout), (key, value: unknown) =>
    key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value,
  );
}

/** Every payload of a history, in the codec-server JSON form (bytes as base64). */
async function historyPayloads(handle: WorkflowHandle): Promise<JsonPayload[]> {
  const found: JsonPayload[] = [];
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    const candidate = value as { metadata?: Record<string, Uint8Array>; data?: Uint8Array };
    if (candidate.metadata && typeof candidate.metadata === 'object' && candidate.data instanceof Uint8Array) {
      found.push({
        metadata: Object.fromEntries(Object.entries(candidate.metadata).map(([key, bytes]) => [key, Buffer.from(bytes).toString('base64')])),
        data: Buffer.from(candidate.data).toString('base64'),
      });
      return;
    }
    for (const inner of Object.values(value)) walk(inner);
  };
  walk((await handle.fetchHistory()).events);
  return found;
}

describe('payload encryption and the codec server', () => {
  const stack = testStack();
  const key = `k1:${randomBytes(32).toString('base64')}`;
  const token = randomBytes(24).toString('hex');
  const secretName = `private-${randomBytes(4).toString('hex')}`;
  const bucketId = `in.c-${secretName}`;
  let env: SapiTestEnv;
  let rawConnection: Connection;
  let rawClient: Client;
  let codecServer: ChildProcess;
  let codecUrl: string;
  let imported: WorkflowHandle;
  let source: string;

  beforeAll(async () => {
    noteSecret('a bucket name only the codec may see', secretName);
    noteSecret('the codec server token', token);
    noteSecret('the codec key', key.slice('k1:'.length));
    env = await startSapiTestEnv('codec', { env: { SAPI_CODEC_KEYS: key }, worker: false });
    // built from the plugin's workflowsPath, so the sandbox gets the failure converter that encodes messages too
    env.worker = await startWorker({ settings: env.settings, checkConnections: false });
    rawConnection = await Connection.connect({ address: stack.temporalAddress });
    rawClient = new Client({ connection: rawConnection, namespace: stack.namespace });
    codecServer = spawnTs('bin/sapi-temporal.js', ['--', 'codec-server', '--port', '0', '--cors-origin', UI_ORIGIN], {
      SAPI_CODEC_KEYS: key,
      SAPI_CODEC_SERVER_TOKEN: token,
    });
    codecUrl = (await waitForLine(codecServer, /^codec server at (http:\/\/\S+)/))[1]!;

    source = join(env.dataDir, `${secretName}.csv`);
    writeFileSync(source, 'id,v\n1,a\n2,b\n');
    imported = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `codec-import-${Date.now()}`,
      args: [{ source, bucketId, createBucket: true, table: 't', polling: { initialMs: 200 } }],
    });
    await imported.result();
  });

  afterAll(async () => {
    codecServer?.kill('SIGTERM');
    await rawConnection?.close();
    await env?.stop();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${codecUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('keeps every workflow input value out of the raw history of an import run with keys', async () => {
    const raw = rawClient.workflow.getHandle(imported.workflowId);
    const text = await historyText(raw);
    // the scan sees the payloads (metadata stays base64 in the history's JSON form): they are encrypted
    expect(text).toContain(`"encoding":"${Buffer.from('binary/encrypted').toString('base64')}"`);
    expect(text).toContain(`"encryption-key-id":"${Buffer.from('k1').toString('base64')}"`);
    expect(text).not.toContain(secretName);
    expect(text).not.toContain(env.dataDir);
    // every input and result: only the SDK's own markers (the local activity's bookkeeping) and search attributes
    // (indexed, never encrypted) stay json/plain
    const plain = (await historyPayloads(raw)).filter((payload) => Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString() !== 'binary/encrypted');
    const texts = plain.filter((payload) => payload.metadata?.type === undefined).map((payload) => Buffer.from(payload.data ?? '', 'base64').toString());
    const sdkOwn = (text: string) => text.includes('"activity_type":"registeredSearchAttributes"');
    expect(texts.filter((text) => !sdkOwn(text))).toEqual([]);
    // and the search attributes it sets name nothing of the user's: no table, bucket, connection, host or state key
    const upserted = ((await raw.fetchHistory()).events ?? []).flatMap((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    expect(upserted).toContain('SapiOperation');
    expect(upserted.filter((name) => IDENTIFYING_SEARCH_ATTRIBUTES.includes(name))).toEqual([]);
  });

  it('encrypts failure messages and stack traces too', async () => {
    const missing = join(env.dataDir, `missing-${secretName}.csv`);
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `codec-failure-${Date.now()}`,
      args: [{ source: missing, bucketId, table: 'gone', polling: { initialMs: 200 } }],
      retry: { maximumAttempts: 1 },
    });
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeDefined();
    const text = await historyText(rawClient.workflow.getHandle(handle.workflowId));
    expect(text).toMatch(/ActivityTaskFailed|WorkflowExecutionFailed|EVENT_TYPE_(ACTIVITY_TASK|WORKFLOW_EXECUTION)_FAILED|"failure"/);
    expect(text).toContain('Encoded failure');
    expect(text).not.toContain(secretName);
  });

  it('decodes the raw history through the codec server for a caller with the token', async () => {
    const payloads = await historyPayloads(rawClient.workflow.getHandle(imported.workflowId));
    expect(payloads.length).toBeGreaterThan(3);
    const response = await post('/decode', { payloads }, { authorization: `Bearer ${token}`, 'x-namespace': stack.namespace, origin: UI_ORIGIN });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    const decoded = (await response.json()) as { payloads: JsonPayload[] };
    expect(decoded.payloads).toHaveLength(payloads.length);
    const text = decoded.payloads.map((payload) => Buffer.from(payload.data ?? '', 'base64').toString('utf8')).join('\n');
    expect(text).toContain(source);
    expect(text).toContain(bucketId);
    expect(Buffer.from(decoded.payloads[0]!.metadata!.encoding!, 'base64').toString()).toBe('json/plain');

    // the UI's alternative when it cannot send a header: the token as the path segment before /decode
    expect((await post(`/${token}/decode`, { payloads: payloads.slice(0, 1) })).status).toBe(200);
    // and /encode gives payloads /decode reads back
    const encoded = (await (await post('/encode', { payloads: decoded.payloads.slice(0, 1) }, { authorization: `Bearer ${token}` })).json()) as {
      payloads: JsonPayload[];
    };
    expect(Buffer.from(encoded.payloads[0]!.metadata!.encoding!, 'base64').toString()).toBe('binary/encrypted');
  });

  it('refuses decoding without the token or with a wrong one, and answers CORS preflights for the UI origin only', async () => {
    const payloads = (await historyPayloads(rawClient.workflow.getHandle(imported.workflowId))).slice(0, 1);
    const without = await post('/decode', { payloads });
    expect(without.status).toBe(401);
    expect(JSON.stringify(await without.json())).not.toContain(secretName);
    expect((await post('/decode', { payloads }, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post('/wrong/decode', { payloads })).status).toBe(401);

    const preflight = await fetch(`${codecUrl}/decode`, {
      method: 'OPTIONS',
      headers: { origin: UI_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace,authorization' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type, x-namespace, authorization');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const stranger = await fetch(`${codecUrl}/decode`, { method: 'OPTIONS', headers: { origin: 'http://evil.example' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('rotates the key under a running import: the new key encrypts what follows, the old one still decrypts, a client without it says which key is missing', async () => {
    const rotated = `k2:${randomBytes(32).toString('base64')}`;
    noteSecret('the rotated codec key', rotated.slice('k2:'.length));
    // the job runs until the workers run with the rotated key
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const running = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: `codec-rotation-${Date.now()}`,
      args: [{ source, bucketId, table: 'rotated', polling: { initialMs: 200 } }],
    });
    await eventually(
      async () => (await running.query<{ phase: string }>('progress').catch(() => undefined))?.phase === 'importing',
      60_000,
      'the import never reached its job',
    );
    // the rotation: workers restart with the new key first and the old one kept for what history already holds
    await env.worker.stop();
    const settings = { ...env.settings, codecKeys: parseCodecKeys([rotated, key], 'test') };
    env.worker = await startWorker({ settings, checkConnections: false });
    env.emulator.faults.releaseJobs('tableCreate');
    const rotatedClient = new Client({ connection: rawConnection, namespace: stack.namespace, dataConverter: codecDataConverter(settings.codecKeys) });
    const result = await rotatedClient.workflow.getHandle(running.workflowId).result();
    expect(result).toMatchObject({ tableId: `${bucketId}.rotated`, importedRowsCount: 2 });

    const text = await historyText(rawClient.workflow.getHandle(running.workflowId));
    expect(text).toContain(`"encryption-key-id":"${Buffer.from('k1').toString('base64')}"`); // the start, before
    expect(text).toContain(`"encryption-key-id":"${Buffer.from('k2').toString('base64')}"`); // the result, after
    expect(text).not.toContain(secretName);

    // a client that dropped the old key too early cannot read what it encrypted, and says which key it lacks
    const oldPayloads = (await historyPayloads(rawClient.workflow.getHandle(running.workflowId))).filter(
      (payload) => Buffer.from(payload.metadata?.['encryption-key-id'] ?? '', 'base64').toString() === 'k1',
    );
    expect(oldPayloads.length).toBeGreaterThan(0);
    const newKeyOnly = new EncryptionCodec(parseCodecKeys([rotated], 'test'));
    const asProto = oldPayloads.map((payload) => ({
      metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(payload.data ?? '', 'base64'),
    }));
    await expect(newKeyOnly.decode(asProto)).rejects.toThrow(/payload encrypted with key "k1", which is not configured/);
  });

  it('lets `temporal workflow show --codec-endpoint` print the decoded input', async () => {
    const common = ['workflow', 'show', '-w', imported.workflowId, '--address', stack.temporalAddress, '--namespace', stack.namespace, '--output', 'json'];
    const decoded = await run(temporalCli, [...common, '--codec-endpoint', codecUrl, '--codec-auth', `Bearer ${token}`]);
    expect(cliHistoryText(decoded.stdout)).toContain(source);
    expect(cliHistoryText(decoded.stdout)).toContain(bucketId);
    const plain = await run(temporalCli, common);
    expect(cliHistoryText(plain.stdout)).not.toContain(secretName);
    const refused = await run(temporalCli, [...common, '--codec-endpoint', codecUrl, '--codec-auth', 'Bearer wrong']).then(
      (outcome) => `${outcome.stdout}${outcome.stderr}`,
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(refused).not.toContain(secretName);
  });
});
