import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { asActivity, keepAliveIntervalMs, KEEPALIVE_INTERVAL_MS } from '../../../src/activities/context';

describe("an activity's keep-alive heartbeat", () => {
  it('beats at 40 % of the heartbeat timeout (the SDK sends at most every 80 % of it), at least every minute, never more often than every 2 s', () => {
    expect(keepAliveIntervalMs(10_000)).toBe(4_000);
    expect(keepAliveIntervalMs(20_000)).toBe(8_000);
    expect(keepAliveIntervalMs(10 * 60_000)).toBe(60_000);
    expect(keepAliveIntervalMs(3_000)).toBe(KEEPALIVE_INTERVAL_MS);
    expect(keepAliveIntervalMs(undefined)).toBe(KEEPALIVE_INTERVAL_MS);
  });

  it('an activity with a 10 s heartbeat timeout that runs 9 s sends two keep-alive beats (at 4 and 8 s), not four', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 10_000 }, { logger: new DefaultLogger('ERROR') });
      let beats = 0;
      env.on('heartbeat', () => beats++);
      let finish!: () => void;
      const running = env.run(() => asActivity(() => new Promise<void>((resolve) => (finish = resolve))));
      await jest.advanceTimersByTimeAsync(9_000);
      finish();
      await running;
      expect(beats).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });
});
