import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { packageVersion, run, wantsJson } from '../../../src/cli';
import { buildProgram } from '../../../src/cli/program';
import { CliError, errorJson, NO_WORKER, printable } from '../../../src/cli/failure';
import { commandFailure } from '../../../src/cli/follow';
import { activityRetries, formatRetry, plainProgress, plainProgressLine } from '../../../src/cli/progress';
import { TemporalLostError } from '../../../src/cli/reconnect';
import type { TransferRun, TransferRunner } from '../../../src/cli/context';
import { neededQueues } from '../../../src/cli/run-transfer';
import { activePollers, noWorkerMessage, requireWorkers } from '../../../src/cli/worker-check';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f]/;
const settings = { address: 'temporal:7233', namespace: 'prod', taskQueue: 'sapi-q' };

describe('plain progress (stderr not a terminal)', () => {
  function recorder(intervalMs = 10_000) {
    let clock = 0;
    const lines: string[] = [];
    const view = plainProgress((line) => lines.push(line), 'import', { intervalMs, now: () => clock, timer: false });
    return { view, lines, tick: (ms: number) => (clock += ms) };
  }

  it('writes one line per phase change and at most one per interval while the bytes move, without control characters', () => {
    const { view, lines, tick } = recorder();
    view.update({ phase: 'starting', bytes: 0 });
    view.update({ phase: 'uploading', bytes: 1000, totalBytes: 4000 });
    tick(1_000);
    view.update({ phase: 'uploading', bytes: 2000, totalBytes: 4000 }); // too soon
    tick(9_500);
    view.update({ phase: 'uploading', bytes: 3000, totalBytes: 4000 });
    tick(10_000);
    view.update({ phase: 'uploading', bytes: 3000, totalBytes: 4000 }); // nothing moved
    view.update({ phase: 'importing', bytes: 4000, totalBytes: 4000, jobId: 12, jobStatus: 'processing' });
    view.update({ phase: 'importing', bytes: 4000, totalBytes: 4000, jobId: 12, jobStatus: 'success' });
    expect(lines).toEqual([
      'import: starting\n',
      'import: uploading, 1.0 kB / 4.0 kB (25%)\n',
      'import: uploading, 3.0 kB / 4.0 kB (75%)\n',
      'import: importing, 4.0 kB / 4.0 kB (100%), job 12 processing\n',
      'import: importing, 4.0 kB / 4.0 kB (100%), job 12 success\n',
    ]);
    for (const line of lines) expect(line.slice(0, -1)).not.toMatch(CONTROL);
  });

  it('never stays silent longer than 15 s: a phase where nothing changes (the Storage job importing) repeats its line with the time spent in it', () => {
    const { view, lines, tick } = recorder();
    tick(15_000);
    view.tick(); // no answer yet: the run is starting
    view.update({ phase: 'uploading', bytes: 4000, totalBytes: 4000 });
    tick(1_000);
    view.update({ phase: 'importing', bytes: 4000, totalBytes: 4000, jobId: 12, jobStatus: 'processing' });
    for (let second = 0; second < 37; second++) {
      tick(1_000);
      view.update({ phase: 'importing', bytes: 4000, totalBytes: 4000, jobId: 12, jobStatus: 'processing' });
      view.tick();
    }
    view.update({ phase: 'importing', bytes: 4000, totalBytes: 4000, jobId: 12, jobStatus: 'success' });
    tick(14_000);
    view.tick(); // spoken 14 s ago: not yet
    view.stop();
    tick(60_000);
    view.tick();
    expect(lines).toEqual([
      'import: starting (15.0 s in this phase)\n',
      'import: uploading, 4.0 kB / 4.0 kB (100%)\n',
      'import: importing, 4.0 kB / 4.0 kB (100%), job 12 processing\n',
      'import: importing, 4.0 kB / 4.0 kB (100%), job 12 processing (15.0 s in this phase)\n',
      'import: importing, 4.0 kB / 4.0 kB (100%), job 12 processing (30.0 s in this phase)\n',
      'import: importing, 4.0 kB / 4.0 kB (100%), job 12 success\n',
    ]);
  });

  it('shows an extraction by pages and records', () => {
    expect(plainProgressLine('extract', { phase: 'fetching', bytes: 2048, pages: 12, records: 340 })).toBe('extract: fetching, pages 12, records 340, 2.0 kB');
  });

  it('writes a line for each new attempt of a retrying step, not again for the same attempt', () => {
    const { view, lines } = recorder();
    const retry = { activityId: '3', activity: 'uploadFile', attempt: 2, lastFailure: '[SAPI_SERVER_ERROR] 500 from POST files/prepare' };
    view.retries([retry]);
    view.retries([retry]);
    view.retries([{ ...retry, attempt: 3 }]);
    view.retries([]);
    expect(lines).toEqual([
      'import: retrying uploadFile, attempt 2, last failure: [SAPI_SERVER_ERROR] 500 from POST files/prepare\n',
      'import: retrying uploadFile, attempt 3, last failure: [SAPI_SERVER_ERROR] 500 from POST files/prepare\n',
    ]);
  });
});

