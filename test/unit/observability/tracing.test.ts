import { commandAttributes } from '../../../src/cli/tracing';
import { cleanAttributes, dropWorkflowInfo, tracesUrlOf, tracingFromEnv } from '../../../src/observability/tracing';
import { pathWithoutQuery, urlAttributes, withSpan } from '../../../src/observability/spans';
import { storageRequestAttributes, storageResponseAttributes, storageSpanName } from '../../../src/storage-api/trace';
import { loadSettings } from '../../../src/config';
import { tracedBuildId } from '../../../src/worker';

describe('tracing settings', () => {
  it('are off without a collector, and read SAPI_OTEL_ENDPOINT before the standard OTEL_EXPORTER_OTLP_* variables', () => {
    expect(tracingFromEnv({})).toBeUndefined();
    expect(tracingFromEnv({ SAPI_OTEL_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318' })).toEqual({
      endpoint: 'http://collector:4318',
    });
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom', OTEL_SERVICE_NAME: 'etl' })).toEqual({
      tracesUrl: 'http://c:4318/custom',
      serviceName: 'etl',
    });
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({ endpoint: 'http://c:4318' });
    expect(tracingFromEnv({ SAPI_OTEL_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingFromEnv({ SAPI_OTEL_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  });

  it('post spans to <endpoint>/v1/traces, or to the full traces URL given', () => {
    expect(tracesUrlOf({ endpoint: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(tracesUrlOf({ tracesUrl: 'http://c/t' })).toBe('http://c/t');
    expect(tracesUrlOf({})).toBeUndefined();
  });

  it('refuse a collector that is not an http(s) URL, naming the variable, and keep the collector out of reach of inputs', () => {
    const env = { SAPI_URL: 'http://sapi.example', SAPI_TOKEN: 't' };
    expect(() => loadSettings({ ...env, SAPI_OTEL_ENDPOINT: 'collector:4318' })).toThrow(/SAPI_OTEL_ENDPOINT .*must be an http\(s\) URL/);
    const settings = loadSettings({ ...env, SAPI_OTEL_ENDPOINT: 'http://10.1.2.3:4318' });
    expect(settings.observability.tracing).toEqual({ endpoint: 'http://10.1.2.3:4318' });
    expect(settings.policy.internalOrigins).toContain('10.1.2.3:4318');
    expect(loadSettings(env).observability.tracing).toBeUndefined();
  });
});

describe('span attributes', () => {
  it('name a Storage API request by its route and read the ids from its path and body', () => {
    expect(storageSpanName('POST', '/v2/storage/branch/7/tables/in.c-main.orders/import-async')).toBe(
      'Storage API POST /v2/storage/branch/{id}/tables/{id}/import-async',
    );
    expect(storageSpanName('GET', '/v2/storage/jobs/123?x=1')).toBe('Storage API GET /v2/storage/jobs/{id}');
    expect(storageSpanName('POST', '/v2/storage/files/prepare')).toBe('Storage API POST /v2/storage/files/prepare');
    expect(storageRequestAttributes('/v2/storage/tables/in.c-main.orders/import-async', { dataFileId: 42 })).toEqual({
      'sapi.table_id': 'in.c-main.orders',
      'sapi.file_id': '42',
    });
    expect(storageRequestAttributes('/v2/storage/buckets/in.c-main/tables-async', undefined)).toEqual({ 'sapi.bucket_id': 'in.c-main' });
    expect(storageRequestAttributes('/v2/storage/files/prepare', { name: 'x.csv' })).toEqual({});
  });

  it('read a created or polled job, and a prepared file, from the answer: ids only, never its credentials', () => {
    expect(storageResponseAttributes('/v2/storage/jobs/9', { id: 9, status: 'success', operationName: 'tableImport', results: { secret: 'no' } })).toEqual({
      'sapi.job_id': '9',
      'sapi.job_status': 'success',
      'sapi.job_operation': 'tableImport',
    });
    expect(storageResponseAttributes('/v2/storage/files/prepare', { id: 5, uploadParams: { credentials: { SecretAccessKey: 'k' } } })).toEqual({
      'sapi.file_id': '5',
    });
    expect(storageResponseAttributes('/v2/storage/tables', [{ id: 'in.c-a.b' }])).toEqual({});
  });

  it("never carry a URL's query or user info", () => {
    expect(urlAttributes('https://user:pw@bucket.s3.amazonaws.com/key.csv?X-Amz-Signature=abc&X-Amz-Credential=def')).toEqual({
      'server.address': 'bucket.s3.amazonaws.com',
      'server.port': undefined,
      'url.path': '/key.csv',
    });
    expect(pathWithoutQuery('/a/b?sig=1#f')).toBe('/a/b');
    expect(cleanAttributes({ a: 'https://x/y?sv=1&sig=abc', b: undefined, c: 3, d: '/plain?page=2' })).toEqual({ a: 'https://x/y', c: 3, d: '/plain?page=2' });
  });

  it('of a CLI command name the workflow, the table and the bucket', () => {
    const settings = { taskQueue: 'q' } as Parameters<typeof commandAttributes>[0]['settings'];
    expect(
      commandAttributes({
        workflowType: 'importTableWorkflow',
        workflowId: 'w',
        input: { source: 'https://x/f.csv?sig=s', bucketId: 'in.c-a', table: 't' } as never,
        settings,
      }),
    ).toEqual({
      'sapi.workflow_type': 'importTableWorkflow',
      'sapi.workflow_id': 'w',
      'sapi.task_queue': 'q',
      'sapi.table_id': 'in.c-a.t',
      'sapi.bucket_id': 'in.c-a',
    });
  });
});

describe('a workflow span', () => {
  it('keeps the WorkflowInfo fields that name the run, and drops memo, last result and failure, search attributes', () => {
    const attributes: Record<string, unknown> = {
      workflowId: 'w',
      runId: 'r',
      workflowType: 'importTableWorkflow',
      taskQueue: 'q',
      memo: { a: 1 },
      lastResult: { rows: 1 },
      lastFailure: { message: 'x' },
      searchAttributes: {},
      unsafe: {},
      temporalUpdateId: 'u',
    };
    dropWorkflowInfo(attributes);
    expect(attributes).toEqual({ workflowId: 'w', runId: 'r', workflowType: 'importTableWorkflow', taskQueue: 'q', temporalUpdateId: 'u' });
  });
});

describe('withSpan while tracing is off', () => {
  it('just runs the function, building no attributes', async () => {
    const attributes = jest.fn(() => ({}));
    await expect(withSpan('x', attributes, async () => 7)).resolves.toBe(7);
    expect(attributes).not.toHaveBeenCalled();
  });
});

describe('the build id of a traced worker', () => {
  it('carries the tracing switch even when SAPI_BUILD_ID names it (a traced bundle is another version)', () => {
    expect(tracedBuildId('2026-11-27.1', false)).toBe('2026-11-27.1');
    expect(tracedBuildId('2026-11-27.1', true)).toBe('2026-11-27.1+traced');
  });
});
