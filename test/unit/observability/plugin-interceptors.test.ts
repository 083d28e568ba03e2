import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { callWaiting, waitingLine } from '../../../src/observability/activity-interceptor';
import { asCallWaiting, reportsAttempt } from '../../../src/contracts/call-waiting';
import { loadSettings } from '../../../src/config';
import { SapiPlugin } from '../../../src/plugin';
import { LEAN_BUNDLE_DEVTOOL } from '../../../src/workflow-bundle';
import { activeTracing } from '../../../src/observability/tracing';

describe("the plugin's metrics interceptor", () => {
  const userFactory: ActivityInterceptorsFactory = () => ({}); // e.g. OpenTelemetry's activity interceptors

  it("is appended after the worker's own activity interceptors, which stay (an OpenTelemetry hook keeps working)", async () => {
    const plugin = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
    const options = await plugin.configureWorker({ taskQueue: 'q', interceptors: { activity: [userFactory] } });
    // the user's, the outage interceptor's, the metrics one's
    expect(options.interceptors?.activity).toHaveLength(3);
    expect(options.interceptors?.activity?.[0]).toBe(userFactory);
    await plugin.close();
  });

  it('is left out with metrics: false (the outage interceptor stays)', async () => {
    const plugin = new SapiPlugin({ settings: loadSettings({}), metrics: false, startChecks: false });
    const options = await plugin.configureWorker({ taskQueue: 'q', interceptors: { activity: [userFactory] } });
    expect(options.interceptors?.activity).toHaveLength(2);
    expect(options.interceptors?.activity?.[0]).toBe(userFactory);
    await plugin.close();
  });
});

describe("what the plugin does to a worker of one's own", () => {
  it("logs webpack's bundle stats at DEBUG (its one INFO line stays)", async () => {
    const plugin = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
    const seen: Array<[string, string]> = [];
    const log = (level: string) => (message: string) => void seen.push([level, message]);
    const logger = {
      log: (level: string, message: string) => void seen.push([level, message]),
      trace: log('TRACE'),
      debug: log('DEBUG'),
      info: log('INFO'),
      warn: log('WARN'),
      error: log('ERROR'),
    };
    const bundler = plugin.configureBundler({ workflowsPath: 'w', logger });
    bundler.logger!.info('asset workflow-bundle-1.js 2.8 MiB [emitted]\nruntime modules 883 bytes\nwebpack 5.112.2 compiled successfully in 1854 ms');
    bundler.logger!.info('Workflow bundle created');
    expect(seen).toEqual([
      ['DEBUG', expect.stringMatching(/^asset workflow-bundle-/)],
      ['INFO', 'Workflow bundle created'],
    ]);
    await plugin.close();
  });

  it('bundles the workflows lean (ASCII, a source map without the sources) before a hook of the caller', async () => {
    const plugin = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
    const bundler = plugin.configureBundler({
      workflowsPath: 'w',
      webpackConfigHook: (config) => ({ ...config, name: `${String(config.devtool)} then mine` }),
    });
    const config = bundler.webpackConfigHook!({ devtool: 'inline-source-map', plugins: [] });
    expect(config.name).toBe(`${LEAN_BUNDLE_DEVTOOL} then mine`);
    expect(config.plugins).toHaveLength(1);
    await plugin.close();
  });

  it("changes nothing in the process when made; configuring the worker turns the AWS SDK's Node notice off unless set", async () => {
    const saved = process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    try {
      // tracing asked for: made, the plugin starts no tracer provider (nothing loaded, nothing global)
      const plugin = new SapiPlugin({ settings: loadSettings({}), startChecks: false, tracing: { endpoint: 'http://127.0.0.1:1' } });
      expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBeUndefined();
      expect(plugin.tracingOptions).toEqual({ endpoint: 'http://127.0.0.1:1' });
      expect(plugin.tracing).toBeUndefined();
      expect(activeTracing()).toBeUndefined();
      const configured = await plugin.configureWorker({ taskQueue: 'q' });
      expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('true');
      // started by the worker's configuration: the SDK's OpenTelemetry activity interceptor is on the worker (with the
      // plugin's outage and metrics ones)
      expect(plugin.tracing).toBeDefined();
      expect(activeTracing()).toBeDefined();
      expect(configured.interceptors?.activity).toHaveLength(3);
      await plugin.close();
      expect(activeTracing()).toBeUndefined();
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'false';
      const other = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
      await other.configureWorker({ taskQueue: 'q' });
      await other.close();
      expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('false');
    } finally {
      if (saved === undefined) delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
      else process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = saved;
    }
  });

  it('refuses to be registered twice on one worker (on Worker.create and on its connection)', async () => {
    const plugin = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
    await expect(plugin.configureWorker({ taskQueue: 'q', plugins: [plugin, plugin] })).rejects.toMatchObject({
      code: 'SAPI_WORKER_CONFIG',
      message: expect.stringMatching(/registered twice/),
    });
    await plugin.close();
  });
});

