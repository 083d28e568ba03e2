import { run } from '../../../src/cli';
import type { ScheduleDescription } from '@temporalio/client';
import {
  intervalMs,
  lastRunLine,
  listingLine,
  parseCron,
  parseEvery,
  scheduleShape,
  scheduleWarning,
  toListing,
  waitBeforeTrigger,
} from '../../../src/cli/schedule';

describe('schedule command lines', () => {
  let stderr: jest.SpyInstance;
  let output: string;
  beforeEach(() => {
    output = '';
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((output += String(chunk)), true));
  });
  afterEach(() => stderr.mockRestore());

  // usage errors exit 2 before anything connects (the address is one nothing listens on)
  const usage = (args: string[]) => run(['node', 'sapi-temporal', ...args, '--address', '127.0.0.1:1']);

  it("waits out the second of the schedule's last action before a trigger (a run is named by its time to the second)", () => {
    const last = Date.UTC(2026, 10, 29, 12, 0, 5, 300); // 12:00:05.300
    expect(waitBeforeTrigger([], last)).toBe(0);
    expect(waitBeforeTrigger([last - 60_000, last], last + 100)).toBe(650); // to 12:00:06, plus 50 ms
    expect(waitBeforeTrigger([last], last + 699)).toBe(51);
    expect(waitBeforeTrigger([last], last + 700)).toBe(0); // 12:00:06.000: a second of its own
    expect(waitBeforeTrigger([last, last + 400], last + 650)).toBe(100); // the latest action counts
    expect(waitBeforeTrigger([last + 5_000], last)).toBe(1_100); // a server clock far ahead: not waited out
  });

  it('refuses a scheduled import that would create the table again on every run', async () => {
    expect(await usage(['schedule', 'import', 'nightly', 'a.csv', '--bucket', 'in.c-a', '--table', 't', '--every', '1d'])).toBe(2);
    expect(output).toMatch(/needs --mode load/);
  });

  it('refuses a bucket id or table name the service would refuse, as a usage error before anything starts', async () => {
    expect(await usage(['import', 'a.csv', '--bucket', 'bad', '--table', 't'])).toBe(2);
    expect(output).toMatch(/expected a bucket id like in\.c-main or out\.c-main, got "bad"/);
    expect(await usage(['import', 'a.csv', '--bucket', 'in.c-a', '--table', 'no spaces'])).toBe(2);
    expect(output).toMatch(/expected a table name/);
    expect(await usage(['schedule', 'import', 'nightly', 'a.csv', '--bucket', 'main', '--table', 't', '--mode', 'load', '--every', '1d'])).toBe(2);
    expect(await usage(['extract', 'config.json', '--bucket', 'c-main'])).toBe(2);
  });

  it('refuses a schedule that does not say when it runs', async () => {
    expect(await usage(['schedule', 'export', 'hourly', 'in.c-a.t', 'out.csv'])).toBe(2);
    expect(output).toMatch(/--cron "<expr>" or --every <interval>/);
  });

  it.each([['0'], ['1w'], ['soon'], ['-5m']])('rejects the interval %s', async (every) => {
    expect(await usage(['schedule', 'export', 'x', 'in.c-a.t', 'out.csv', '--every', every])).toBe(2);
    expect(output).toMatch(/expected a positive interval like 30s, 15m, 1h or 1d/);
  });

  it('rejects a cron expression with too few fields and an unknown overlap policy', async () => {
    expect(await usage(['schedule', 'export', 'x', 'in.c-a.t', 'out.csv', '--cron', '0 3 *'])).toBe(2);
    expect(output).toMatch(/expected a cron expression like "0 3 \* \* \*"/);
    expect(await usage(['schedule', 'export', 'x', 'in.c-a.t', 'out.csv', '--every', '1h', '--overlap', 'sometimes'])).toBe(2);
    expect(output).toMatch(/Allowed choices are skip, buffer-one, buffer-all, cancel-other, terminate-other, allow-all/);
  });

  it('turns intervals, crons, a time zone, the overlap policy and a paused start into a Temporal schedule', () => {
    expect(parseEvery('15m', parseEvery(' 1d '))).toEqual(['1d', '15m']);
    expect(parseCron('@daily', parseCron(' 0 3 * * 1-5 '))).toEqual(['0 3 * * 1-5', '@daily']);
    expect(['30s', '15m', '1h', '1d'].map(intervalMs)).toEqual([30_000, 900_000, 3_600_000, 86_400_000]);
    expect(scheduleShape({ cron: ['0 3 * * *'], every: ['1h'], timezone: 'Europe/Prague', overlap: 'buffer-one', paused: true, note: 'n' })).toEqual({
      spec: { cronExpressions: ['0 3 * * *'], intervals: [{ every: 3_600_000 }], timezone: 'Europe/Prague', jitter: 30_000 },
      policies: { overlap: 'BUFFER_ONE', catchupWindow: 3_600_000 },
      state: { paused: true, note: 'n' },
    });
    expect(scheduleShape({ every: ['1d'], overlap: 'skip' })).toMatchObject({ policies: { overlap: 'SKIP' }, state: { paused: false } });
  });

  it('defaults to buffer-one for imports (a slow load delays the next one instead of dropping it) and skip otherwise', () => {
    expect(scheduleShape({ every: ['1h'] }, 'importTableWorkflow').policies).toMatchObject({ overlap: 'BUFFER_ONE' });
    expect(scheduleShape({ every: ['1h'] }, 'exportTableWorkflow').policies).toMatchObject({ overlap: 'SKIP' });
    expect(scheduleShape({ every: ['1h'], overlap: 'allow-all' }, 'importTableWorkflow').policies).toMatchObject({ overlap: 'ALLOW_ALL' });
  });

  it('has a catch-up window (1 h) and a jitter (30 s, at most a tenth of the shortest interval) unless told otherwise', () => {
    expect(scheduleShape({ cron: ['0 3 * * *'] })).toMatchObject({ spec: { jitter: 30_000 }, policies: { catchupWindow: 3_600_000 } });
    expect(scheduleShape({ every: ['1m', '1h'] })).toMatchObject({ spec: { jitter: 6_000 } });
    expect(scheduleShape({ every: ['1h'], jitter: 0, catchupWindow: 600_000 })).toMatchObject({ spec: { jitter: 0 }, policies: { catchupWindow: 600_000 } });
  });

  it('lists a schedule with its workflow type, counts of taken, buffered, skipped and missed runs, the last and next runs, and warns about lost runs', () => {
    const at = new Date('2026-11-24T03:00:00Z');
    const listing = toListing({
      scheduleId: 'nightly',
      action: { type: 'startWorkflow', workflowType: 'importTableWorkflow', taskQueue: 'q', workflowId: 'nightly' },
      policies: { overlap: 'SKIP' },
      state: { paused: false, note: '' },
      info: {
        nextActionTimes: [at],
        recentActions: [
          {
            scheduledAt: at,
            takenAt: at,
            action: { type: 'startWorkflow', workflow: { workflowId: 'nightly-2026-11-23T03:00:00Z', firstExecutionRunId: 'r' } },
          },
        ],
        numActionsTaken: 4,
        numActionsSkippedOverlap: 2,
        numActionsMissedCatchupWindow: 1,
        runningActions: [{ type: 'startWorkflow', workflow: { workflowId: 'nightly-2026-11-23T03:00:00Z', firstExecutionRunId: 'r' } }],
      },
      raw: { info: { bufferSize: 1, bufferDropped: 0 } },
    } as unknown as ScheduleDescription);
    expect(listing).toEqual({
      scheduleId: 'nightly',
      workflowType: 'importTableWorkflow',
      paused: false,
      overlap: 'skip',
      nextActionTimes: ['2026-11-24T03:00:00.000Z'],
      recentWorkflowIds: ['nightly-2026-11-23T03:00:00Z'],
      lastRun: { workflowId: 'nightly-2026-11-23T03:00:00Z', runId: 'r', startedAt: '2026-11-24T03:00:00.000Z' },
      taken: 4,
      skipped: 2,
      buffered: 1,
      missed: 1,
      running: ['nightly-2026-11-23T03:00:00Z'],
    });
    expect(listingLine(listing)).toBe(
      'nightly  importTableWorkflow  next 2026-11-24T03:00:00.000Z  overlap skip  taken 4, running 1, buffered 1, skipped 2, missed 1  last nightly-2026-11-23T03:00:00Z at 2026-11-24T03:00:00.000Z',
    );
    expect(scheduleWarning(listing)).toBe(
      'warning: schedule nightly: 2 run(s) skipped because the previous one was still running (overlap skip); 1 run(s) missed (catch-up window)',
    );
    expect(scheduleWarning({ ...listing, skipped: 0, missed: 0 })).toBeUndefined();

    // a last run that failed: every run into a target that does not exist fails, and the schedule goes on
    const failed = {
      ...listing,
      skipped: 0,
      missed: 0,
      lastRun: {
        ...listing.lastRun!,
        status: 'failed',
        failure: { type: 'SAPI_NOT_FOUND', message: 'bucket in.c-x does not exist', activity: 'checkImportTarget' },
      },
    };
    expect(lastRunLine(failed.lastRun)).toBe(
      'nightly-2026-11-23T03:00:00Z at 2026-11-24T03:00:00.000Z, failed: [SAPI_NOT_FOUND] bucket in.c-x does not exist (activity checkImportTarget)',
    );
    expect(listingLine(failed)).toMatch(/ {2}last nightly-2026-11-23T03:00:00Z at 2026-11-24T03:00:00\.000Z failed$/);
    expect(scheduleWarning(failed)).toBe(
      'warning: schedule nightly: the last run nightly-2026-11-23T03:00:00Z at 2026-11-24T03:00:00.000Z, failed: [SAPI_NOT_FOUND] bucket in.c-x does not exist (activity checkImportTarget) (see `sapi-temporal status nightly-2026-11-23T03:00:00Z`)',
    );
    expect(scheduleWarning({ ...failed, lastRun: { ...failed.lastRun, status: 'completed', failure: undefined } })).toBeUndefined();
  });
});
