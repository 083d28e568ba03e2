/**
 * Retry budgets inside an activity end before the activity attempt does: the pure bound, the Storage API client's
 * retries against a real HTTP server, and the S3 SDK's retry strategy.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { activityDeadline, asActivity } from '../../../src/activities/context';
import { activityAttemptDeadlineMs, attemptBudgetMs, DEADLINE_MARGIN_MS, MIN_ATTEMPT_MS, retryFits } from '../../../src/http/deadline';
import { deadlineRetryStrategy } from '../../../src/object-storage/s3-client';
import { createStorageClient } from '../../../src/storage-api/client';
import { hang, json, ScriptedServer } from '../storage-api/scripted-server';

describe('retry budget bounded by a deadline', () => {
  const now = 1_000_000;

  it('lets a retry start only when its wait leaves its attempt a second before the deadline (less the margin)', () => {
    const deadline = now + DEADLINE_MARGIN_MS + 5_000;
    expect(attemptBudgetMs(deadline, now)).toBe(5_000);
    expect(retryFits(deadline, now, 5_000 - MIN_ATTEMPT_MS)).toBe(true);
    expect(retryFits(deadline, now, 5_000 - MIN_ATTEMPT_MS + 1)).toBe(false);
    expect(retryFits(deadline, deadline, 0)).toBe(false);
    expect(attemptBudgetMs(deadline, deadline)).toBe(0);
    // no deadline: only the retry policy bounds it
    expect(retryFits(undefined, now, 120_000)).toBe(true);
    expect(attemptBudgetMs(undefined, now)).toBeUndefined();
  });

  it("takes an activity attempt's deadline from its start-to-close (from its start) and the activity's schedule-to-close, the earlier", () => {
    const info = { startToCloseTimeoutMs: 60_000, scheduledTimestampMs: now - 100_000, scheduleToCloseTimeoutMs: 130_000 };
    expect(activityAttemptDeadlineMs(info, now)).toBe(now + 30_000);
    expect(activityAttemptDeadlineMs({ ...info, scheduleToCloseTimeoutMs: 0 }, now)).toBe(now + 60_000);
    expect(activityAttemptDeadlineMs({ ...info, startToCloseTimeoutMs: 0, scheduleToCloseTimeoutMs: 0 }, now)).toBeUndefined();
  });

  it('gives an activity body run by asActivity the end of its attempt: its start plus its start-to-close', async () => {
    const activity = new MockActivityEnvironment({ startToCloseTimeoutMs: 60_000, scheduleToCloseTimeoutMs: 0 }, { logger: new DefaultLogger('ERROR') });
    const before = Date.now();
    const seen = await activity.run(() => asActivity(async () => activityDeadline() ?? 0));
    expect(seen).toBeGreaterThanOrEqual(before + 60_000);
    expect(seen).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(activityDeadline()).toBeUndefined(); // outside an activity: no bound
  });

  describe('Storage API client', () => {
    let server: ScriptedServer;
    beforeEach(async () => {
      server = await new ScriptedServer().start();
    });
    afterEach(async () => {
      await server.stop();
    });

    it('retries a 503 as often as its policy says without a deadline, and not at all when the retry would end past it', async () => {
      server.on('GET', '/v2/storage/buckets', json(503, { error: 'busy' }));
      const policy = { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 1 };
      const unbounded = createStorageClient({ url: server.url, token: 't', retry: policy });
      await expect(unbounded.listBuckets()).rejects.toMatchObject({ status: 503, retryable: true });
      await unbounded.close();
      expect(server.count('GET', '/v2/storage/buckets')).toBe(5);

      // half a second left beyond the margin: less than an attempt's minimum, so the first failure is final here
      // (retryable: the activity's own retry takes over)
      const bounded = createStorageClient({ url: server.url, token: 't', retry: policy, deadline: () => Date.now() + DEADLINE_MARGIN_MS + 500 });
      await expect(bounded.listBuckets()).rejects.toMatchObject({ status: 503, retryable: true });
      await bounded.close();
      expect(server.count('GET', '/v2/storage/buckets')).toBe(6);
    });

    it("clips an attempt's wait for the answer to the time left before the deadline", async () => {
      server.on('GET', '/v2/storage/buckets', hang);
      const client = createStorageClient({
        url: server.url,
        token: 't',
        timeouts: { headersMs: 60_000 },
        retry: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 1 },
        deadline: () => Date.now() + DEADLINE_MARGIN_MS + 300,
      });
      const err = await client.listBuckets().catch((e: unknown) => e);
      await client.close();
      expect(err).toMatchObject({ code: 'SAPI_TIMEOUT', retryable: true });
      expect((err as { details?: { timeoutMs?: number } }).details?.timeoutMs).toBeLessThanOrEqual(300);
      expect(server.count('GET', '/v2/storage/buckets')).toBe(1);
    });
  });

  describe('S3 SDK retry strategy', () => {
    /** A token-based strategy whose every retry waits `delayMs`. */
    const strategy = (delayMs: number) => {
      let retries = 0;
      const token = () => ({ getRetryCount: () => retries, getRetryDelay: () => delayMs, getRetryCost: () => 0 });
      return {
        acquireInitialRetryToken: async (_scope: string) => token(),
        refreshRetryTokenForRetry: async (_token: unknown, _errorInfo: unknown) => {
          retries++;
          return token();
        },
        recordSuccess: (_token: unknown) => undefined,
      };
    };
    const errorInfo = { error: Object.assign(new Error('SlowDown'), { $metadata: {} }), errorType: 'THROTTLING' as const };

    it("makes the SDK's retry while it fits before the deadline, and refuses it with the call's last error when it does not", async () => {
      const deadline = now + DEADLINE_MARGIN_MS + 10_000;
      const fits = deadlineRetryStrategy(
        strategy(9_000) as never,
        () => deadline,
        () => now,
      ) as ReturnType<typeof strategy>;
      const token = await fits.acquireInitialRetryToken('');
      await expect(fits.refreshRetryTokenForRetry(token as never, errorInfo as never)).resolves.toMatchObject({ getRetryDelay: expect.any(Function) });
      const late = deadlineRetryStrategy(
        strategy(9_001) as never,
        () => deadline,
        () => now,
      ) as ReturnType<typeof strategy>;
      await expect(late.refreshRetryTokenForRetry(token as never, errorInfo as never)).rejects.toBe(errorInfo.error);
      const none = deadlineRetryStrategy(
        strategy(60_000) as never,
        () => undefined,
        () => now,
      ) as ReturnType<typeof strategy>;
      await expect(none.refreshRetryTokenForRetry(token as never, errorInfo as never)).resolves.toBeDefined();
    });
  });
});