describe('the line of a call waiting out an outage, and what the run is told', () => {
  const info = {
    activityType: 'getJob',
    attempt: 4,
    scheduledTimestampMs: Date.parse('2026-11-29T10:00:00Z'),
    scheduleToCloseTimeoutMs: 65 * 60_000,
    currentAttemptScheduledTimestampMs: Date.parse('2026-11-29T10:12:00Z'),
  } as Parameters<typeof callWaiting>[0];
  it('says what failed, since when, and how much of the budget is left; nothing for a failure that is not retried', () => {
    const unavailable = ApplicationFailure.retryable('GET /v2/storage/jobs/7 failed: 503 Service Unavailable', 'SAPI_SERVER_ERROR');
    const now = Date.parse('2026-11-29T10:13:00Z');
    const waiting = callWaiting(info, unavailable);
    expect(waiting).toEqual({
      call: 'getJob',
      attempt: 4,
      since: '2026-11-29T10:00:00.000Z',
      lastAttemptAt: '2026-11-29T10:12:00.000Z',
      lastFailure: 'SAPI_SERVER_ERROR GET /v2/storage/jobs/7 failed: 503 Service Unavailable',
      budgetEndsAt: '2026-11-29T11:05:00.000Z',
    });
    expect(waitingLine(waiting!, now)).toBe(
      'getJob attempt 4 failed [SAPI_SERVER_ERROR] GET /v2/storage/jobs/7 failed: 503 Service Unavailable; retried by Temporal, waiting since 2026-11-29T10:00:00.000Z, 52 min of its outage budget left',
    );
    expect(callWaiting(info, ApplicationFailure.nonRetryable('bad input', 'SAPI_INVALID_INPUT'))).toBeUndefined();
    expect(callWaiting(info, ApplicationFailure.create({ message: 'no such table', type: 'SAPI_NOT_FOUND' }))).toBeUndefined();
  });
  it('the run is told on the first five attempts and then every fifth (about 17 times in an hour of 1-minute retries)', () => {
    const told = Array.from({ length: 67 }, (_, i) => i + 1).filter(reportsAttempt);
    expect(told).toEqual([1, 2, 3, 4, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65]);
  });
  it('a signal anyone can send is shown only when well formed', () => {
    const good = { call: 'getJob', attempt: 2, since: 'a', lastAttemptAt: 'b', lastFailure: 'c' };
    expect(asCallWaiting(good)).toEqual(good);
    expect(asCallWaiting({ ...good, attempt: 0 })).toBeUndefined();
    expect(asCallWaiting({ ...good, lastFailure: 'x'.repeat(3000) })).toBeUndefined();
    expect(asCallWaiting({ ...good, extra: 'dropped' })).toEqual(good);
    expect(asCallWaiting('getJob')).toBeUndefined();
  });
});
