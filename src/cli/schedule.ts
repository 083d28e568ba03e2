// `sapi-temporal schedule …`: Temporal Schedules that start the plugin's workflows (nightly imports, hourly
// exports, daily extractions), and the verbs to list, trigger, pause, resume and delete them.
import { type Client, ScheduleAlreadyRunning, ScheduleNotFoundError, type Connection, type ScheduleOverlapPolicy, type ScheduleSummary } from '@temporalio/client';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ExtractInput } from '../contracts/extract';
import type { ExportTableInput, ImportTableInput } from '../contracts/transfer';
import { addTemporalOptions, cliSettings, type CliContext, type CliSettings, type TemporalFlags, type WorkflowFlags } from './common';
import { addExportArguments, exportInput, type ExportFlags } from './export';
import { addExtractArguments, extractInput, readExtractConfig, type ExtractFlags } from './extract';
import { addImportArguments, checkImportFlags, importInput, type ImportFlags } from './import';
import { CliError, describeFailure } from './failure';
import { printSummary } from './follow';
import { connectTemporal } from './temporal-link';
import { ErrorCode } from '../contracts/error-codes';
import { runMetadata } from '../contracts/search-attributes';
import type { WorkflowInput, WorkflowName } from '../contracts/workflows';
import { clientOf } from './temporal-link';

/** Overlap policies by their CLI names: what a run does when the previous one is still going. */
export const OVERLAP_POLICIES: Readonly<Record<string, ScheduleOverlapPolicy>> = Object.freeze({
  skip: 'SKIP',
  'buffer-one': 'BUFFER_ONE',
  'buffer-all': 'BUFFER_ALL',
  'cancel-other': 'CANCEL_OTHER',
  'terminate-other': 'TERMINATE_OTHER',
  'allow-all': 'ALLOW_ALL',
});

/** Default overlap policy: a run that would start while the previous one still runs is skipped (no double loads). */
export const DEFAULT_OVERLAP = 'skip';

/** The schedule flags as commander parses them. */
export interface ScheduleFlags {
  cron?: string[];
  every?: string[];
  timezone?: string;
  overlap: string;
  paused?: boolean;
  note?: string;
}

/** What a `schedule <verb>` command asks Temporal for: a schedule that starts `workflowType` with `input`. */
export interface ScheduleRequest<W extends WorkflowName = WorkflowName> {
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

/** The `spec`, `policies` and `state` of a schedule the flags describe. */
export function scheduleShape(flags: ScheduleFlags) {
  return {
    spec: {
      cronExpressions: flags.cron,
      intervals: flags.every?.map((every) => ({ every: intervalMs(every) })),
      timezone: flags.timezone,
    },
    policies: { overlap: OVERLAP_POLICIES[flags.overlap] ?? OVERLAP_POLICIES[DEFAULT_OVERLAP] },
    state: { paused: flags.paused ?? false, note: flags.note },
  };
}

/** Adds the flags of a schedule: when it runs, what overlapping runs do, whether it starts paused. */
function addScheduleOptions(command: Command): Command {
  return addTemporalOptions(command)
    .option('--cron <expr>', 'when to run, as a cron expression in quotes ("0 3 * * *" = 03:00 every day); repeatable', parseCron)
    .option('--every <interval>', 'run at this interval: 30s, 15m, 1h, 1d; repeatable', parseEvery)
    .option('--timezone <tz>', 'time zone of the cron expressions, e.g. Europe/Prague (default UTC)')
    .addOption(new Option('--overlap <policy>', 'when a run is due while the previous one still runs').choices(Object.keys(OVERLAP_POLICIES)).default(DEFAULT_OVERLAP))
    .option('--paused', 'create the schedule paused (start it with `schedule unpause`)')
    .option('--note <text>', 'a note shown with the schedule')
    .option('--connection <name>', 'Storage connection configured on the worker (SAPI_<NAME>_URL/_TOKEN; default: SAPI_URL/SAPI_TOKEN)')
    .option('--transfer-task-queue <queue>', 'run the upload/download on this task queue (a worker on the host that has the local file)')
    .option('--json', 'print one JSON object with the schedule on stdout');
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
      failure = new CliError(ErrorCode.CLI_SCHEDULE_EXISTS, `schedule ${scheduleId} already exists in namespace ${settings.namespace} (delete it first, or pick another id)`);
    } else if (err instanceof ScheduleNotFoundError) {
      failure = new CliError(ErrorCode.CLI_SCHEDULE_NOT_FOUND, `no schedule ${scheduleId} in namespace ${settings.namespace}`);
    }
    throw new Error(describeFailure(failure, what), { cause: err });
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** Creates the schedule and prints it (one JSON object with `--json`). */
export async function createSchedule<W extends WorkflowName>(request: ScheduleRequest<W>): Promise<void> {
  const { scheduleId, workflowType, settings } = request;
  const shape = scheduleShape(request.flags);
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
        ...runMetadata({ workflowType, input: request.input } as Parameters<typeof runMetadata>[0], `schedule ${scheduleId}`),
      },
    });
    return handle.describe();
  });
  const next = description.info.nextActionTimes.map((t) => t.toISOString());
  if (request.json) {
    process.stdout.write(`${JSON.stringify({ scheduleId, workflowType, taskQueue: settings.taskQueue, paused: description.state.paused, nextActionTimes: next })}\n`);
    return;
  }
  printSummary(`created schedule ${scheduleId}: ${workflowType}`, [
    ['when', [...(request.flags.cron ?? []).map((c) => `cron "${c}"`), ...(request.flags.every ?? []).map((e) => `every ${e}`)].join(', ')],
    ['time zone', request.flags.timezone],
    ['overlap', request.flags.overlap],
    ['task queue', settings.taskQueue],
    ['state', description.state.paused ? 'paused' : 'active'],
    ['next runs', next.slice(0, 3).join(', ') || undefined],
  ]);
}

