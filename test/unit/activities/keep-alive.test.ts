import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { asActivity, keepAliveIntervalMs, KEEPALIVE_INTERVAL_MS } from '../../../src/activities/context';
import { AWAIT_JOB_HEARTBEAT_TIMEOUT_MS } from '../../../src/workflows/options';

describe("an activity's keep-alive heartbeat", () => {
  it('beats at 40 % of a heartbeat timeout of seconds (at most a minute apart, never more often than every 2 s), and once per 80 % of a timeout of minutes', () => {
    expect(keepAliveIntervalMs(10_000)).toBe(4_000);
    expect(keepAliveIntervalMs(20_000)).toBe(8_000);
    expect(keepAliveIntervalMs(2 * 60_000)).toBe(48_000);
    expect(keepAliveIntervalMs(4 * 60_000)).toBe(60_000);
    // awaitJob's 10 minutes: one every 8 minutes, 7.5 an hour (each a billed action on Temporal Cloud)
    expect(keepAliveIntervalMs(AWAIT_JOB_HEARTBEAT_TIMEOUT_MS)).toBe(8 * 60_000);
    expect(3_600_000 / keepAliveIntervalMs(AWAIT_JOB_HEARTBEAT_TIMEOUT_MS)).toBe(7.5);
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
