import { ServiceError, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { parseDuration, reconnectTimeoutMs } from '../../../src/cli/common';
import { CliError, exitCodeOf, LOST_CONTACT_EXIT_CODE } from '../../../src/cli/failure';
import { isTemporalUnreachable, reconnectDelay, retryWhileUnreachable, TemporalLostError } from '../../../src/cli/reconnect';

/** An error shaped as @grpc/grpc-js raises it. */
const grpcError = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;

describe('which errors mean Temporal is unreachable', () => {
  it.each([
    ['gRPC UNAVAILABLE', grpcError(UNAVAILABLE, 'No connection established')],
    ['gRPC DEADLINE_EXCEEDED', grpcError(DEADLINE_EXCEEDED, 'Deadline exceeded')],
    [
      'a ServiceError caused by UNAVAILABLE',
      new ServiceError('Failed to get Workflow execution history', { cause: grpcError(UNAVAILABLE, 'Connection dropped') }),
    ],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7233'), { code: 'ECONNREFUSED' })],
    ['a reset connection under a wrapper', new Error('request failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) })],
    ['a failed (re)connection', new CliError('SAPI_CLI_TEMPORAL_UNREACHABLE', 'cannot reach Temporal at localhost:7233')],
  ])('%s is', (_, err) => {
    expect(isTemporalUnreachable(err)).toBe(true);
  });

  it.each([
    [
      'a workflow that failed',
      new WorkflowFailedError('Workflow execution failed', ApplicationFailure.nonRetryable('bad CSV', 'SAPI_JOB_FAILED'), 'NON_RETRYABLE_FAILURE'),
    ],
    [
      'a workflow that timed out',
      new WorkflowFailedError('Workflow execution timed out', new TimeoutFailure('timed out', undefined, 'START_TO_CLOSE'), 'TIMEOUT'),
    ],
    ['an unknown workflow', new WorkflowNotFoundError('not found', 'wf-1', undefined)],
    ['gRPC NOT_FOUND', new ServiceError('Failed to describe', { cause: grpcError(NOT_FOUND, 'namespace nope not found') })],
    ['gRPC PERMISSION_DENIED', grpcError(PERMISSION_DENIED, 'Request unauthorized')],
    ['giving up', new TemporalLostError(600_000, grpcError(UNAVAILABLE, 'x'))],
    ['anything else', new TypeError('x is undefined')],
    ['a non-error', 'UNAVAILABLE'],
  ])('%s is not', (_, err) => {
    expect(isTemporalUnreachable(err)).toBe(false);
  });
});

describe('reconnecting with backoff', () => {
  it('waits 1 s, doubling, at most 10 s between attempts', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map((attempt) => reconnectDelay(attempt))).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
  });

  /** A fake clock whose sleep advances it; records the waits. */
  function fakeClock() {
    const clock = { now: 0, sleeps: [] as number[] };
    return {
      clock,
      now: () => clock.now,
      sleep: async (ms: number) => {
        clock.sleeps.push(ms);
        clock.now += ms;
      },
    };
  }

  it('says so once, reconnects after each wait and resumes when Temporal answers', async () => {
    const { clock, now, sleep } = fakeClock();
    const events: string[] = [];
    let calls = 0;
    const result = await retryWhileUnreachable(
      async () => {
        calls++;
        if (calls === 1) throw grpcError(UNAVAILABLE, 'Connection dropped');
        return 'done';
      },
      async () => {
        events.push(`reconnect@${clock.now}`);
        if (clock.now < 7_000) throw new CliError('SAPI_CLI_TEMPORAL_UNREACHABLE', 'cannot reach Temporal');
      },
      { timeoutMs: 60_000, now, sleep, onUnreachable: () => events.push('unreachable'), onReconnected: (ms) => events.push(`back after ${ms}`) },
    );
    expect(result).toBe('done');
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000]);
    expect(events).toEqual(['unreachable', 'reconnect@1000', 'reconnect@3000', 'reconnect@7000', 'back after 7000']);
    expect(calls).toBe(2);
  });

  it('gives up after the timeout with exit code 3, never waiting past it', async () => {
    const { clock, now, sleep } = fakeClock();
    const unreachable = grpcError(UNAVAILABLE, 'No connection established');
    const failure = retryWhileUnreachable(
      () => Promise.reject(unreachable),
      () => Promise.reject(new CliError('SAPI_CLI_TEMPORAL_UNREACHABLE', 'cannot reach Temporal')),
      { timeoutMs: 20_000, now, sleep },
    );
    await expect(failure).rejects.toBeInstanceOf(TemporalLostError);
    const err = await failure.catch((e: unknown) => e);
    expect(exitCodeOf(new Error('wrapped', { cause: err }))).toBe(LOST_CONTACT_EXIT_CODE);
    expect(clock.sleeps).toEqual([1_000, 2_000, 4_000, 8_000, 5_000]);
    expect(clock.now).toBe(20_000);
  });

  it('counts each outage on its own: a reconnection resets the clock and the backoff', async () => {
    const { clock, now, sleep } = fakeClock();
    let reported = 0;
    let calls = 0;
    const result = await retryWhileUnreachable(
      async () => {
        calls++;
        if (calls <= 3) throw grpcError(UNAVAILABLE, 'Connection dropped');
        return calls;
      },
      async () => undefined,
      { timeoutMs: 1_500, now, sleep, onUnreachable: () => reported++ },
    );
    expect(result).toBe(4);
    expect(reported).toBe(3);
    expect(clock.sleeps).toEqual([1_000, 1_000, 1_000]);
  });

  it('passes other errors through at once', async () => {
    const failed = new WorkflowFailedError('Workflow execution failed', ApplicationFailure.nonRetryable('bad CSV', 'SAPI_JOB_FAILED'), 'NON_RETRYABLE_FAILURE');
    const reconnect = jest.fn();
    await expect(retryWhileUnreachable(() => Promise.reject(failed), reconnect, { timeoutMs: 60_000 })).rejects.toBe(failed);
    expect(reconnect).not.toHaveBeenCalled();
  });
});

describe('--reconnect-timeout', () => {
  it('reads 90s, 10m, 1h, 500ms and bare seconds', () => {
    expect(['90s', '10m', '1h', '500ms', '30', '0'].map(parseDuration)).toEqual([90_000, 600_000, 3_600_000, 500, 30_000, 0]);
    expect(() => parseDuration('soon')).toThrow(/duration like 90s/);
  });

  it('defaults to SAPI_CLI_RECONNECT_TIMEOUT, else 10 minutes; the flag wins', () => {
    expect(reconnectTimeoutMs({})).toBe(600_000);
    expect(reconnectTimeoutMs({ SAPI_CLI_RECONNECT_TIMEOUT: '2m' })).toBe(120_000);
    expect(reconnectTimeoutMs({ SAPI_CLI_RECONNECT_TIMEOUT: '2m' }, 5_000)).toBe(5_000);
    expect(() => reconnectTimeoutMs({ SAPI_CLI_RECONNECT_TIMEOUT: 'later' })).toThrow(/SAPI_CLI_RECONNECT_TIMEOUT: expected a duration/);
  });
});
