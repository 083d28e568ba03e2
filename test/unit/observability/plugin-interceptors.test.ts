import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { waitingLine } from '../../../src/observability/activity-interceptor';
import { loadSettings } from '../../../src/config';
import { SapiPlugin } from '../../../src/plugin';

describe('the plugin\'s metrics interceptor', () => {
  const userFactory: ActivityInterceptorsFactory = () => ({}); // e.g. OpenTelemetry's activity interceptors

  it('is appended after the worker\'s own activity interceptors, which stay (an OpenTelemetry hook keeps working)', async () => {
    const plugin = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
    const options = plugin.configureWorker({ taskQueue: 'q', interceptors: { activity: [userFactory] } });
    expect(options.interceptors?.activity).toHaveLength(2);
    expect(options.interceptors?.activity?.[0]).toBe(userFactory);
    await plugin.close();
  });

  it('is left out with metrics: false', async () => {
    const plugin = new SapiPlugin({ settings: loadSettings({}), metrics: false, startChecks: false });
    const options = plugin.configureWorker({ taskQueue: 'q', interceptors: { activity: [userFactory] } });
    expect(options.interceptors?.activity).toEqual([userFactory]);
    await plugin.close();
  });
});

describe('what the plugin does to a worker of one\'s own', () => {
  it('logs webpack\'s bundle stats at DEBUG (its one INFO line stays) and turns the AWS SDK\'s Node notice off unless set', async () => {
    const saved = process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    try {
      const plugin = new SapiPlugin({ settings: loadSettings({}), startChecks: false });
      expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('true');
      const seen: Array<[string, string]> = [];
      const log = (level: string) => (message: string) => void seen.push([level, message]);
      const logger = { log: (level: string, message: string) => void seen.push([level, message]), trace: log('TRACE'), debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') };
      const bundler = plugin.configureBundler({ workflowsPath: 'w', logger });
      bundler.logger!.info('asset workflow-bundle-1.js 2.8 MiB [emitted]\nruntime modules 883 bytes\nwebpack 5.112.2 compiled successfully in 1854 ms');
      bundler.logger!.info('Workflow bundle created');
      expect(seen).toEqual([
        ['DEBUG', expect.stringMatching(/^asset workflow-bundle-/)],
        ['INFO', 'Workflow bundle created'],
      ]);
      await plugin.close();
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'false';
      await new SapiPlugin({ settings: loadSettings({}), startChecks: false }).close();
      expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('false');
    } finally {
      if (saved === undefined) delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
      else process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = saved;
    }
  });
});

describe('the line of a call waiting out an outage', () => {
  const info = { activityType: 'getJob', attempt: 4, scheduledTimestampMs: Date.parse('2026-11-29T10:00:00Z'), scheduleToCloseTimeoutMs: 65 * 60_000 } as Parameters<typeof waitingLine>[0];
  it('says what failed, since when, and how much of the budget is left; nothing for a failure that is not retried', () => {
    const unavailable = ApplicationFailure.retryable('GET /v2/storage/jobs/7 failed: 503 Service Unavailable', 'SAPI_SERVER_ERROR');
    expect(waitingLine(info, unavailable, Date.parse('2026-11-29T10:13:00Z'))).toBe(
      'getJob attempt 4 failed [SAPI_SERVER_ERROR] GET /v2/storage/jobs/7 failed: 503 Service Unavailable; retried by Temporal, waiting since 2026-11-29T10:00:00.000Z, 52 min of its outage budget left',
    );
    expect(waitingLine(info, ApplicationFailure.nonRetryable('bad input', 'SAPI_INVALID_INPUT'))).toBeUndefined();
    expect(waitingLine(info, ApplicationFailure.create({ message: 'no such table', type: 'SAPI_NOT_FOUND' }))).toBeUndefined();
  });
});
