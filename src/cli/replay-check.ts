import type { HistoryAndWorkflowId } from '@temporalio/client';
import type * as TemporalWorker from '@temporalio/worker';
import type { Command } from 'commander';
import { SapiErrorCode, SapiInvalidInputError } from '../errors';
import type { NamedHistory } from '../replay-check';
import type { CliContext, TemporalFlags } from './context';
import { addOutputOptions, addTemporalOptions, cliSettings, integerParser } from './common';
import { CliError } from './failure';

/** The plugin's workflow types: what the default query selects. */
const PLUGIN_WORKFLOW_TYPES = ['importTableWorkflow', 'exportTableWorkflow', 'extractWorkflow', 'backfillWorkflow'] as const;

/** Most histories downloaded by default: a check before a deploy, not an archive scan. */
const DEFAULT_REPLAY_LIMIT = 200;

interface ReplayCheckFlags extends TemporalFlags {
  query?: string;
  histories?: string;
  workflows?: string;
  limit: number;
  json?: boolean;
  tracing?: 'on' | 'off';
}

/** The visibility query of the runs a deploy would take over: the plugin's workflows still running on the task queue. */
function defaultReplayQuery(taskQueue: string): string {
  return `TaskQueue="${taskQueue}" AND ExecutionStatus="Running" AND WorkflowType IN (${PLUGIN_WORKFLOW_TYPES.map((t) => `"${t}"`).join(', ')})`;
}

/**
 * `sapi-temporal replay-check`: replays the histories of runs in flight (or saved ones) against this installation's
 * workflow code and says which would fail on it and why; exit 1 when any would. Run it with the version about to be
 * deployed, before the workers are replaced.
 */
export function registerReplayCheckCommand(program: Command, context: CliContext): void {
  const command = addTemporalOptions(
    program
      .command('replay-check')
      .description(
        "replay the histories of running workflows (or saved ones) against this version's workflow code before deploying it: one line per history, exit 1 when any would fail on it (non-determinism: the first diverging command)",
      ),
  )
    .option('--query <visibility query>', "which runs to check (default: the plugin's workflows running on the task queue)")
    .option('--histories <path>', 'replay saved histories instead: a JSON file or a folder of them (`temporal workflow show --output json`)')
    .option('--workflows <module>', "the worker's workflow module, when it is your own module that re-exports the plugin's (default: the plugin's)")
    .option('--limit <n>', 'most histories downloaded', integerParser(1), DEFAULT_REPLAY_LIMIT)
    .option(
      '--tracing <on|off>',
      "replay as a worker with tracing on or off runs (its bundle differs); default: as this environment's worker would (on when SAPI_OTEL_ENDPOINT or OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set)",
      (value: string) => {
        if (value !== 'on' && value !== 'off') throw new SapiInvalidInputError(`--tracing takes on or off, got ${JSON.stringify(value)}`);
        return value;
      },
    );
  addOutputOptions(
    command,
    'an array of {workflowId, runId, workflowType, events, problem?} on stdout; when any fails, the error object with it as `verdicts`',
  ).action(async (flags: ReplayCheckFlags) => runReplayCheck(context, flags));
}

async function runReplayCheck(context: CliContext, flags: ReplayCheckFlags): Promise<void> {
  const { replayCheck, readHistoryFiles } = await import('../replay-check');
  const { codecDataConverter } = await import('../codec');
  quietRuntime(await import('@temporalio/worker'));
  const settings = cliSettings(context.env, flags);
  const { tracingFromEnv } = await import('../observability/tracing');
  const tracing = flags.tracing !== undefined ? flags.tracing === 'on' : tracingFromEnv(context.env) !== undefined;
  const options = { workflowsPath: flags.workflows, dataConverter: codecDataConverter(settings.codecKeys), tracing };
  let source: string;
  let verdicts;
  if (flags.histories !== undefined) {
    source = flags.histories;
    verdicts = await replayCheck(readHistoryFiles(flags.histories), options);
  } else {
    const query = flags.query ?? defaultReplayQuery(settings.taskQueue);
    source = `namespace ${settings.namespace}, query ${query}`;
    const { connectTemporal, clientOf } = await import('./temporal-link');
    const connection = await connectTemporal(settings);
    try {
      const client = clientOf(settings, connection);
      verdicts = await replayCheck(
        firstOf(client.workflow.list({ query, pageSize: Math.min(flags.limit, 100) }).intoHistories({ concurrency: 4, bufferLimit: 8 }), flags.limit),
        options,
      );
    } finally {
      await connection.close().catch(() => undefined);
    }
  }
  const failed = verdicts.filter((v) => v.problem !== undefined);
  if (flags.json) {
    // a failure's one JSON object carries the verdicts (below)
    if (failed.length === 0) process.stdout.write(`${JSON.stringify(verdicts)}\n`);
  } else {
    for (const v of verdicts)
      process.stdout.write(
        `${v.problem ? 'FAIL' : 'ok  '}  ${v.workflowId}  ${v.workflowType}  ${v.events} events${v.problem ? `\n      ${v.problem}` : ''}\n`,
      );
    process.stdout.write(`${verdicts.length - failed.length} of ${verdicts.length} replayed (${source}; tracing ${tracing ? 'on' : 'off'})\n`);
  }
  if (failed.length > 0) {
    const message = `${failed.length} of ${verdicts.length} histories do not replay on this version: ${failed.map((v) => v.workflowId).join(', ')}`;
    throw new CliError(SapiErrorCode.CLI_REPLAY_FAILED, message, undefined, { details: { verdicts } });
  }
}

/** The first `limit` histories the client downloads. */
async function* firstOf(items: AsyncIterable<HistoryAndWorkflowId>, limit: number): AsyncIterable<NamedHistory> {
  let count = 0;
  for await (const { workflowId, history } of items) {
    if (count++ >= limit) return;
    yield { workflowId, history: history as NamedHistory['history'] };
  }
}

/** The replay worker and core log each failed activation (at ERROR and WARN): the verdict lines say it once. */
function quietRuntime(worker: typeof TemporalWorker): void {
  try {
    worker.Runtime.install({
      logger: new worker.DefaultLogger('ERROR', () => undefined),
      telemetryOptions: { logging: { filter: worker.makeTelemetryFilterString({ core: 'ERROR' }) } },
    });
  } catch {
    /* already installed (the CLI's tests run commands in one process) */
  }
}
