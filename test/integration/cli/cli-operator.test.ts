import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { registerCommand } from '../../../src/contracts/search-attributes';
import { eventually, repoRoot } from '../../harness/processes';
import { startSapiTestEnv, type SapiTestEnv } from '../../harness/sapi-env';
import { testStack } from '../../harness/stack-state';

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What an operator meets: mistakes that must end with a coded line naming the fix, never a retry without end. */
describe('the CLI names what an operator got wrong', () => {
  const stack = testStack();
  let env: SapiTestEnv;
  let workDir: string;
  beforeAll(async () => {
    env = await startSapiTestEnv('cli-operator');
    workDir = mkdtempSync(join(env.dataDir, 'cwd-'));
  });
  afterAll(() => env?.stop());

  /**
   * Runs `bin/sapi-temporal` as a child process with pipes (not a TTY), from `workDir`; only the Temporal variables set.
   * `onStderr` sees the stderr written so far after each chunk.
   */
  function cli(args: string[], childEnv: NodeJS.ProcessEnv = {}, onStderr?: (stderr: string) => void): Promise<CliOutcome> {
    const child = spawn(process.execPath, ['-r', resolve(repoRoot, 'scripts', 'ts-register.js'), resolve(repoRoot, 'bin', 'sapi-temporal.js'), '--', ...args], {
      cwd: workDir,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        TEMPORAL_NAMESPACE: stack.namespace,
        TEMPORAL_TASK_QUEUE: env.taskQueue,
        SAPI_URL: undefined,
        SAPI_TOKEN: undefined,
        ...childEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      output.stderr += chunk.toString();
      onStderr?.(output.stderr);
    });
    return new Promise((ok, fail) => {
      child.once('error', fail);
      child.once('close', (code) => ok({ code, ...output }));
    });
  }

  function csvFile(name: string, content: string): string {
    writeFileSync(join(workDir, name), content);
    return name;
  }

  it('fails an import on a --connection the worker does not know with SAPI_INVALID_INPUT naming it and the known ones, without retrying', async () => {
    const workflowId = `cli-typo-connection-${Date.now()}`;
    const outcome = await cli([
      'import',
      csvFile('typo.csv', 'id\n1\n'),
      '--bucket',
      'in.c-operator',
      '--create-bucket',
      '--table',
      'typo',
      '--connection',
      'prdo',
      '--workflow-id',
      workflowId,
    ]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(
      /^sapi-temporal: import failed \[SAPI_INVALID_INPUT\] unknown Storage connection "prdo" \(configured: default\); set SAPI_PRDO_URL and SAPI_PRDO_TOKEN in the worker's environment/m,
    );
    // one attempt: the activity that met the unknown name failed for good instead of being retried
    const { events } = await env.client.workflow.getHandle(workflowId).fetchHistory();
    const failedActivities = events!.filter((e) => e.activityTaskFailedEventAttributes);
    expect(failedActivities).toHaveLength(1);
    expect(events!.find((e) => e.activityTaskStartedEventAttributes)?.activityTaskStartedEventAttributes?.attempt).toBe(1);
    expect(env.emulator.requests.filter((r) => r.path.includes('in.c-operator'))).toEqual([]);
  });

  it('`schedule describe` says the last run failed and why (a target that does not exist), as text, a warning and in -o json', async () => {
    const scheduleId = `missing-target-${Date.now()}`;
    const created = await cli([
      'schedule',
      'import',
      scheduleId,
      csvFile('nightly.csv', 'id\n1\n'),
      '--bucket',
      'in.c-nowhere',
      '--table',
      'nothing',
      '--mode',
      'load',
      '--every',
      '1d',
      '--paused',
    ]);
    expect(created.code).toBe(0);
    expect((await cli(['schedule', 'trigger', scheduleId])).code).toBe(0);
    const handle = env.client.schedule.getHandle(scheduleId);
    let runId: string | undefined;
    await eventually(
      async () => (runId = (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId) !== undefined,
      30_000,
      'the trigger started no workflow',
    );
    await env.client.workflow
      .getHandle(runId!)
      .result()
      .catch(() => undefined);

    const json = await cli(['schedule', 'describe', scheduleId, '-o', 'json']);
    expect(json.code).toBe(0);
    const listing = JSON.parse(json.stdout) as { lastRun: Record<string, unknown> };
    expect(listing.lastRun).toEqual({
      workflowId: runId,
      runId: expect.any(String),
      startedAt: expect.any(String),
      closedAt: expect.any(String),
      status: 'failed',
      failure: { type: 'SAPI_NOT_FOUND', message: expect.stringContaining('in.c-nowhere'), activity: expect.any(String) },
    });
    expect(json.stderr).toMatch(
      new RegExp(
        `^warning: schedule ${scheduleId}: the last run ${runId} at \\S+, failed: \\[SAPI_NOT_FOUND\\] .*in\\.c-nowhere.*\\(see \`sapi-temporal status ${runId}\`\\)$`,
        'm',
      ),
    );

    const text = await cli(['schedule', 'describe', scheduleId]);
    expect(text.stdout).toMatch(new RegExp(`last run +${runId} at \\S+, failed: \\[SAPI_NOT_FOUND\\] `));
    expect((await cli(['schedule', 'delete', scheduleId])).code).toBe(0);
  });

  it('off a terminal, says something at least every 15 s while the Storage job imports (it was silent for as long as the job took)', async () => {
    // the job runs until the CLI has said twice, after two quiet 15 s windows, that it still runs
    env.emulator.faults.holdJob({ operationName: 'tableCreate', times: 1 });
    const stillLine = /^import: \w+, .*job \d+ \w+ \((\d+\.\d s|\d+ min \d+ s) in this phase\)$/;
    const stillLines = (stderr: string) => stderr.split('\n').filter((line) => stillLine.test(line));
    const outcome = await cli(
      [
        'import',
        csvFile('slow.csv', 'id,v\n1,a\n'),
        '--bucket',
        'in.c-operator',
        '--create-bucket',
        '--table',
        'slow',
        '--workflow-id',
        `cli-slow-job-${Date.now()}`,
      ],
      {},
      (stderr) => {
        if (stillLines(stderr).length >= 2) env.emulator.faults.releaseJobs('tableCreate');
      },
    );
    expect(outcome.code).toBe(0);
    const lines = outcome.stderr.trimEnd().split('\n');
    // the job's phase said at its start, then again with the time spent in it, at least twice while it ran
    const still = stillLines(outcome.stderr);
    expect(still.length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-1)).toMatch(/^import: done, .*job \d+ success$/);
  });

  it("`list` on a namespace without the plugin's search attributes names the command that registers them", async () => {
    const namespace = `bare-${Date.now().toString(36)}`;
    const connection = await Connection.connect({ address: stack.temporalAddress });
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    } finally {
      await connection.close();
    }
    let outcome: CliOutcome | undefined;
    // a new namespace is served within seconds (until then: not found)
    await eventually(
      async () => !(outcome = await cli(['list', '--table', 'in.c-x.t', '--namespace', namespace])).stderr.includes('SAPI_TEMPORAL_NAMESPACE_NOT_FOUND'),
      60_000,
      'the namespace was never served',
    );
    expect(outcome!.code).toBe(1);
    expect(outcome!.stderr).toContain(`register the search attributes: ${registerCommand(namespace)}`);
    expect(outcome!.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
