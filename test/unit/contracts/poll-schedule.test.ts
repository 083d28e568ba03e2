import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_POLL_SCHEDULE, jobOutcome, nextPollDelay, pollBackoff } from '../../../src/contracts/poll-schedule';

describe('poll schedule', () => {
  it('starts at 1 s, doubles, and caps at 20 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50, 10_000].map((n) => pollBackoff(n))).toEqual([1000, 2000, 4000, 8000, 16000, 20000, 20000, 20000, 20000]);
    expect(DEFAULT_POLL_SCHEDULE).toEqual({ initialMs: 1000, factor: 2, maxMs: 20000, elapsedFraction: 0.25 });
  });

  it('accepts a custom schedule', () => {
    expect([0, 1, 2, 3].map((n) => pollBackoff(n, { initialMs: 100, factor: 3, maxMs: 1000 }))).toEqual([100, 300, 900, 1000]);
  });

  it('never sleeps past the deadline', () => {
    expect(nextPollDelay({ attempt: 5, nowMs: 1000, deadlineAtMs: 4000 })).toBe(3000);
    expect(nextPollDelay({ attempt: 5, nowMs: 5000, deadlineAtMs: 4000 })).toBe(0);
    expect(nextPollDelay({ attempt: 0, nowMs: 0 })).toBe(1000);
  });

  /** Simulates polling a job that ends at `durationMs` (polls are instant): when is its end first seen? */
  function noticedAfter(durationMs: number, schedule: Parameters<typeof nextPollDelay>[0]['schedule'] = {}): { lateMs: number; polls: number } {
    let now = 0;
    for (let attempt = 0; ; attempt++) {
      now += nextPollDelay({ attempt, nowMs: now, elapsedMs: now, schedule });
      if (now >= durationMs) return { lateMs: now - durationMs, polls: attempt + 1 };
    }
  }

  it('notices the end of a job of any length within max(1 s, 25 % of its duration)', () => {
    for (let durationMs = 100; durationMs <= 3 * 3600_000; durationMs = Math.ceil(durationMs * 1.07) + 37) {
      expect({ durationMs, late: noticedAfter(durationMs).lateMs <= Math.max(1000, 0.25 * durationMs) }).toEqual({ durationMs, late: true });
    }
  });

  it('caps a delay at 25 % of the time waited (never below the first delay), then settles at 20 s', () => {
    expect(nextPollDelay({ attempt: 3, nowMs: 0, elapsedMs: 2_000 })).toBe(1000); // 8 s by backoff, 0.5 s by 25 %: 1 s floor
    expect(nextPollDelay({ attempt: 3, nowMs: 0, elapsedMs: 12_000 })).toBe(3000);
    expect(nextPollDelay({ attempt: 9, nowMs: 0, elapsedMs: 3600_000 })).toBe(20_000);
    // an hour-long job costs about as many polls as the plain backoff (20 s apart once 80 s have passed)
    expect(noticedAfter(3600_000).polls).toBeLessThan(noticedAfter(3600_000, { elapsedFraction: 0 }).polls + 20);
  });

  it('with elapsedFraction 0 is the plain ×factor backoff (a 10 s job may be seen up to 100 % late)', () => {
    expect(nextPollDelay({ attempt: 3, nowMs: 0, elapsedMs: 2_000, schedule: { elapsedFraction: 0 } })).toBe(8000);
    expect(noticedAfter(9_100, { elapsedFraction: 0 }).lateMs).toBeGreaterThan(0.25 * 9_100);
  });

  it('has no value imports, so workflow code can import it', () => {
    const src = fs.readFileSync(path.join(__dirname, '../../../src/contracts/poll-schedule.ts'), 'utf8');
    const imports = src.split('\n').filter((l) => /^\s*import\s/.test(l) && !/^\s*import\s+type\s/.test(l));
    expect(imports).toEqual([]);
  });
});

describe('jobOutcome', () => {
  it('reports waiting and processing as pending', () => {
    expect(jobOutcome({ status: 'waiting' })).toEqual({ kind: 'pending', status: 'waiting' });
    expect(jobOutcome({ status: 'processing' })).toEqual({ kind: 'pending', status: 'processing' });
  });

  it('reports success with the results', () => {
    expect(jobOutcome({ status: 'success', results: { importedRowsCount: 3 } })).toEqual({ kind: 'success', results: { importedRowsCount: 3 } });
    expect(jobOutcome({ status: 'success' })).toEqual({ kind: 'success', results: null });
  });

  it('reads an error string from a 202 response', () => {
    expect(jobOutcome({ status: 'error', error: 'File 12 not found' })).toEqual({ kind: 'error', message: 'File 12 not found' });
  });

  it('reads code, message and exceptionId from a polled error object', () => {
    expect(jobOutcome({ status: 'error', error: { code: 'storage.tables.validation', message: 'bad', exceptionId: 'e-1' } })).toEqual({
      kind: 'error',
      message: 'bad',
      code: 'storage.tables.validation',
      exceptionId: 'e-1',
    });
    expect(jobOutcome({ status: 'error', error: { code: 42, message: 'numeric', exceptionId: null } })).toEqual({
      kind: 'error',
      message: 'numeric',
      code: '42',
    });
  });

  it('still reports an error without details, and stops on an unknown status', () => {
    expect(jobOutcome({ status: 'error' })).toEqual({ kind: 'error', message: 'job failed without a message' });
    expect(jobOutcome({ status: 'cancelled' })).toMatchObject({ kind: 'error', code: 'unexpectedStatus' });
  });
});
