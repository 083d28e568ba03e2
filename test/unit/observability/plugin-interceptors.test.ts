import type { ActivityInterceptorsFactory } from '@temporalio/worker';
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