describe('retry display', () => {
  it('reads the attempt, the last failure and the next attempt from the pending activities Temporal describes, skipping first attempts', () => {
    const retries = activityRetries([
      { activityId: '1', activityType: { name: 'prepareUpload' }, attempt: 1 },
      {
        activityId: '2',
        activityType: { name: 'uploadFile' },
        attempt: 3,
        lastFailure: { message: 'POST files/prepare answered 500\n  (exception 42)', applicationFailureInfo: { type: 'SAPI_SERVER_ERROR' } },
        nextAttemptScheduleTime: { seconds: 1_000, nanos: 500_000_000 },
      },
    ]);
    expect(retries).toEqual([
      {
        activityId: '2',
        activity: 'uploadFile',
        attempt: 3,
        lastFailure: '[SAPI_SERVER_ERROR] POST files/prepare answered 500\n  (exception 42)',
        nextAttemptAt: 1_000_500,
      },
    ]);
    expect(formatRetry(retries[0]!, 400, 996_500)).toBe(
      'retrying uploadFile, attempt 3, last failure: [SAPI_SERVER_ERROR] POST files/prepare answered 500 | (exception 42) (next attempt in 4.0 s)',
    );
    expect(formatRetry({ activity: 'a', attempt: 2, lastFailure: 'x'.repeat(100) }, 10)).toBe(`retrying a, attempt 2, last failure: ${'x'.repeat(9)}…`);
    expect(printable('a\u001b[2Kb\rc')).toBe('a [2Kb c');
  });
});

describe('errors with --json', () => {
  it('gives the code, the one-line message, the workflow and the exit code', () => {
    const failed = commandFailure(ApplicationFailure.nonRetryable('Storage job 7 failed', 'SAPI_JOB_FAILED'), 'import', 'temporal:7233', 'import-1');
    expect(errorJson(failed)).toEqual({
      error: {
        code: 'SAPI_JOB_FAILED',
        message: 'import failed [SAPI_JOB_FAILED] Storage job 7 failed (workflow import-1)',
        workflowId: 'import-1',
        exitCode: 1,
      },
    });
    const lost = commandFailure(new TemporalLostError(600_000, new Error('down')), 'import', 'temporal:7233', 'import-2');
    expect(errorJson(lost).error).toMatchObject({ code: 'SAPI_CLI_TEMPORAL_LOST_CONTACT', workflowId: 'import-2', exitCode: 3 });
    const noWorker = commandFailure(new CliError(NO_WORKER, noWorkerMessage(settings, { name: 'sapi-q', kind: 'workflow' }, 5_000)), 'import', 'temporal:7233');
    expect(errorJson(noWorker).error).toEqual({
      code: 'SAPI_CLI_NO_WORKER',
      message: expect.stringContaining('sapi-temporal worker --task-queue sapi-q --namespace prod'),
      exitCode: 1,
    });
  });

  it('prints one JSON object on stdout for a usage error and for a failed command, with the same exit codes', async () => {
    const stdout: string[] = [];
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => stdout.push(String(chunk)) > 0);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await run(['node', 'sapi-temporal', 'import', 'x.csv', '--json'])).toBe(2);
      expect(stdout).toHaveLength(1);
      expect(JSON.parse(stdout[0]!)).toEqual({
        error: { code: 'commander.missingMandatoryOptionValue', message: expect.stringContaining('--bucket'), exitCode: 2 },
      });
      stdout.length = 0;
      const failing: TransferRunner = async () => {
        throw new CliError(NO_WORKER, 'no worker polls task queue q');
      };
      expect(await run(['node', 'sapi-temporal', 'import', 'x.csv', '--bucket', 'in.c-a', '--table', 't', '--json'], { runTransfer: failing })).toBe(1);
      expect(stdout.map((chunk) => JSON.parse(chunk) as unknown)).toEqual([
        { error: { code: 'SAPI_CLI_NO_WORKER', message: 'no worker polls task queue q', exitCode: 1 } },
      ]);
      stdout.length = 0;
      expect(await run(['node', 'sapi-temporal', 'import', 'x.csv', '--bucket', 'in.c-a', '--table', 't'], { runTransfer: failing })).toBe(1);
      expect(stdout).toEqual([]);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(wantsJson(['node', 's', 'wait', 'id', '--', '--json'])).toBe(false);
  });
});

