import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_POLL_SCHEDULE, jobOutcome, nextPollDelay, pollBackoff } from '../../../src/storage-api/poll-schedule';

describe('poll schedule', () => {
  it('starts at 1 s, doubles, and caps at 20 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50, 10_000].map((n) => pollBackoff(n))).toEqual([1000, 2000, 4000, 8000, 16000, 20000, 20000, 20000, 20000]);
    expect(DEFAULT_POLL_SCHEDULE).toEqual({ initialMs: 1000, factor: 2, maxMs: 20000 });
  });

  it('accepts a custom schedule', () => {
    expect([0, 1, 2, 3].map((n) => pollBackoff(n, { initialMs: 100, factor: 3, maxMs: 1000 }))).toEqual([100, 300, 900, 1000]);
  });

  it('never sleeps past the deadline', () => {
    expect(nextPollDelay({ attempt: 5, nowMs: 1000, deadlineAtMs: 4000 })).toBe(3000);
    expect(nextPollDelay({ attempt: 5, nowMs: 5000, deadlineAtMs: 4000 })).toBe(0);
    expect(nextPollDelay({ attempt: 0, nowMs: 0 })).toBe(1000);
  });

  it('has no value imports, so workflow code can import it', () => {
    const src = fs.readFileSync(path.join(__dirname, '../../../src/storage-api/poll-schedule.ts'), 'utf8');
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
    expect(jobOutcome({ status: 'error', error: { code: 42, message: 'numeric', exceptionId: null } })).toEqual({ kind: 'error', message: 'numeric', code: '42' });
  });

  it('still reports an error without details, and stops on an unknown status', () => {
    expect(jobOutcome({ status: 'error' })).toEqual({ kind: 'error', message: 'job failed without a message' });
    expect(jobOutcome({ status: 'cancelled' })).toMatchObject({ kind: 'error', code: 'unexpectedStatus' });
  });
});
