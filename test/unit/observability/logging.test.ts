import { formatJsonLogLine, createWorkerLogger, metricsEndpointError } from '../../../src/observability';
import { loadSettings } from '../../../src/config';

describe('JSON worker logs', () => {
  const entry = {
    level: 'WARN' as const,
    message: 'Activity failed',
    timestampNanos: 1_700_000_000_123_456_789n,
    meta: {
      sdkComponent: 'activity',
      workflowId: 'import-1',
      runId: 'run-1',
      activityId: '7',
      activityType: 'uploadFile',
      taskQueue: 'sapi-temporal',
      attempt: 2,
      error: Object.assign(new Error('upload failed [bucket=b, key=k, part=12]\nsecond line'), { type: 'SAPI_UPLOAD_FAILED' }),
    },
  };

  it("writes one entry as exactly one line of JSON with time, level, message and the SDK's context", () => {
    const line = formatJsonLogLine(entry);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      time: '2023-11-14T22:13:20.123Z',
      level: 'WARN',
      message: 'Activity failed',
      workflowId: 'import-1',
      runId: 'run-1',
      activityId: '7',
      activityType: 'uploadFile',
      taskQueue: 'sapi-temporal',
      attempt: 2,
    });
    expect(parsed.error).toMatchObject({ name: 'Error', message: 'upload failed [bucket=b, key=k, part=12]\nsecond line', type: 'SAPI_UPLOAD_FAILED' });
  });

  it('keeps time, level and message from the entry even when the metadata has the same keys, and survives cycles and bigints', () => {
    const cyclic: Record<string, unknown> = { big: 5n };
    cyclic.self = cyclic;
    const parsed = JSON.parse(formatJsonLogLine({ ...entry, meta: { message: 'spoofed', level: 'DEBUG', time: 'x', cyclic } })) as Record<string, unknown>;
    expect(parsed).toMatchObject({ message: 'Activity failed', level: 'WARN', time: '2023-11-14T22:13:20.123Z', cyclic: { big: '5', self: '[Circular]' } });
  });

  it('sends each log call of a json logger to the writer as one line, filtered by level', () => {
    const lines: string[] = [];
    const logger = createWorkerLogger('INFO', 'json', (line) => lines.push(line));
    logger.debug('hidden');
    logger.info('Worker state changed', { state: 'RUNNING', taskQueue: 'q' });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'INFO', message: 'Worker state changed', state: 'RUNNING', taskQueue: 'q' });
  });

  it("keeps webpack's bundle stats out of INFO (DEBUG shows them) and the one 'Workflow bundle created' line in", () => {
    const stats =
      'asset workflow-bundle-1f69c5372311bd4daf7f.js 2.64 MiB [emitted] [immutable] (name: main)\nruntime modules 883 bytes 4 modules\nwebpack 5.112.2 compiled successfully in 3732 ms';
    const atInfo: string[] = [];
    const info = createWorkerLogger('INFO', 'json', (line) => atInfo.push(line));
    info.info(stats, { sdkComponent: 'worker' });
    info.info('Workflow bundle created', { sdkComponent: 'worker', size: '2.64MB' });
    expect(atInfo.map((line) => (JSON.parse(line) as { message: string }).message)).toEqual(['Workflow bundle created']);
    const atDebug: string[] = [];
    createWorkerLogger('DEBUG', 'json', (line) => atDebug.push(line)).info(stats);
    expect(atDebug.map((line) => JSON.parse(line) as { level: string; message: string })).toEqual([
      { level: 'DEBUG', message: stats, time: expect.any(String) },
    ]);
  });

  it('reads SAPI_LOG_FORMAT and SAPI_METRICS_ADDRESS, text and no endpoint by default, and names a wrong variable', () => {
    expect(loadSettings({}).observability).toEqual({ logFormat: 'text', metricsAddress: undefined, scheduleMetricsIntervalS: 60 });
    expect(loadSettings({ SAPI_LOG_FORMAT: 'JSON', SAPI_METRICS_ADDRESS: '0.0.0.0:9464', SAPI_SCHEDULE_METRICS_INTERVAL: '0' }).observability).toEqual({
      logFormat: 'json',
      metricsAddress: '0.0.0.0:9464',
      scheduleMetricsIntervalS: 0,
    });
    expect(() => loadSettings({ SAPI_SCHEDULE_METRICS_INTERVAL: 'often' })).toThrow(/SAPI_SCHEDULE_METRICS_INTERVAL must be a whole number of seconds/);
    expect(() => loadSettings({ SAPI_SCHEDULE_METRICS_INTERVAL: '-5' })).toThrow(/SAPI_SCHEDULE_METRICS_INTERVAL must be 0 \(off\) or more seconds/);
    expect(() => loadSettings({ SAPI_LOG_FORMAT: 'yaml' })).toThrow(/SAPI_LOG_FORMAT must be text or json/);
    expect(() => loadSettings({ SAPI_METRICS_ADDRESS: 'http://x' })).toThrow(/SAPI_METRICS_ADDRESS must be host:port/);
  });
});

describe('a metrics endpoint the worker cannot bind', () => {
  it('fails with SAPI_WORKER_CONFIG naming SAPI_METRICS_ADDRESS and the cause the core gives', () => {
    const inUse = metricsEndpointError('0.0.0.0:9464', new Error('Failed to start prometheus metrics exporter: Address already in use (os error 98)'));
    expect(inUse).toMatchObject({ code: 'SAPI_WORKER_CONFIG', retryable: false });
    expect(inUse.message).toBe(
      'SAPI_METRICS_ADDRESS 0.0.0.0:9464: cannot serve metrics: the address is in use: another process on this host serves there (a second worker with the same SAPI_METRICS_ADDRESS?); give each worker its own port, or unset SAPI_METRICS_ADDRESS to run without metrics',
    );
    expect(
      metricsEndpointError('10.9.9.9:9464', new Error('Failed to start prometheus metrics exporter: Cannot assign requested address (os error 99)')).message,
    ).toMatch(/: not an address of this host; bind 0\.0\.0\.0:<port>/);
    expect(metricsEndpointError('x:1', new Error('something else')).message).toBe('SAPI_METRICS_ADDRESS x:1: cannot serve metrics: something else');
  });
});