describe('--version, --detach, Ctrl-C and the worker check', () => {
  it('prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(packageVersion()).toBe(version);
    const stdout: string[] = [];
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => stdout.push(String(chunk)) > 0);
    try {
      expect(await run(['node', 'sapi-temporal', '--version'])).toBe(0);
    } finally {
      out.mockRestore();
    }
    expect(stdout.join('')).toBe(`${version}\n`);
  });

  it('detaches on Ctrl-C by default, cancels with --cancel-on-interrupt, and checks workers unless --detach or --no-worker-check', async () => {
    const parse = async (args: string[]) => {
      const runs: TransferRun[] = [];
      const record: TransferRunner = async (transfer) => void runs.push(transfer as unknown as TransferRun);
      await buildProgram({ env: {}, runTransfer: record }).parseAsync(args, { from: 'user' });
      return runs[0]!;
    };
    expect(await parse(['import', 'x.csv', '--bucket', 'in.c-b', '--table', 't'])).toMatchObject({ detach: false, onInterrupt: 'detach', checkWorkers: true });
    expect(await parse(['export', 'in.c-a.t', 'o.csv', '--cancel-on-interrupt', '--no-worker-check'])).toMatchObject({
      onInterrupt: 'cancel',
      checkWorkers: false,
    });
    const detached = await parse(['import', 'x.csv', '--bucket', 'in.c-b', '--table', 't', '--detach', '--transfer-task-queue', 'host-q']);
    expect(detached).toMatchObject({ detach: true });
    expect(neededQueues(detached)).toEqual([
      { name: 'sapi-temporal', kind: 'workflow' },
      { name: 'host-q', kind: 'activity' },
    ]);
  });

  it('counts only workers that polled in the last two minutes', () => {
    const now = 1_000_000_000;
    expect(
      activePollers(
        [
          { identity: '1@a', lastAccessTime: { seconds: (now - 30_000) / 1000 } },
          { identity: '2@b', lastAccessTime: { seconds: (now - 300_000) / 1000 } },
        ],
        now,
      ),
    ).toEqual(['1@a']);
  });

  /** A client whose task queue lists `pollers[i]` on the i-th look. */
  function fakeClient(pollers: Array<Array<{ identity: string; lastAccessTime: { seconds: number } }>>) {
    const requests: unknown[] = [];
    const client = {
      workflowService: {
        describeTaskQueue: async (request: unknown) => {
          requests.push(request);
          return { pollers: pollers[Math.min(requests.length - 1, pollers.length - 1)] };
        },
      },
    } as unknown as Client;
    return { client, requests };
  }

  it('fails naming the queue and the worker command when no worker shows up, and goes on when one does', async () => {
    let clock = 0;
    const timing = { now: () => clock, sleep: async (ms: number) => void (clock += ms), waitMs: 5_000, recheckMs: 1_000 };
    const nobody = fakeClient([[]]);
    const waiting: string[] = [];
    await expect(
      requireWorkers(nobody.client, settings, [{ name: 'sapi-q', kind: 'workflow' }], { ...timing, onWaiting: (q) => waiting.push(q.name) }),
    ).rejects.toMatchObject({
      code: 'SAPI_CLI_NO_WORKER',
      message: expect.stringMatching(
        /^no worker polls task queue sapi-q in namespace prod at temporal:7233 .*waited 5 s; nothing was started\. Start one: `sapi-temporal worker --task-queue sapi-q --namespace prod --address temporal:7233`/,
      ),
    });
    expect(clock).toBe(5_000);
    expect(waiting).toEqual(['sapi-q']);
    expect(nobody.requests[0]).toMatchObject({ namespace: 'prod', taskQueue: { name: 'sapi-q' }, taskQueueType: 1 });

    clock = 0;
    const late = fakeClient([[], [], [{ identity: '9@w', lastAccessTime: { seconds: 0 } }]]);
    await requireWorkers(late.client, settings, [{ name: 'sapi-q', kind: 'workflow' }], timing);
    expect(clock).toBe(2_000);
  });
});