/** One schedule as `schedule list --json` prints it. */
export interface ScheduleListing {
  scheduleId: string;
  workflowType?: string;
  paused: boolean;
  note?: string;
  nextActionTimes: string[];
  recentWorkflowIds: string[];
}

/** A schedule summary as a plain listing. */
export function toListing(summary: ScheduleSummary): ScheduleListing {
  return {
    scheduleId: summary.scheduleId,
    workflowType: summary.action?.workflowType,
    paused: summary.state.paused,
    note: summary.state.note || undefined,
    nextActionTimes: summary.info.nextActionTimes.map((t) => t.toISOString()),
    recentWorkflowIds: summary.info.recentActions.map((a) => a.action.workflow.workflowId),
  };
}

/** `sapi-temporal schedule …` */
export function registerScheduleCommand(program: Command, context: CliContext): void {
  const schedule = program.command('schedule').description('Temporal Schedules that run imports, exports and extractions (create, list, trigger, pause, unpause, delete)');
  const create = <W extends WorkflowName>(verb: string, workflowType: W, scheduleId: string, input: WorkflowInput<W>, flags: ScheduleFlags & WorkflowFlags) =>
    createSchedule({ verb, scheduleId, workflowType, input, flags, settings: cliSettings(context.env, flags), json: flags.json ?? false });

  const importCommand = addScheduleOptions(
    addImportArguments(schedule.command('import').description('schedule importTableWorkflow (a recurring load: needs --mode load)').argument('<scheduleId>', 'id of the schedule')),
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
    addExportArguments(schedule.command('export').description('schedule exportTableWorkflow (each run overwrites the destination)').argument('<scheduleId>', 'id of the schedule')),
  );
  exportCommand.action(async (scheduleId: string, tableId: string, destination: string, flags: ExportFlags & ScheduleFlags & WorkflowFlags) => {
    requireTiming(exportCommand, flags);
    await create('export', 'exportTableWorkflow', scheduleId, exportInput(tableId, destination, flags) satisfies ExportTableInput, flags);
  });

  const extractCommand = addScheduleOptions(
    addExtractArguments(schedule.command('extract').description('schedule extractWorkflow (the configuration is validated now and stored in the schedule)').argument('<scheduleId>', 'id of the schedule')),
  );
  extractCommand.action(async (scheduleId: string, configPath: string, flags: ExtractFlags & ScheduleFlags & WorkflowFlags) => {
    requireTiming(extractCommand, flags);
    await create('extract', 'extractWorkflow', scheduleId, extractInput(readExtractConfig(configPath), flags) satisfies ExtractInput, flags);
  });

  addTemporalOptions(schedule.command('list').description('list the schedules of the namespace'))
    .option('--json', 'print one JSON array on stdout')
    .action(async (flags: TemporalFlags & { json?: boolean }) => {
      const settings = cliSettings(context.env, flags);
      const listings = await withClient('schedule list', settings, undefined, async (client) => {
        const found: ScheduleListing[] = [];
        for await (const summary of client.schedule.list()) found.push(toListing(summary));
        return found.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
      });
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(listings)}\n`);
        return;
      }
      if (listings.length === 0) process.stdout.write(`no schedules in namespace ${settings.namespace}\n`);
      for (const s of listings) {
        const state = s.paused ? 'paused' : `next ${s.nextActionTimes[0] ?? '—'}`;
        process.stdout.write(`${s.scheduleId}  ${s.workflowType ?? '?'}  ${state}${s.recentWorkflowIds.length ? `  last ${s.recentWorkflowIds.at(-1)}` : ''}\n`);
      }
    });

  const verbs: Array<[name: string, description: string, act: (id: string, client: Client, note?: string) => Promise<void>, done: string]> = [
    ['trigger', 'start a run now (whatever the overlap policy says)', (id, client) => client.schedule.getHandle(id).trigger('ALLOW_ALL'), 'triggered'],
    ['pause', 'stop starting runs until unpaused', (id, client, note) => client.schedule.getHandle(id).pause(note), 'paused'],
    ['unpause', 'start runs again', (id, client, note) => client.schedule.getHandle(id).unpause(note), 'unpaused'],
    ['delete', 'delete the schedule (runs already started go on)', (id, client) => client.schedule.getHandle(id).delete(), 'deleted'],
  ];
  for (const [name, description, act, done] of verbs) {
    const command = addTemporalOptions(schedule.command(name).description(description).argument('<scheduleId>', 'id of the schedule'));
    if (name === 'pause' || name === 'unpause') command.option('--note <text>', 'why (shown with the schedule)');
    command.action(async (scheduleId: string, flags: TemporalFlags & { note?: string }) => {
      await withClient(`schedule ${name}`, cliSettings(context.env, flags), scheduleId, (client) => act(scheduleId, client, flags.note));
      process.stdout.write(`${done} schedule ${scheduleId}\n`);
    });
  }
}
