import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { TransferProgress } from '../../../src/contracts/transfer';
import { createSampleApi } from '../../../src/sample-api';
import { eventually, repoRoot } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack, uniqueTaskQueue } from '../../harness/stack-state';

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface RunningCli {
  child: ChildProcess;
  /** Output so far (grows while the process runs). */
  output: { stdout: string; stderr: string };
  done: Promise<CliOutcome>;
}

describe('the sapi-temporal CLI', () => {
  const stack = testStack();
  let env: SapiTestEnv;
  let workDir: string;
  beforeAll(async () => {
    env = await startSapiTestEnv('cli');
    workDir = mkdtempSync(join(env.dataDir, 'cwd-'));
  });
  afterAll(() => env?.stop());

  /**
   * Runs the real CLI as a child process, as `bin/sapi-temporal` does, from `workDir` (so relative paths are
   * relative to it). Only the Temporal variables are set: no SAPI_URL/SAPI_TOKEN, the worker has those.
   */
  function startCli(args: string[], childEnv: NodeJS.ProcessEnv = {}): RunningCli {
    const child = spawn(process.execPath, ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args], {
      cwd: workDir,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        TEMPORAL_NAMESPACE: stack.namespace,
        TEMPORAL_TASK_QUEUE: undefined,
        SAPI_URL: undefined,
        SAPI_TOKEN: undefined,
        ...childEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { stdout: '', stderr: '' };
    child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    const done = new Promise<CliOutcome>((ok, fail) => {
      child.once('error', fail);
      child.once('close', (code) => ok({ code, ...output }));
    });
    return { child, output, done };
  }

  const cli = (args: string[], childEnv?: NodeJS.ProcessEnv) => startCli(args, childEnv).done;
  const onQueue = (...args: string[]) => [...args, '--task-queue', env.taskQueue];

  function csvFile(name: string, content: string): string {
    writeFileSync(join(workDir, name), content);
    return name;
  }

  const source = 'id,name\n1,alpha\n2,"beta, with comma"\n3,gamma\n';

  /** The one stderr line a run command prints when its workflow started: the id and how to re-attach. */
  const startedLine = (verb: string, workflowId: string | RegExp) => {
    const id = typeof workflowId === 'string' ? workflowId.replace(/[.]/g, '\\.') : workflowId.source;
    return new RegExp(`^${verb}: started workflow (${id}) \\(run [\\w-]+\\); to re-attach: sapi-temporal wait \\1\n$`);
  };
  /** The first line of `text`, with its line break. */
  const firstLine = (text: string) => `${text.split('\n')[0]}\n`;
  /** Plain progress (stderr is a pipe here): every line `<verb>: <phase>[, …]`, no control characters. */
  const plainProgressOnly = (stderr: string, verb: string) => {
    // eslint-disable-next-line no-control-regex
    expect(stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    for (const line of stderr.trimEnd().split('\n').filter(Boolean)) expect(line).toMatch(new RegExp(`^${verb}: [a-z]+(, .+)?$`));
  };

  it('imports a local CSV given by a relative path and prints exactly one JSON object with the result', async () => {
    const file = csvFile('orders.csv', source);
    const outcome = await cli(onQueue('import', file, '--bucket', 'in.c-cli', '--create-bucket', '--table', 'orders', '--primary-key', 'id', '--json'));
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toMatch(startedLine('import', /import-in\.c-cli\.orders-\w+/));
    expect(outcome.stdout.trimEnd().split('\n')).toHaveLength(1);
    const result = JSON.parse(outcome.stdout) as Record<string, unknown>;
    expect(result).toEqual({
      workflowId: expect.stringMatching(/^import-in\.c-cli\.orders-/),
      runId: expect.any(String),
      tableId: 'in.c-cli.orders',
      fileId: expect.any(Number),
      jobId: expect.any(Number),
      importedRowsCount: 3,
      bytes: Buffer.byteLength(source),
      sha256: createHash('sha256').update(source).digest('hex'),
      typed: false,
      // the load's receipt, written to the default receipts table
      receipt: {
        status: 'written',
        table: 'in.c-sapi-temporal.receipts',
        receipt: expect.objectContaining({ tableId: 'in.c-cli.orders', rows: 3, bytes: Buffer.byteLength(source) }),
      },
    });
    expect(await env.emulator.readTable('in.c-cli.orders')).toEqual({
      columns: ['id', 'name'],
      rows: [
        ['1', 'alpha'],
        ['2', 'beta, with comma'],
        ['3', 'gamma'],
      ],
    });
  });

  it('loads more rows incrementally and prints a human summary', async () => {
    const file = csvFile('more.csv', 'id,name\n3,gamma-2\n4,delta\n');
    const outcome = await cli(
      onQueue('import', file, '--bucket', 'in.c-cli', '--table', 'orders', '--mode', 'load', '--incremental', '--workflow-id', 'cli-load-1'),
    );
    expect(outcome.code).toBe(0);
    expect(firstLine(outcome.stderr)).toMatch(startedLine('import', 'cli-load-1'));
    plainProgressOnly(outcome.stderr.slice(firstLine(outcome.stderr).length), 'import');
    expect(outcome.stdout).toMatch(/^imported 2 rows into in\.c-cli\.orders\n/);
    expect(outcome.stdout).toMatch(/^ {2}workflow +cli-load-1$/m);
    expect(outcome.stdout).toMatch(/^ {2}job id +\d+$/m);
    expect(outcome.stdout).toMatch(/^ {2}duration +[\d.]+ s$/m);
    const table = await env.emulator.readTable('in.c-cli.orders');
    expect([...table.rows].sort()).toEqual([
      ['1', 'alpha'],
      ['2', 'beta, with comma'],
      ['3', 'gamma-2'],
      ['4', 'delta'],
    ]);
  });

  it('runs an import under a --workflow-id whose run completed no second time: "already done", its result; --rerun loads again', async () => {
    await cli(onQueue('import', csvFile('nightly-base.csv', 'id,v\n1,a\n'), '--bucket', 'in.c-cli', '--create-bucket', '--table', 'nightly'));
    const file = csvFile('nightly.csv', 'id,v\n2,b\n3,c\n');
    const args = onQueue('import', file, '--bucket', 'in.c-cli', '--table', 'nightly', '--mode', 'load', '--incremental', '--workflow-id', 'nightly-1');
    const loads = () => env.emulator.requests.filter((r) => r.method === 'POST' && r.path === '/v2/storage/tables/in.c-cli.nightly/import-async').length;
    const before = loads();
    const first = await cli(args);
    expect(first.code).toBe(0);
    expect(firstLine(first.stderr)).toMatch(startedLine('import', 'nightly-1'));

    const again = await cli(args);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(
      /^import: already done: workflow nightly-1 \(run [\w-]+\) completed before; nothing was run again \(run it again with --rerun\)$/m,
    );
    expect(again.stdout).toMatch(/^imported 2 rows into in\.c-cli\.nightly\n/);
    expect(again.stdout).toMatch(/^ {2}workflow +nightly-1$/m);
    expect(loads() - before).toBe(1);
    expect((await env.emulator.readTable('in.c-cli.nightly')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
    ]);
    const json = await cli([...args, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ workflowId: 'nightly-1', importedRowsCount: 2 });
    expect(loads() - before).toBe(1);

    const rerun = await cli([...args, '--rerun']);
    expect(rerun.code).toBe(0);
    expect(firstLine(rerun.stderr)).toMatch(startedLine('import', 'nightly-1'));
    expect(loads() - before).toBe(2);
    expect((await env.emulator.readTable('in.c-cli.nightly')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
      ['2', 'b'],
      ['3', 'c'],
    ]);
  });

  it('exports the table to a relative path and reports the bytes and checksum of the file it wrote', async () => {
    const outcome = await cli(onQueue('export', 'in.c-cli.orders', 'out/orders.csv', '--where', 'id=ne:4', '--json'));
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toMatch(startedLine('export', /export-in\.c-cli\.orders-\w+/));
    const result = JSON.parse(outcome.stdout) as { path: string; bytes: number; sha256: string; workflowId: string };
    const path = join(workDir, 'out', 'orders.csv');
    expect(result).toMatchObject({ path, sliced: true, slices: 1, workflowId: expect.stringMatching(/^export-in\.c-cli\.orders-/) });
    const written = readFileSync(path);
    expect(result.bytes).toBe(written.length);
    expect(result.sha256).toBe(createHash('sha256').update(written).digest('hex'));
    const rows = parse(written) as string[][];
    expect(rows[0]).toEqual(['id', 'name']);
    expect(rows.slice(1).sort()).toEqual([
      ['1', 'alpha'],
      ['2', 'beta, with comma'],
      ['3', 'gamma-2'],
    ]);
  });

  it('fails a malformed CSV with exit code 1, one JSON error on stdout and, after the started line, one stderr line naming SAPI_JOB_FAILED and the workflow', async () => {
    const file = csvFile('bad.csv', 'a,b\n1,2\n3,"unclosed\n');
    const outcome = await cli(onQueue('import', file, '--bucket', 'in.c-cli', '--table', 'bad', '--workflow-id', 'cli-bad-1', '--json'));
    expect(outcome.code).toBe(1);
    expect(outcome.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(outcome.stdout)).toEqual({
      error: {
        code: 'SAPI_JOB_FAILED',
        message: expect.stringMatching(/^import failed \[SAPI_JOB_FAILED\] Storage job \d+ .*\(workflow cli-bad-1\)$/),
        workflowId: 'cli-bad-1',
        exitCode: 1,
      },
    });
    const lines = outcome.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(`${lines[0]}\n`).toMatch(startedLine('import', 'cli-bad-1'));
    expect(lines[1]).toMatch(/^sapi-temporal: import failed \[SAPI_JOB_FAILED\] Storage job \d+ .*failed: .*\(workflow cli-bad-1\)$/);
  });

  it('schedules a recurring incremental import, runs it on trigger, lists, pauses and deletes it', async () => {
    expect(
      (
        await cli(
          onQueue('import', csvFile('sched-first.csv', 'id,v\n1,a\n'), '--bucket', 'in.c-cli', '--create-bucket', '--table', 'sched', '--primary-key', 'id'),
        )
      ).code,
    ).toBe(0);
    const file = csvFile('sched.csv', 'id,v\n1,b\n2,c\n');
    const id = `nightly-${Date.now()}`;
    const created = await cli(
      onQueue(
        'schedule',
        'import',
        id,
        file,
        '--bucket',
        'in.c-cli',
        '--table',
        'sched',
        '--mode',
        'load',
        '--incremental',
        '--cron',
        '0 3 * * *',
        '--timezone',
        'Europe/Prague',
        '--jitter',
        '0',
        '--json',
      ),
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const schedule = JSON.parse(created.stdout) as { nextActionTimes: string[] };
    expect(schedule).toMatchObject({ scheduleId: id, workflowType: 'importTableWorkflow', taskQueue: env.taskQueue, paused: false });
    expect(schedule.nextActionTimes[0]).toMatch(/T02:00:00\.000Z$/); // 03:00 in Prague is 02:00 UTC in November
    const handle = env.client.schedule.getHandle(id);
    const described = await handle.describe();
    expect(described.action).toMatchObject({
      workflowType: 'importTableWorkflow',
      taskQueue: env.taskQueue,
      args: [{ source: join(workDir, file), bucketId: 'in.c-cli', table: 'sched', mode: 'load', incremental: true }],
    });

    expect(await cli(['schedule', 'trigger', id])).toMatchObject({ code: 0, stdout: `triggered schedule ${id}\n` });
    let runId: string | undefined;
    await eventually(
      async () => (runId = (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId) !== undefined,
      30_000,
      'the trigger started no workflow',
    );
    expect(runId).toMatch(new RegExp(`^${id}-`));
    const result = (await env.client.workflow.getHandle(runId!).result()) as { importedRowsCount: number };
    expect(result.importedRowsCount).toBe(2);
    expect((await env.emulator.readTable('in.c-cli.sched')).rows.sort()).toEqual([
      ['1', 'b'],
      ['2', 'c'],
    ]);

    let listed: Array<{ scheduleId: string }> = [];
    await eventually(
      async () => {
        const outcome = await cli(['schedule', 'list', '--json']);
        listed = JSON.parse(outcome.stdout) as typeof listed;
        return listed.some((s) => s.scheduleId === id);
      },
      30_000,
      'schedule list never showed the schedule',
    );
    expect(listed.find((s) => s.scheduleId === id)).toMatchObject({ workflowType: 'importTableWorkflow', paused: false, recentWorkflowIds: [runId] });

    expect(await cli(['schedule', 'pause', id, '--note', 'holidays'])).toMatchObject({ code: 0, stdout: `paused schedule ${id}\n` });
    expect((await handle.describe()).state).toMatchObject({ paused: true, note: 'holidays' });
    const again = await cli(onQueue('schedule', 'import', id, file, '--bucket', 'in.c-cli', '--table', 'sched', '--mode', 'load', '--every', '1h'));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^sapi-temporal: schedule import failed \\[SAPI_CLI_SCHEDULE_EXISTS\\] schedule ${id} already exists`));
    expect(await cli(['schedule', 'delete', id])).toMatchObject({ code: 0, stdout: `deleted schedule ${id}\n` });
    const gone = await cli(['schedule', 'trigger', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`sapi-temporal: schedule trigger failed [SAPI_CLI_SCHEDULE_NOT_FOUND] no schedule ${id} in namespace default\n`);
  });

  it('runs each action of a schedule under an id of its own: triggered twice after a run completed, it loads twice', async () => {
    expect(
      (await cli(onQueue('import', csvFile('sched-twice-first.csv', 'id\n0\n'), '--bucket', 'in.c-cli', '--create-bucket', '--table', 'sched_twice'))).code,
    ).toBe(0);
    const id = `twice-${Date.now()}`;
    const file = csvFile('sched-twice.csv', 'id\n1\n');
    expect(
      (
        await cli(
          onQueue('schedule', 'import', id, file, '--bucket', 'in.c-cli', '--table', 'sched_twice', '--mode', 'load', '--incremental', '--cron', '0 3 1 1 *'),
        )
      ).code,
    ).toBe(0);
    const handle = env.client.schedule.getHandle(id);
    const actions = async () => (await handle.describe()).info.recentActions.map((a) => a.action.workflow.workflowId);
    const ranOnce = async (count: number) => {
      await eventually(async () => (await actions()).length === count, 30_000, `the schedule did not start run ${count}`);
      const workflowId = (await actions())[count - 1]!;
      return (await env.client.workflow.getHandle(workflowId).result()) as { importedRowsCount: number };
    };
    expect((await cli(['schedule', 'trigger', id])).code).toBe(0);
    expect(await ranOnce(1)).toMatchObject({ importedRowsCount: 1 });
    // at once: Temporal names a triggered run by its time to the second, and `trigger` waits for the last action's
    // second to pass so that this run gets an id of its own (not the completed first run's: "already done")
    expect((await cli(['schedule', 'trigger', id])).code).toBe(0);
    expect(await ranOnce(2)).toMatchObject({ importedRowsCount: 1 });
    const ids = await actions();
    expect(new Set(ids).size).toBe(2);
    for (const workflowId of ids) expect(workflowId).toMatch(new RegExp(`^${id}-`));
    expect((await env.emulator.readTable('in.c-cli.sched_twice')).rows).toEqual([['0'], ['1'], ['1']]);
    expect((await cli(['schedule', 'delete', id])).code).toBe(0);
  });

  it("buffers an import schedule's run behind a slow one by default, counts skipped runs with a warning, and triggers within the overlap policy unless --allow-overlap", async () => {
    expect(
      (await cli(onQueue('import', csvFile('slow-sched-first.csv', 'id\n1\n'), '--bucket', 'in.c-cli', '--create-bucket', '--table', 'slow_sched'))).code,
    ).toBe(0);
    // every load's job runs until the test releases it
    env.emulator.faults.holdJob({ tableId: 'in.c-cli.slow_sched', operationName: 'tableImport' });
    const file = csvFile('slow-sched.csv', 'id\n2\n');
    const load = ['--bucket', 'in.c-cli', '--table', 'slow_sched', '--mode', 'load', '--incremental'];
    const describe = async (id: string) => {
      const outcome = await cli(['schedule', 'describe', id, '--json']);
      return { listing: JSON.parse(outcome.stdout) as { overlap: string; skipped: number; buffered: number }, stderr: outcome.stderr };
    };

    // default (imports): buffer-one; a trigger while a run is going starts after it, --allow-overlap starts at once
    const buffered = `buffered-${Date.now()}`;
    expect((await cli(onQueue('schedule', 'import', buffered, file, ...load, '--every', '1d', '--paused'))).code).toBe(0);
    expect((await describe(buffered)).listing.overlap).toBe('buffer-one');
    const runs = async () =>
      (await env.client.schedule.getHandle(buffered).describe()).info.recentActions.map((a) => env.client.workflow.getHandle(a.action.workflow.workflowId));
    expect((await cli(['schedule', 'trigger', buffered])).code).toBe(0);
    await eventually(async () => (await runs()).length === 1, 30_000, 'the first trigger started no run');
    expect((await cli(['schedule', 'trigger', buffered])).code).toBe(0);
    // the second trigger waits in the buffer while the first run's job is held; released, the first run ends
    await eventually(async () => (await describe(buffered)).listing.buffered === 1, 30_000, 'the second trigger was not buffered');
    await env.emulator.faults.jobHeld('tableImport');
    expect(await runs()).toHaveLength(1);
    env.emulator.faults.releaseJobs('tableImport');
    env.emulator.faults.holdJob({ tableId: 'in.c-cli.slow_sched', operationName: 'tableImport' }); // the buffered run's job is held again
    await eventually(async () => (await runs()).length === 2, 60_000, 'the buffered trigger never ran');
    const [first, second] = await Promise.all((await runs()).map((run) => run.describe()));
    expect(second!.startTime.getTime()).toBeGreaterThanOrEqual(first!.closeTime!.getTime()); // after, never beside it
    expect((await cli(['schedule', 'trigger', buffered, '--allow-overlap'])).code).toBe(0);
    await eventually(async () => (await runs()).length === 3, 30_000, 'the overlapping trigger started no run');
    const [, during, third] = await Promise.all((await runs()).map((run) => run.describe()));
    expect(during!.status.name).toBe('RUNNING'); // started beside the running one
    expect(third!.status.name).toBe('RUNNING');
    expect((await cli(['schedule', 'delete', buffered])).code).toBe(0);

    // skip: runs due while one is going are dropped, and say so
    const skipping = `skipping-${Date.now()}`;
    expect((await cli(onQueue('schedule', 'import', skipping, file, ...load, '--every', '1s', '--overlap', 'skip'))).code).toBe(0);
    await eventually(async () => (await describe(skipping)).listing.skipped >= 2, 30_000, 'no run was skipped');
    const seen = await describe(skipping);
    expect(seen.listing).toMatchObject({ overlap: 'skip' });
    expect(seen.stderr).toMatch(
      new RegExp(`^warning: schedule ${skipping}: \\d+ run\\(s\\) skipped because the previous one was still running \\(overlap skip\\)$`, 'm'),
    );
    const listed = await cli(['schedule', 'list']);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^${skipping}  importTableWorkflow  next \\S+  overlap skip  taken \\d+, running \\d, buffered \\d, skipped \\d+, missed 0  last ${skipping}-`,
        'm',
      ),
    );
    expect(listed.stderr).toContain(`warning: schedule ${skipping}:`);
    expect((await cli(['schedule', 'delete', skipping])).code).toBe(0);
    env.emulator.faults.releaseJobs('tableImport');
  });

  it("re-attaches to a running import with `wait <id>`, prints the import's summary, and `status <id>` shows it running, then completed", async () => {
    // the job runs until `wait` has attached and printed the running import's progress
    env.emulator.faults.holdJob({ tableId: 'in.c-cli.waited', operationName: 'tableCreate', times: 1 });
    const workflowId = `cli-wait-${Date.now()}`;
    const handle = await env.client.workflow.start('importTableWorkflow', {
      taskQueue: env.taskQueue,
      workflowId,
      args: [{ source: join(workDir, csvFile('wait.csv', 'id,v\n1,a\n2,b\n')), bucketId: 'in.c-cli', createBucket: true, table: 'waited', gzip: true }],
    });
    const running = await cli(['status', workflowId, '--json']);
    expect(running).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(running.stdout)).toMatchObject({
      workflowId,
      firstRunId: handle.firstExecutionRunId,
      type: 'importTableWorkflow',
      status: 'running',
      taskQueue: env.taskQueue,
    });

    const waiting = startCli(['wait', workflowId]);
    await eventually(() => /^import: /m.test(waiting.output.stderr), 60_000, `wait printed no progress; stderr: ${waiting.output.stderr}`);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    env.emulator.faults.releaseJobs('tableCreate');
    const waited = await waiting.done;
    expect(waited.code).toBe(0);
    plainProgressOnly(waited.stderr, 'import');
    expect(waited.stdout).toMatch(/^imported 2 rows into in\.c-cli\.waited\n/);
    expect(waited.stdout).toMatch(/^ {2}bytes +\d+ B \(\d+ B gzipped\)$/m); // the summary knows the run's input
    expect(waited.stdout).toMatch(new RegExp(`^ {2}workflow +${workflowId}$`, 'm'));
    expect(waited.stdout).toMatch(new RegExp(`^ {2}run id +${handle.firstExecutionRunId}$`, 'm'));
    expect((await env.emulator.readTable('in.c-cli.waited')).rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
    ]);

    const json = await cli(['wait', workflowId, '--json']);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toMatchObject({ workflowId, runId: handle.firstExecutionRunId, tableId: 'in.c-cli.waited', importedRowsCount: 2 });

    const done = await cli(['status', workflowId]);
    expect(done).toMatchObject({ code: 0, stderr: '' });
    expect(done.stdout).toMatch(new RegExp(`^workflow ${workflowId}: completed\n`));
    expect(done.stdout).toMatch(/^ {2}type +importTableWorkflow$/m);
    expect(done.stdout).toMatch(/^ {2}closed +\d{4}-\d\d-\d\dT/m);
    expect(done.stdout).toMatch(/^ {2}result +imported 2 rows into in\.c-cli\.waited$/m);
    const doneJson = JSON.parse((await cli(['status', workflowId, '--json'])).stdout);
    expect(doneJson).toMatchObject({ status: 'completed', result: { importedRowsCount: 2 }, closeTime: expect.any(String) });
  });

  it('exits 1 from `wait` on a failed import with its failure line, and `status` shows the failure', async () => {
    const waited = await cli(['wait', 'cli-bad-1']);
    expect(waited.code).toBe(1);
    expect(waited.stdout).toBe('');
    expect(waited.stderr).toMatch(/(^|\n)sapi-temporal: import failed \[SAPI_JOB_FAILED\] Storage job \d+ .*\(workflow cli-bad-1\)\n$/);
    plainProgressOnly(waited.stderr.replace(/^sapi-temporal: .*\n$/m, ''), 'import');
    const status = await cli(['status', 'cli-bad-1', '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'failed', failure: { type: 'SAPI_JOB_FAILED' } });
  });

  it('exits 1 from `status` and `wait` with a clear message for an unknown workflow id', async () => {
    for (const verb of ['status', 'wait']) {
      const outcome = await cli([verb, 'no-such-workflow']);
      expect(outcome).toMatchObject({ code: 1, stdout: '' });
      expect(outcome.stderr).toBe(
        `sapi-temporal: ${verb} failed [SAPI_CLI_WORKFLOW_NOT_FOUND] no workflow no-such-workflow in namespace ${stack.namespace} at ${stack.temporalAddress} (use the id the run command printed: "started workflow <id>")\n`,
      );
    }
  });

  it("exits 2 with commander's message on a usage error, without starting anything", async () => {
    const outcome = await cli(onQueue('import', 'x.csv', '--bucket', 'in.c-cli', '--table', 't', '--no-such-flag'));
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^error: unknown option '--no-such-flag'/);
    expect(outcome.stdout).toBe('');
  });

  it('stops waiting on Ctrl-C, exits 130 saying how to re-attach, and the workflow runs on to its end', async () => {
    // the job runs until the test has seen the CLI exit and the workflow still running
    env.emulator.faults.holdJob({ tableId: 'in.c-cli.ctrl_c_detach', operationName: 'tableCreate', times: 1 });
    const workflowId = `cli-detach-${Date.now()}`;
    const running = startCli(
      onQueue('import', csvFile('detach.csv', 'a\n1\n'), '--bucket', 'in.c-cli', '--table', 'ctrl_c_detach', '--workflow-id', workflowId),
    );
    const handle = env.client.workflow.getHandle(workflowId);
    await eventually(
      async () => (await handle.query<TransferProgress>('progress').catch(() => undefined))?.phase === 'importing',
      60_000,
      `the import never reached the importing phase; CLI stderr: ${running.output.stderr}`,
    );
    running.child.kill('SIGINT');
    const outcome = await running.done;
    expect(`exit ${outcome.code}\n${outcome.stderr}`).toMatch(/^exit 130\n/); // stderr shown on failure
    // the terminal comes back while the job (held) and so the workflow still run
    expect(outcome.stderr).toMatch(
      new RegExp(
        `^sapi-temporal: import: stopped waiting; workflow ${workflowId} keeps running \\(re-attach with \`sapi-temporal wait ${workflowId}\`\\)$`,
        'm',
      ),
    );
    expect((await handle.describe()).status.name).toBe('RUNNING');
    env.emulator.faults.releaseJobs('tableCreate');
    const waited = await cli(['wait', workflowId, '--json']);
    expect(JSON.parse(waited.stdout)).toMatchObject({ workflowId, importedRowsCount: 1 });
  });

  it('cancels the workflow on Ctrl-C with --cancel-on-interrupt and ends with its cancellation', async () => {
    // the job runs until the run was cancelled
    env.emulator.faults.holdJob({ tableId: 'in.c-cli.slow', operationName: 'tableCreate', times: 1 });
    const workflowId = `cli-cancel-${Date.now()}`;
    const running = startCli(
      onQueue('import', csvFile('slow.csv', 'a\n1\n'), '--bucket', 'in.c-cli', '--table', 'slow', '--workflow-id', workflowId, '--cancel-on-interrupt'),
    );
    const handle = env.client.workflow.getHandle(workflowId);
    await eventually(
      async () => (await handle.query<TransferProgress>('progress').catch(() => undefined))?.phase === 'importing',
      60_000,
      `the import never reached the importing phase; CLI stderr: ${running.output.stderr}`,
    );
    running.child.kill('SIGINT');
    const outcome = await running.done;
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/cancelling workflow cli-cancel-/);
    expect(outcome.stderr).toMatch(/^sapi-temporal: import failed .*cancel/im);
    // as `temporal workflow cancel` ends it: cancelled, not failed
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    env.emulator.faults.releaseJobs('tableCreate');
  });

  it('cancels an export on Ctrl-C with --cancel-on-interrupt: it ends cancelled, as `temporal workflow cancel` ends it', async () => {
    // the job runs until the run was cancelled
    env.emulator.faults.holdJob({ operationName: 'tableExport', times: 1 });
    const workflowId = `cli-cancel-export-${Date.now()}`;
    const running = startCli(onQueue('export', 'in.c-cli.orders', 'out/cancelled.csv', '--workflow-id', workflowId, '--cancel-on-interrupt'));
    const handle = env.client.workflow.getHandle(workflowId);
    await eventually(
      async () => (await handle.query<TransferProgress>('progress').catch(() => undefined))?.jobId !== undefined,
      60_000,
      `the export never started its Storage job; CLI stderr: ${running.output.stderr}`,
    );
    running.child.kill('SIGINT');
    const outcome = await running.done;
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/cancelling workflow cli-cancel-export-/);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    env.emulator.faults.releaseJobs('tableExport');
  });

  it('cancels an extraction on Ctrl-C with --cancel-on-interrupt: it stops after the page in flight, loads what it staged, and ends cancelled', async () => {
    const api = await createSampleApi({ port: 0 });
    try {
      const config = {
        parameters: {
          api: { baseUrl: api.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
          config: { outputBucket: 'cli-cancel', jobs: [{ endpoint: 'large/items', dataField: 'items' }] },
        },
      };
      writeFileSync(join(workDir, 'cancel-extract.json'), JSON.stringify(config));
      const workflowId = `cli-cancel-extract-${Date.now()}`;
      const running = startCli(onQueue('extract', 'cancel-extract.json', '--mode', 'page', '--workflow-id', workflowId, '--cancel-on-interrupt'));
      const handle = env.client.workflow.getHandle(workflowId);
      await eventually(
        async () => ((await handle.query<{ pages: number }>('progress').catch(() => undefined))?.pages ?? 0) >= 3,
        60_000,
        `no pages extracted; CLI stderr: ${running.output.stderr}`,
      );
      running.child.kill('SIGINT');
      const outcome = await running.done;
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toMatch(/cancelling workflow cli-cancel-extract-/);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
      // graceful: the pages fetched before the cancel were loaded, and the run says so
      const progress = await handle.query<{ phase: string; pages: number; tables: Record<string, number> }>('progress');
      expect(progress.phase).toBe('cancelled');
      expect(progress.pages).toBeGreaterThanOrEqual(3);
      // it stopped where the cancel came (not a page count, which depends on the machine's speed): no page call was
      // scheduled after the cancellation request (the one in flight ended)
      const events = (await handle.fetchHistory()).events ?? [];
      const requested = events.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes);
      expect(requested).toBeGreaterThan(0);
      expect(events.slice(requested).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchPages')).toEqual([]);
      expect((await env.emulator.readTable('in.c-cli-cancel.large_items')).rows).toHaveLength(progress.tables.large_items!);
    } finally {
      await api.close();
    }
  });

  it('attaches a second import with the same --workflow-id to the running one: one workflow, one Storage job, both print its result', async () => {
    // the job runs until the second command has attached (a CLI process takes 20 s and more to boot on a loaded machine)
    env.emulator.faults.holdJob({ tableId: 'in.c-cli.attached', operationName: 'tableCreate', times: 1 });
    const workflowId = `cli-attach-${Date.now()}`;
    const args = onQueue('import', csvFile('attach.csv', 'a\n1\n2\n'), '--bucket', 'in.c-cli', '--table', 'attached', '-w', workflowId, '--json');
    const jobsBefore = env.emulator.requests.filter((r) => r.method === 'POST' && /tables-async/.test(r.path)).length;
    const first = startCli(args);
    const handle = env.client.workflow.getHandle(workflowId);
    await eventually(
      async () => (await handle.query<TransferProgress>('progress').catch(() => undefined))?.phase === 'importing',
      60_000,
      `never importing; CLI stderr: ${first.output.stderr}`,
    );
    const attaching = startCli(args);
    await eventually(
      () => /^import: attached to running workflow /m.test(attaching.output.stderr),
      60_000,
      `the second import did not attach; stderr: ${attaching.output.stderr}`,
    );
    env.emulator.faults.releaseJobs('tableCreate');
    const [second, firstOutcome] = await Promise.all([attaching.done, first.done]);
    expect(second.stderr).toMatch(new RegExp(`^import: attached to running workflow ${workflowId} \\(run `, 'm'));
    expect(firstOutcome.stderr).toMatch(new RegExp(`^import: started workflow ${workflowId} `, 'm'));
    expect([firstOutcome.code, second.code]).toEqual([0, 0]);
    expect(JSON.parse(second.stdout)).toEqual(JSON.parse(firstOutcome.stdout));
    expect(JSON.parse(second.stdout)).toMatchObject({ workflowId, importedRowsCount: 2 });
    const runs = [];
    for await (const run of env.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) runs.push(run.runId);
    expect(runs).toHaveLength(1);
    expect(env.emulator.requests.filter((r) => r.method === 'POST' && /tables-async/.test(r.path)).length - jobsBefore).toBe(1);
  });

  it('two concurrent imports with the same --workflow-id give one workflow and one Storage job: one says started, the other attached', async () => {
    const workflowId = `cli-race-${Date.now()}`;
    const args = onQueue('import', csvFile('race.csv', 'a\n1\n'), '--bucket', 'in.c-cli', '--table', 'raced', '--workflow-id', workflowId, '--json');
    const jobsBefore = env.emulator.requests.filter((r) => r.method === 'POST' && /tables-async/.test(r.path)).length;
    const outcomes = await Promise.all([cli(args), cli(args)]);
    expect(outcomes.map((o) => o.code)).toEqual([0, 0]);
    expect(outcomes.map((o) => JSON.parse(o.stdout).runId)).toEqual([expect.any(String), JSON.parse(outcomes[0]!.stdout).runId]);
    // the run's memo names the command that started it: the other one says it attached, whichever way the race went
    const said = outcomes.map((o) => /^import: (started|attached to running) workflow /m.exec(o.stderr)?.[1]).sort();
    expect(said).toEqual(['attached to running', 'started']);
    const runs = [];
    for await (const run of env.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) runs.push(run.runId);
    expect(runs).toHaveLength(1);
    expect(env.emulator.requests.filter((r) => r.method === 'POST' && /tables-async/.test(r.path)).length - jobsBefore).toBe(1);
  });

  it('runs a worker from the environment that serves imports until SIGTERM, then stops cleanly', async () => {
    const taskQueue = uniqueTaskQueue('cli-worker');
    const worker = startCli(['worker', '--task-queue', taskQueue], {
      ...stack.env,
      SAPI_URL: env.emulator.url,
      SAPI_TOKEN: env.emulator.token,
      SAPI_WORK_DIR: join(env.dataDir, 'cli-worker'),
    });
    try {
      await eventually(() => /worker polling/.test(worker.output.stdout) || worker.child.exitCode !== null, 120_000, 'the worker did not start');
      expect(worker.output.stdout).toContain(`worker polling ${taskQueue} `);
      const imported = await cli([
        'import',
        csvFile('via-worker.csv', 'k\n1\n2\n'),
        '--bucket',
        'in.c-cli',
        '--table',
        'via_worker',
        '--task-queue',
        taskQueue,
        '--json',
      ]);
      expect(imported.code).toBe(0);
      expect(imported.stderr).toMatch(startedLine('import', /import-in\.c-cli\.via_worker-\w+/));
      expect((await env.emulator.readTable('in.c-cli.via_worker')).rows).toEqual([['1'], ['2']]);
    } finally {
      worker.child.kill('SIGTERM');
    }
    expect((await worker.done).code).toBe(0);
  });

  it('runs the emulator on MinIO from the environment with a generated token until Ctrl-C, as the table backend and region asked', async () => {
    const emulator = startCli(['emulator', '--data-dir', 'emulator-data', '--table-backend', 'bigquery', '--region', 'eu-central-1'], {
      AWS_ENDPOINT_URL_S3: stack.minio.endpoint,
      AWS_REGION: stack.minio.region,
      AWS_ACCESS_KEY_ID: stack.minio.accessKeyId,
      AWS_SECRET_ACCESS_KEY: stack.minio.secretAccessKey,
      SAPI_EMULATOR_BUCKET: `cli-emulator-${Date.now().toString(36)}`,
    });
    try {
      await eventually(() => /SAPI_TOKEN/.test(emulator.output.stdout) || emulator.child.exitCode !== null, 60_000, 'the emulator did not start');
      const url = /SAPI_URL +(\S+)/.exec(emulator.output.stdout)?.[1];
      const token = /SAPI_TOKEN +(\S+)/.exec(emulator.output.stdout)?.[1];
      expect(emulator.output.stdout).toMatch(/SAPI_IMPORT_URL +http:\/\/127\.0\.0\.1:\d+\/import/);
      expect(emulator.output.stdout).toContain(join(workDir, 'emulator-data'));
      const verified = await fetch(`${url}/v2/storage/tokens/verify`, { headers: { 'X-StorageApi-Token': token ?? '' } });
      expect(verified.status).toBe(200);
      expect(await verified.json()).toMatchObject({ description: 'sapi-temporal emulator', owner: { defaultBackend: 'bigquery', region: 'eu-central-1' } });
    } finally {
      emulator.child.kill('SIGINT');
    }
    expect((await emulator.done).code).toBe(0);
  });

  it('fails the emulator with one line naming the missing S3 variables', async () => {
    const outcome = await cli(['emulator'], { AWS_ENDPOINT_URL_S3: '', AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(
      /^sapi-temporal: emulator failed \[SAPI_INVALID_INPUT\] AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY are not set: .*\n$/,
    );
  });
  it('extracts a paginated API from a configuration file and prints the rows per table as one JSON object', async () => {
    const api = await createSampleApi({ port: 0, records: 25, pageSize: 10 });
    try {
      const config = JSON.parse(readFileSync(resolve(repoRoot, 'examples', 'extract-users.json'), 'utf8'));
      config.parameters.api.baseUrl = api.url;
      config.parameters.config.outputBucket = 'cli-extract';
      writeFileSync(join(workDir, 'extract.json'), JSON.stringify(config));
      const outcome = await cli(['extract', 'extract.json', '--json', '--task-queue', env.taskQueue]);
      expect(outcome.code).toBe(0);
      const result = JSON.parse(outcome.stdout);
      expect(result.workflowId).toMatch(/extract/);
      expect(result.records).toBe(25);
      expect(result.tables).toEqual(expect.arrayContaining([expect.objectContaining({ tableId: 'in.c-cli-extract.users', rows: 25 })]));
      expect((await env.emulator.readTable('in.c-cli-extract.users')).rows).toHaveLength(25);
    } finally {
      await api.close();
    }
  });

  it('rejects an invalid extractor configuration before any request, naming the path and the rule', async () => {
    const api = await createSampleApi({ port: 0 });
    try {
      writeFileSync(
        join(workDir, 'bad-extract.json'),
        JSON.stringify({
          parameters: {
            api: { baseUrl: api.url, pagination: { method: 'response.param', queryParam: 'cursor' } },
            config: { jobs: [{ endpoint: 'cursor/items' }] },
          },
        }),
      );
      const outcome = await cli(['extract', 'bad-extract.json', '--task-queue', env.taskQueue]);
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toMatch(/^sapi-temporal: .*responseParam.*\n$/);
      expect(outcome.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(api.requests).toHaveLength(0);
    } finally {
      await api.close();
    }
  });
});
