/**
 * Tracing end to end: a worker (own process, SAPI_OTEL_ENDPOINT set, bundling its workflows itself as a deployed worker
 * does) and the real CLI send their spans over OTLP/HTTP (JSON) to a small receiver in this test; an import started by
 * the CLI is one trace from the command down to each Storage API request, and no span carries a secret.
 */
import { type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ExtractResult } from '../../../src/contracts/extract';
import { createSampleApi, type SampleApi } from '../../../src/sample-api';
import { runCli, spawnTs, waitForLine } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';
import { FAST_FETCH, sampleConfig } from '../extract/support';

jest.setTimeout(120_000);

/** A span as the receiver decoded it from OTLP/JSON. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  service: string;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: OtlpAttribute[] }> }>;
  }>;
}

function valueOf(v: OtlpValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue ?? '';
}

const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** An OTLP/HTTP trace receiver: `POST /v1/traces` with a JSON body, as `@opentelemetry/exporter-trace-otlp-http` sends it. */
async function startReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; bodies: string[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
        res.writeHead(415).end();
        return;
      }
      bodies.push(body);
      const request = JSON.parse(body) as OtlpRequest;
      for (const resourceSpans of request.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              service,
              attributes: attributesOf(span.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, bodies, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

/** Runs `check` until it passes (spans arrive in batches), at most `timeoutMs`; then its last failure. */
async function until(check: () => void, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((ok) => setTimeout(ok, 100));
    }
  }
}

/** The chain of span names from `span` up to its trace's root (within what was received). */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const names: string[] = [];
  for (let at: ReceivedSpan | undefined = span; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) names.push(at.name);
  return names;
}

