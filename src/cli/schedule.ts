// `sapi-temporal schedule …`: Temporal Schedules that start the plugin's workflows (nightly imports, hourly
// exports, daily extractions), and the verbs to list, trigger, pause, resume and delete them.
import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type Connection,
  type ScheduleDescription,
  type ScheduleOverlapPolicy,
} from '@temporalio/client';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ExtractInput } from '../contracts/extract';
import type { ExportTableInput, ImportTableInput } from '../contracts/transfer';
import type { CliContext, CliSettings, TemporalFlags } from './context';
import { addOutputOptions, addTemporalOptions, cliSettings, parseDuration, type WorkflowFlags } from './common';
import { addExportArguments, exportInput, type ExportFlags } from './export';
import { addExtractArguments, extractInput, readExtractConfig, type ExtractFlags } from './extract';
import { addImportArguments, checkImportFlags, importInput, type ImportFlags } from './import';
import { CliError, CommandFailedError, describeFailure, failureCode, rootFailure, type RootFailure } from './failure';
import { printSummary } from './follow';
import { formatDuration } from './progress';
import { connectTemporal } from './temporal-link';
import { SapiErrorCode } from '../errors';
import { runMetadata } from '../contracts/search-attributes';
import type { WorkflowInput, WorkflowName } from '../contracts/workflows';
import { clientOf } from './temporal-link';
import { SCHEDULED_PRIORITY } from '../contracts/priority';
import { addPriorityOptions, priorityOf, type PriorityFlags } from './priority';

/** Overlap policies by their CLI names: what a run does when the previous one is still going. */
const OVERLAP_POLICIES: Readonly<Record<string, ScheduleOverlapPolicy>> = Object.freeze({
  skip: 'SKIP',
  'buffer-one': 'BUFFER_ONE',
  'buffer-all': 'BUFFER_ALL',
  'cancel-other': 'CANCEL_OTHER',
  'terminate-other': 'TERMINATE_OTHER',
  'allow-all': 'ALLOW_ALL',
});

/** Default overlap policy of exports and extractions: a run due while the previous one still runs is skipped. */
const DEFAULT_OVERLAP = 'skip';

/**
 * Default overlap policy of imports: a run due while the previous one still runs waits for it (one buffered), so a
 * slow load delays the next instead of dropping it (a skipped incremental import is data that arrives a whole period
 * late); never two loads into one table at once.
 */
const DEFAULT_IMPORT_OVERLAP = 'buffer-one';

/** The overlap policy a schedule of `workflowType` gets unless `--overlap` says otherwise. */
function defaultOverlap(workflowType: string): string {
  return workflowType === 'importTableWorkflow' ? DEFAULT_IMPORT_OVERLAP : DEFAULT_OVERLAP;
}

/** The schedule flags as commander parses them. */
interface ScheduleFlags extends PriorityFlags {
  cron?: string[];
  every?: string[];
  timezone?: string;
  /** Default: {@link defaultOverlap} of the workflow type. */
  overlap?: string;
  paused?: boolean;
  note?: string;
  /** ms, from `--catchup-window`. Default {@link DEFAULT_CATCHUP_WINDOW_MS}. */
  catchupWindow?: number;
  /** ms, from `--jitter`. Default {@link defaultJitterMs}. */
  jitter?: number;
}

/**
 * Default catch-up window: runs missed while Temporal was down are still taken when it comes back within an hour;
 * older ones are dropped (and counted as missed), so an outage of a day does not start a day of runs at once.
 */
const DEFAULT_CATCHUP_WINDOW_MS = 60 * 60 * 1000;

/** Longest default jitter: schedules due at the same minute start spread over up to 30 s, not in one burst. */
const DEFAULT_JITTER_MS = 30_000;

/** Default jitter: {@link DEFAULT_JITTER_MS}, but at most a tenth of the shortest `--every` interval. */
function defaultJitterMs(flags: Pick<ScheduleFlags, 'every'>): number {
  const shortest = Math.min(...(flags.every ?? []).map(intervalMs));
  return Math.min(DEFAULT_JITTER_MS, Number.isFinite(shortest) ? Math.floor(shortest / 10) : DEFAULT_JITTER_MS);
}

/** What a `schedule <verb>` command asks Temporal for: a schedule that starts `workflowType` with `input`. */
interface ScheduleRequest<W extends WorkflowName = WorkflowName> {
  /** `import`, `export` or `extract`: names the command in messages. */
  verb: string;
  scheduleId: string;
  workflowType: W;
  input: WorkflowInput<W>;
  flags: ScheduleFlags;
  settings: CliSettings;
  json: boolean;
}

/** Parses an interval such as `30s`, `15m`, `1h`, `1d` (repeatable: appends to earlier values). */
export function parseEvery(value: string, previous: string[] = []): string[] {
  const match = /^\s*(\d+)\s*(s|m|h|d)\s*$/.exec(value);
  if (!match || Number(match[1]) === 0) throw new InvalidArgumentError(`expected a positive interval like 30s, 15m, 1h or 1d, got ${JSON.stringify(value)}`);
  return [...previous, `${match[1]}${match[2]}`];
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of an interval {@link parseEvery} accepted. */
export function intervalMs(every: string): number {
  return Number.parseInt(every, 10) * (UNIT_MS[every.slice(-1)] ?? Number.NaN);
}

/** Collects a repeatable cron expression (5 fields, or Temporal's `@daily`-style names). */
export function parseCron(value: string, previous: string[] = []): string[] {
  const expr = value.trim();
  if (!/^@\w+$/.test(expr) && expr.split(/\s+/).length < 5) {
    throw new InvalidArgumentError(`expected a cron expression like "0 3 * * *" (minute hour day month weekday), got ${JSON.stringify(value)}`);
  }
  return [...previous, expr];
}

/** The `spec`, `policies` and `state` of a schedule the flags describe (`flags.overlap` set, or the default of the workflow type). */
export function scheduleShape(flags: ScheduleFlags, workflowType = '') {
  return {
    spec: {
      cronExpressions: flags.cron,
      intervals: flags.every?.map((every) => ({ every: intervalMs(every) })),
      timezone: flags.timezone,
      jitter: flags.jitter ?? defaultJitterMs(flags),
    },
    policies: {
      overlap: OVERLAP_POLICIES[flags.overlap ?? defaultOverlap(workflowType)] ?? OVERLAP_POLICIES[DEFAULT_OVERLAP],
      catchupWindow: flags.catchupWindow ?? DEFAULT_CATCHUP_WINDOW_MS,
    },
    state: { paused: flags.paused ?? false, note: flags.note },
  };
}

/** Adds the flags of a schedule: when it runs, what overlapping runs do, whether it starts paused. */
function addScheduleOptions(command: Command): Command {
  addOutputOptions(addTemporalOptions(command), 'one object with the schedule on stdout')
    .option('--cron <expr>', 'when to run, as a cron expression in quotes ("0 3 * * *" = 03:00 every day); repeatable', parseCron)
    .option('--every <interval>', 'run at this interval: 30s, 15m, 1h, 1d; repeatable', parseEvery)
    .option('--timezone <tz>', 'time zone of the cron expressions, e.g. Europe/Prague (default UTC)')
    .addOption(
      new Option(
        '--overlap <policy>',
        `when a run is due while the previous one still runs (default: ${DEFAULT_IMPORT_OVERLAP} for imports, ${DEFAULT_OVERLAP} otherwise)`,
      ).choices(Object.keys(OVERLAP_POLICIES)),
    )
    .option(
      '--catchup-window <duration>',
      'runs missed while Temporal was down are still started when it is back within this long; older ones are dropped (default 1h)',
      parseDuration,
    )
    .option(
      '--jitter <duration>',
      'start each run up to this long after its time, at random, so schedules due together spread out (default 30s, at most a tenth of the shortest --every)',
      parseDuration,
    )
    .option('--paused', 'create the schedule paused (start it with `schedule unpause`)')
    .option('--note <text>', 'a note shown with the schedule')
    .option('--connection <name>', 'Storage connection configured on the worker (SAPI_<NAME>_URL/_TOKEN; default: SAPI_URL/SAPI_TOKEN)')
    .option('--transfer-task-queue <queue>', 'run the upload/download on this task queue (a worker on the host that has the local file)');
  return addPriorityOptions(command, `${SCHEDULED_PRIORITY}, ahead of ad-hoc runs (3)`);
}

/** Usage error unless the flags say when to run. */
function requireTiming(command: Command, flags: ScheduleFlags): void {
  if (!flags.cron?.length && !flags.every?.length) {
    command.error('error: say when the schedule runs: --cron "<expr>" or --every <interval> (or both)', { exitCode: 2, code: 'sapi.usage' });
  }
}

/**
 * Connects, runs `body` with a client, closes the connection. Failures become one line naming the command, the
 * failure type and the schedule: `schedule trigger failed [SAPI_CLI_SCHEDULE_NOT_FOUND] no schedule nightly in …`.
 */
async function withClient<T>(what: string, settings: CliSettings, scheduleId: string | undefined, body: (client: Client) => Promise<T>): Promise<T> {
  let connection: Connection | undefined;
  try {
    connection = await connectTemporal(settings);
    return await body(clientOf(settings, connection));
  } catch (err) {
    let failure = err;
    if (err instanceof ScheduleAlreadyRunning) {
      failure = new CliError(
        SapiErrorCode.CLI_SCHEDULE_EXISTS,
        `schedule ${scheduleId} already exists in namespace ${settings.namespace} (delete it first, or pick another id)`,
      );
    } else if (err instanceof ScheduleNotFoundError) {
      failure = new CliError(SapiErrorCode.CLI_SCHEDULE_NOT_FOUND, `no schedule ${scheduleId} in namespace ${settings.namespace}`);
    }
    // the code of the failure as the command names it (`-o json` prints it): SAPI_CLI_SCHEDULE_NOT_FOUND, not `Error`
    throw new CommandFailedError(describeFailure(failure, what), failureCode(failure), undefined, { cause: failure });
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** Creates the schedule and prints it (one JSON object with `--json`). */
async function createSchedule<W extends WorkflowName>(request: ScheduleRequest<W>): Promise<void> {
  const { scheduleId, workflowType, settings } = request;
  const shape = scheduleShape(request.flags, workflowType);
  const description = await withClient(`schedule ${request.verb}`, settings, scheduleId, async (client) => {
    const handle = await client.schedule.create({
      scheduleId,
      ...shape,
      // each run's workflow id is this id plus the time it was scheduled for (Temporal appends it)
      action: {
        type: 'startWorkflow',
        workflowType,
        taskQueue: settings.taskQueue,
        workflowId: scheduleId,
        args: [request.input],
        // scheduled runs go ahead of ad-hoc runs and backfills (3 and lower) unless the flags say otherwise (the
        // SDK 1.24 create type omits `priority`, which it compiles and sends: schedule-helpers' encodeScheduleAction)
        ...({ priority: priorityOf(request.flags, SCHEDULED_PRIORITY) } as object),
        ...runMetadata({ workflowType, input: request.input } as Parameters<typeof runMetadata>[0], `schedule ${scheduleId}`),
      },
    });
    return handle.describe();
  });
  const next = description.info.nextActionTimes.map((t) => t.toISOString());
  if (request.json) {
    process.stdout.write(
      `${JSON.stringify({ scheduleId, workflowType, taskQueue: settings.taskQueue, paused: description.state.paused, nextActionTimes: next })}\n`,
    );
    return;
  }
  printSummary(`created schedule ${scheduleId}: ${workflowType}`, [
    ['when', [...(request.flags.cron ?? []).map((c) => `cron "${c}"`), ...(request.flags.every ?? []).map((e) => `every ${e}`)].join(', ')],
    ['time zone', request.flags.timezone],
    ['overlap', request.flags.overlap ?? defaultOverlap(workflowType)],
    ['catch-up window', formatDuration(shape.policies.catchupWindow)],
    ['jitter', formatDuration(shape.spec.jitter)],
    ['task queue', settings.taskQueue],
    ['state', description.state.paused ? 'paused' : 'active'],
    ['next runs', next.slice(0, 3).join(', ') || undefined],
  ]);
}

/** One schedule as `schedule list --json` and `schedule describe --json` print it. */
interface ScheduleListing {
  scheduleId: string;
  workflowType?: string;
  paused: boolean;
  note?: string;
  /** The overlap policy (`skip`, `buffer-one`, …). */
  overlap?: string;
  /** Runs missed while Temporal was down are taken when it is back within this long (ms). */
  catchupWindowMs?: number;
  /** Each run starts up to this long after its time (ms). */
  jitterMs?: number;
  nextActionTimes: string[];
  recentWorkflowIds: string[];
  /**
   * The last run started: its workflow id, when, and (when Temporal still has it) its status (`running`,
   * `completed`, `failed`, `cancelled`, `terminated`, `timed out`), when it closed and, unless it completed, why.
   */
  lastRun?: LastRun;
  /** Runs started so far. */
  taken: number;
  /** Runs not started because the previous one still ran (overlap `skip`, or a full buffer). */
  skipped: number;
  /** Runs waiting for the running one to end (overlap `buffer-one` / `buffer-all`). */
  buffered: number;
  /** Runs not started because they were due while the schedule could not act (catch-up window missed). */
  missed: number;
  /** Workflow ids of the runs going now. */
  running: string[];
}

/** The last run of a schedule, as {@link ScheduleListing} shows it. */
interface LastRun {
  workflowId: string;
  /** The run id the schedule started (the chain's first). */
  runId?: string;
  startedAt: string;
  status?: string;
  closedAt?: string;
  /** The root failure of a run that did not complete: its code, message and activity. */
  failure?: RootFailure;
}

const num = (value: unknown) => (value === null || value === undefined ? 0 : Number(value));

/** A schedule's description as a listing: counts of taken, skipped, buffered and missed runs, last and next runs. */
export function toListing(description: ScheduleDescription): ScheduleListing {
  const info = description.raw.info;
  const recent = description.info.recentActions;
  const last = recent.at(-1);
  const overlap = Object.entries(OVERLAP_POLICIES).find(([, policy]) => policy === description.policies.overlap)?.[0];
  return {
    scheduleId: description.scheduleId,
    workflowType: description.action?.type === 'startWorkflow' ? description.action.workflowType : undefined,
    paused: description.state.paused,
    note: description.state.note || undefined,
    overlap,
    catchupWindowMs: description.policies.catchupWindow,
    jitterMs: description.spec?.jitter,
    nextActionTimes: description.info.nextActionTimes.map((t) => t.toISOString()),
    recentWorkflowIds: recent.map((a) => a.action.workflow.workflowId),
    ...(last
      ? {
          lastRun: {
            workflowId: last.action.workflow.workflowId,
            runId: last.action.workflow.firstExecutionRunId || undefined,
            startedAt: last.takenAt.toISOString(),
          },
        }
      : {}),
    taken: description.info.numActionsTaken,
    skipped: description.info.numActionsSkippedOverlap + num(info?.bufferDropped),
    buffered: num(info?.bufferSize),
    missed: description.info.numActionsMissedCatchupWindow,
    running: description.info.runningActions.map((a) => a.workflow.workflowId),
  };
}

/** A workflow execution status as the CLI prints it: `RUNNING` → `running`, `TIMED_OUT` → `timed out`. */
function statusName(status: string): string {
  return status.toLowerCase().replace(/_/g, ' ');
}

/**
 * The listing with its last run's status and, when the run did not complete, its root failure: what Temporal says of
 * the workflow the schedule started last. A run Temporal no longer has (retention) keeps only its id and start.
 */
async function withLastRunStatus(client: Client, listing: ScheduleListing): Promise<ScheduleListing> {
  const last = listing.lastRun;
  if (!last) return listing;
  // the chain's latest run (an extraction may continue as new), its result followed from the run the schedule started
  const handle = client.workflow.getHandle(last.workflowId, undefined, last.runId ? { firstExecutionRunId: last.runId } : undefined);
  let described;
  try {
    described = await handle.describe();
  } catch {
    return listing;
  }
  const status = described.status.name;
  const lastRun: LastRun = { ...last, status: statusName(status), ...(described.closeTime ? { closedAt: described.closeTime.toISOString() } : {}) };
  if (status !== 'RUNNING' && status !== 'COMPLETED') {
    // the failure as `status <id>` shows it: the root cause (code, message, activity), not Temporal's wrappers
    lastRun.failure = await handle.result().then(
      () => undefined,
      (err: unknown) => rootFailure(err),
    );
  }
  return { ...listing, lastRun };
}

/** `last run` of `schedule describe`: the id, when, its status and why it failed. */
export function lastRunLine(run: LastRun): string {
  const failure = run.failure ? `: [${run.failure.type}] ${run.failure.message}${run.failure.activity ? ` (activity ${run.failure.activity})` : ''}` : '';
  return `${run.workflowId} at ${run.startedAt}${run.status ? `, ${run.status}` : ''}${failure}`;
}

/**
 * The warning a listing deserves: runs skipped or missed are runs that never happened, and a last run that failed
 * (a target that does not exist fails every run; the schedule goes on starting them).
 */
export function scheduleWarning(s: ScheduleListing): string | undefined {
  const failed = s.lastRun?.status && s.lastRun.status !== 'running' && s.lastRun.status !== 'completed';
  const lost = [
    s.skipped ? `${s.skipped} run(s) skipped because the previous one was still running (overlap ${s.overlap ?? '?'})` : '',
    s.missed ? `${s.missed} run(s) missed (catch-up window)` : '',
    failed ? `the last run ${lastRunLine(s.lastRun!)} (see \`sapi-temporal status ${s.lastRun!.workflowId}\`)` : '',
  ]
    .filter(Boolean)
    .join('; ');
  return lost ? `warning: schedule ${s.scheduleId}: ${lost}` : undefined;
}

/** `schedule list`'s line of one schedule: id, type, state, counts, last and next run. */
export function listingLine(s: ScheduleListing): string {
  const state = s.paused ? 'paused' : `next ${s.nextActionTimes[0] ?? '—'}`;
  const counts = `taken ${s.taken}, running ${s.running.length}, buffered ${s.buffered}, skipped ${s.skipped}, missed ${s.missed}`;
  return `${s.scheduleId}  ${s.workflowType ?? '?'}  ${state}  overlap ${s.overlap ?? '?'}  ${counts}${s.lastRun ? `  last ${s.lastRun.workflowId} at ${s.lastRun.startedAt}${s.lastRun.status ? ` ${s.lastRun.status}` : ''}` : ''}`;
}

/**
 * Starts a run of the schedule now, under the schedule's own overlap policy (the SDK's `trigger()` without a policy
 * means ALLOW_ALL: a manual run beside a scheduled one, into the same table), or `ALLOW_ALL` with `allowOverlap`.
 */
async function triggerSchedule(client: Client, scheduleId: string, allowOverlap = false): Promise<void> {
  const handle = client.schedule.getHandle(scheduleId);
  const description = await handle.describe();
  const wait = waitBeforeTrigger(
    description.info.recentActions.map((a) => Math.max(a.scheduledAt.getTime(), a.takenAt.getTime())),
    Date.now(),
  );
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  await handle.trigger(allowOverlap ? 'ALLOW_ALL' : description.policies.overlap);
}

/**
 * How long a trigger waits so that its run gets an id of its own: Temporal names a triggered run
 * `<schedule id>-<time to the second>`, so a trigger in the same second as the schedule's last action would get that
 * action's id (refused while it runs; "already done" once it completed). Waits until that second has passed (on
 * this machine's clock; at most 1.1 s), 0 when it has. `actionTimesMs`: the recent actions' scheduled/taken times.
 */
export function waitBeforeTrigger(actionTimesMs: readonly number[], nowMs: number): number {
  if (actionTimesMs.length === 0) return 0;
  const nextSecond = (Math.floor(Math.max(...actionTimesMs) / 1000) + 1) * 1000;
  // at most a little over a second: a server clock far ahead of this one is not waited out
  return nowMs < nextSecond ? Math.min(nextSecond - nowMs + 50, 1_100) : 0;
}

/** `sapi-temporal schedule …` */
export function registerScheduleCommand(program: Command, context: CliContext): void {
  const schedule = program
    .command('schedule')
    .description('Temporal Schedules that run imports, exports and extractions (create, list, trigger, pause, unpause, delete)');
  const create = <W extends WorkflowName>(verb: string, workflowType: W, scheduleId: string, input: WorkflowInput<W>, flags: ScheduleFlags & WorkflowFlags) =>
    createSchedule({ verb, scheduleId, workflowType, input, flags, settings: cliSettings(context.env, flags), json: flags.json ?? false });

  const importCommand = addScheduleOptions(
    addImportArguments(
      schedule
        .command('import')
        .description('schedule importTableWorkflow (a recurring load: needs --mode load)')
        .argument('<scheduleId>', 'id of the schedule'),
    ),
  );
  importCommand.action(async (scheduleId: string, source: string, flags: ImportFlags & ScheduleFlags & WorkflowFlags) => {
    requireTiming(importCommand, flags);
    checkImportFlags(importCommand, flags);
    if (flags.mode !== 'load') {
      importCommand.error('error: a scheduled import runs again and again, so it needs --mode load (create the table once with `sapi-temporal import`)', {
        exitCode: 2,
        code: 'sapi.usage',
      });
    }
    await create('import', 'importTableWorkflow', scheduleId, importInput(source, flags) satisfies ImportTableInput, flags);
  });

  const exportCommand = addScheduleOptions(
    addExportArguments(
      schedule
        .command('export')
        .description('schedule exportTableWorkflow (each run overwrites the destination)')
        .argument('<scheduleId>', 'id of the schedule'),
    ),
  );
  exportCommand.action(async (scheduleId: string, tableId: string, destination: string, flags: ExportFlags & ScheduleFlags & WorkflowFlags) => {
    requireTiming(exportCommand, flags);
    await create('export', 'exportTableWorkflow', scheduleId, exportInput(tableId, destination, flags) satisfies ExportTableInput, flags);
  });

  const extractCommand = addScheduleOptions(
    addExtractArguments(
      schedule
        .command('extract')
        .description('schedule extractWorkflow (the configuration is validated now and stored in the schedule)')
        .argument('<scheduleId>', 'id of the schedule'),
    ),
  );
  extractCommand.action(async (scheduleId: string, configPath: string, flags: ExtractFlags & ScheduleFlags & WorkflowFlags) => {
    requireTiming(extractCommand, flags);
    await create('extract', 'extractWorkflow', scheduleId, extractInput(readExtractConfig(configPath), flags) satisfies ExtractInput, flags);
  });

  addOutputOptions(addTemporalOptions(schedule.command('list').description('list the schedules of the namespace')), 'an array of schedules on stdout').action(
    async (flags: TemporalFlags & { json?: boolean }) => {
      const settings = cliSettings(context.env, flags);
      const listings = await withClient('schedule list', settings, undefined, async (client) => {
        const ids: string[] = [];
        for await (const summary of client.schedule.list()) ids.push(summary.scheduleId);
        // the counts (skipped, buffered, missed) are in each schedule's description only
        const found = await Promise.all(ids.map(async (id) => withLastRunStatus(client, toListing(await client.schedule.getHandle(id).describe()))));
        return found.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
      });
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(listings)}\n`);
      } else {
        if (listings.length === 0) process.stdout.write(`no schedules in namespace ${settings.namespace}\n`);
        for (const s of listings) process.stdout.write(`${listingLine(s)}\n`);
      }
      for (const s of listings) {
        const warning = scheduleWarning(s);
        if (warning) process.stderr.write(`${warning}\n`);
      }
    },
  );

  addOutputOptions(
    addTemporalOptions(
      schedule
        .command('describe')
        .description('show a schedule: overlap policy, runs taken, running, buffered, skipped and missed, the last and next runs')
        .argument('<scheduleId>', 'id of the schedule'),
    ),
    'one object on stdout',
  ).action(async (scheduleId: string, flags: TemporalFlags & { json?: boolean }) => {
    const s = await withClient('schedule describe', cliSettings(context.env, flags), scheduleId, async (client) =>
      withLastRunStatus(client, toListing(await client.schedule.getHandle(scheduleId).describe())),
    );
    if (flags.json) process.stdout.write(`${JSON.stringify(s)}\n`);
    else {
      printSummary(`schedule ${s.scheduleId}: ${s.workflowType ?? '?'}${s.paused ? ' (paused)' : ''}`, [
        ['overlap', s.overlap],
        ['catch-up window', s.catchupWindowMs === undefined ? undefined : formatDuration(s.catchupWindowMs)],
        ['jitter', s.jitterMs === undefined ? undefined : formatDuration(s.jitterMs)],
        ['runs taken', s.taken],
        ['running', s.running.join(', ') || 'none'],
        ['buffered', s.buffered],
        ['skipped', s.skipped],
        ['missed', s.missed],
        ['last run', s.lastRun ? lastRunLine(s.lastRun) : 'none'],
        ['next runs', s.nextActionTimes.slice(0, 3).join(', ') || undefined],
        ['note', s.note],
      ]);
    }
    const warning = scheduleWarning(s);
    if (warning) process.stderr.write(`${warning}\n`);
  });

  const verbs: Array<
    [name: string, description: string, act: (id: string, client: Client, note?: string, allowOverlap?: boolean) => Promise<void>, done: string]
  > = [
    [
      'trigger',
      'start a run now, as the overlap policy says (buffered or skipped while a run is going; --allow-overlap: now regardless)',
      (id, client, _note, allowOverlap) => triggerSchedule(client, id, allowOverlap),
      'triggered',
    ],
    ['pause', 'stop starting runs until unpaused', (id, client, note) => client.schedule.getHandle(id).pause(note), 'paused'],
    ['unpause', 'start runs again', (id, client, note) => client.schedule.getHandle(id).unpause(note), 'unpaused'],
    ['delete', 'delete the schedule (runs already started go on)', (id, client) => client.schedule.getHandle(id).delete(), 'deleted'],
  ];
  for (const [name, description, act, done] of verbs) {
    const command = addOutputOptions(
      addTemporalOptions(schedule.command(name).description(description).argument('<scheduleId>', 'id of the schedule')),
      `one object {scheduleId, action: "${done}"} on stdout`,
    );
    if (name === 'pause' || name === 'unpause') command.option('--note <text>', 'why (shown with the schedule)');
    if (name === 'trigger') command.option('--allow-overlap', 'start the run now even while another runs (two loads into one table at once)');
    command.action(async (scheduleId: string, flags: TemporalFlags & { note?: string; allowOverlap?: boolean; json?: boolean }) => {
      await withClient(`schedule ${name}`, cliSettings(context.env, flags), scheduleId, (client) => act(scheduleId, client, flags.note, flags.allowOverlap));
      process.stdout.write(flags.json ? `${JSON.stringify({ scheduleId, action: done })}\n` : `${done} schedule ${scheduleId}\n`);
    });
  }
}