describe('traces over OTLP/HTTP', () => {
  let env: SapiTestEnv;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let worker: ChildProcess | undefined;
  let api: SampleApi;
  const token = () => env.settings.connections.default!.token;

  beforeAll(async () => {
    [env, receiver, api] = await Promise.all([startSapiTestEnv('tracing', { worker: false }), startReceiver(), createSampleApi({ records: 25, pageSize: 10 })]);
    const stack = testStack();
    worker = spawnTs('test/harness/worker-child.ts', [], {
      ...stack.env,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      SAPI_URL: env.emulator.url,
      SAPI_TOKEN: token(),
      SAPI_WORK_DIR: join(env.dataDir, 'work'),
      SAPI_PART_SIZE_MIB: '5',
      SAPI_LOG_LEVEL: 'ERROR',
      SAPI_OTEL_ENDPOINT: receiver.url,
      // batches leave every 100 ms instead of 5 s
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // no prebuilt bundle: the worker bundles the workflows with the plugin's workflow interceptor modules
      SAPI_TEST_WORKFLOW_BUNDLE: '',
      SAPI_TEST_WORKER_IDENTITY: `tracing-worker-${process.pid}`,
    });
    // (bundling takes ~15 s on an idle machine, minutes on a loaded one)
    await waitForLine(worker, /^READY$/, 240_000);
  }, 300_000);
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((ok) => worker!.once('exit', ok));
      worker.kill('SIGTERM');
      await exited;
    }
    await api?.close();
    await env?.stop();
    await receiver?.close();
  });

  it('follow a CLI import as one trace: command, start, workflow, activities, each Storage API request with the job id; no secret in any span', async () => {
    const source = join(env.dataDir, 'traced.csv');
    writeFileSync(source, `id,name\n${Array.from({ length: 50 }, (_, i) => `${i},row-${i}`).join('\n')}\n`);
    const workflowId = `traced-import-${Date.now()}`;
    const stack = testStack();
    const outcome = await runCli(
      ['import', source, '--bucket', 'in.c-traced', '--create-bucket', '--table', 'rows', '--workflow-id', workflowId, '--task-queue', env.taskQueue, '--json'],
      {
        TEMPORAL_ADDRESS: stack.temporalAddress,
        TEMPORAL_NAMESPACE: stack.namespace,
        SAPI_URL: undefined,
        SAPI_TOKEN: undefined,
        SAPI_OTEL_ENDPOINT: receiver.url,
      },
    );
    expect(outcome.stderr).not.toMatch(/tracing|opentelemetry/i);
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ importedRowsCount: 50 });

    // the command's root span and the workflow's spans (sent when the workflow ended) have arrived
    const ofRun = () => {
      const root = receiver.spans.find((s) => s.name === 'sapi-temporal import' && s.attributes['sapi.workflow_id'] === workflowId);
      return root ? receiver.spans.filter((s) => s.traceId === root.traceId) : [];
    };
    await until(() => {
      const names = ofRun().map((s) => s.name);
      expect(names).toEqual(expect.arrayContaining(['sapi-temporal import', 'StartWorkflow:importTableWorkflow', 'RunWorkflow:importTableWorkflow']));
      expect(ofRun().some((s) => s.attributes['sapi.job_id'] !== undefined && s.attributes['sapi.job_status'] === 'success')).toBe(true);
    }, 20_000);
    const trace = ofRun();

    // one trace per import: every span naming this workflow is in it
    const naming = receiver.spans.filter((s) => s.attributes.temporalWorkflowId === workflowId || s.attributes['sapi.workflow_id'] === workflowId);
    expect(new Set(naming.map((s) => s.traceId))).toEqual(new Set([trace[0]!.traceId]));
    expect(trace.filter((s) => s.parentSpanId === undefined).map((s) => s.name)).toEqual(['sapi-temporal import']);
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(['sapi-temporal-cli', 'sapi-temporal-worker']));
    // the workflow span names the run, and carries none of its payloads (memo, last result, …)
    const run = trace.find((s) => s.name === 'RunWorkflow:importTableWorkflow')!;
    expect(run.attributes).toMatchObject({ workflowId, workflowType: 'importTableWorkflow', taskQueue: env.taskQueue });
    expect(
      Object.keys(run.attributes).filter((key) => ['memo', 'lastResult', 'lastFailure', 'searchAttributes', 'typedSearchAttributes', 'unsafe'].includes(key)),
    ).toEqual([]);
    // the progress polling of the command is not traced
    expect(trace.filter((s) => s.name.startsWith('QueryWorkflow'))).toEqual([]);

    // a Storage API request with the job's id hangs under an activity, under the workflow, under the command's start
    const jobSpan = trace.find((s) => s.name.startsWith('Storage API GET') && s.attributes['sapi.job_status'] === 'success')!;
    expect(jobSpan.attributes).toMatchObject({ 'sapi.job_id': expect.stringMatching(/^\d+$/), 'http.request.method': 'GET', 'http.response.status_code': 200 });
    expect(jobSpan.name).toBe('Storage API GET /v2/storage/jobs/{id}');
    const chain = ancestry(trace, jobSpan);
    expect(chain[1]).toMatch(/^RunActivity:/);
    expect(chain[2]).toMatch(/^StartActivity:/);
    expect(chain.slice(3)).toEqual(['RunWorkflow:importTableWorkflow', 'StartWorkflow:importTableWorkflow', 'sapi-temporal import']);
    // the job's creation names the table and the file it loads
    const created = trace.find((s) => /-async$/.test(s.name) && s.attributes['sapi.job_id'] === jobSpan.attributes['sapi.job_id'])!;
    expect(created.attributes).toMatchObject({ 'sapi.bucket_id': 'in.c-traced', 'sapi.file_id': expect.stringMatching(/^\d+$/) });
    // the upload went to the object store (MinIO) under the upload activity
    const put = trace.find((s) => s.name.startsWith('S3 ') && s.attributes['aws.s3.key'] !== undefined);
    expect(put).toBeDefined();
    expect(ancestry(trace, put!)[1]).toMatch(/^RunActivity:/);

    // no secret anywhere in what was sent: the Storage token, the object store's key, a signature
    const sent = receiver.bodies.join('\n');
    expect(sent).not.toContain(token());
    expect(sent).not.toContain(stack.minio.secretAccessKey);
    expect(sent).not.toMatch(/X-Amz-Signature|X-Amz-Credential|sig=/i);
  });

  it('record each extracted page as a span with its page number under the fetchPages activity', async () => {
    const config = sampleConfig(
      api,
      { method: 'response.param', responseParam: 'meta.next_cursor', queryParam: 'cursor' },
      [{ endpoint: 'cursor/items', dataType: 'users' }],
      'traced',
    );
    const workflowId = `traced-extract-${Date.now()}`;
    const result = (await env.client.workflow.execute('extractWorkflow', {
      taskQueue: env.taskQueue,
      workflowId,
      args: [{ config, options: { fetch: FAST_FETCH, polling: { initialMs: 200, maxMs: 1000 }, mode: 'page' } }],
    })) as ExtractResult;
    expect(result).toMatchObject({ pages: 3, records: 25 });

    await until(() => {
      const run = receiver.spans.find((s) => s.name === 'RunWorkflow:extractWorkflow' && s.attributes.workflowId === workflowId);
      expect(run).toBeDefined();
      const pages = receiver.spans.filter((s) => s.traceId === run!.traceId && s.name === 'extract page');
      expect(pages.map((s) => s.attributes['sapi.page_number']).sort()).toEqual([1, 2, 3]);
      for (const page of pages) {
        expect(page.attributes).toMatchObject({ 'url.path': '/cursor/items', 'http.response.status_code': 200, 'server.address': '127.0.0.1' });
        expect(ancestry(receiver.spans, page)[1]).toBe('RunActivity:fetchPages');
      }
    }, 20_000);
  });
});
