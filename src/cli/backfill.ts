// `sapi-temporal backfill extract|import`: runs `backfillWorkflow`, an extraction over date windows or imports over a
// list of sources as a sliding window of child runs, and prints every window's outcome.
import { type Command, Option } from 'commander';
import {
  BACKFILL_PRIORITY,
  DEFAULT_BACKFILL_PARALLEL,
  MAX_BACKFILL_PARALLEL,
  type BackfillExtractInput,
  type BackfillImportInput,
  type BackfillInput,
  type BackfillResult,
} from '../contracts/backfill';
import { backfillWindows, windowExtractInput } from '../contracts/backfill-plan';
import { SapiInvalidInputError } from '../errors';
import type { CliContext, Summary } from './context';
import {
  addWorkflowOptions,
  bucketIdArg,
  defaultWorkflowId,
  definedOnly,
  integerParser,
  parseCsvCharacter,
  runOptions,
  tableNameArg,
  workerLocation,
  type WorkflowFlags,
} from './common';
import { checkExtractConfig, extractInput, readJsonFile, type ExtractFlags } from './extract';
import { priorityOf } from './priority';

/** Flags every backfill command takes. */
interface BackfillFlags extends WorkflowFlags {
  parallel?: number;
}

/** `sapi-temporal backfill extract` flags as commander parses them. */
export interface BackfillExtractFlags extends BackfillFlags, Omit<ExtractFlags, 'importState' | 'resetState' | 'load'> {
  from: string;
  to: string;
  window: string;
  advanceState?: boolean;
}

/** `sapi-temporal backfill import` flags as commander parses them. */
interface BackfillImportFlags extends BackfillFlags {
  bucket: string;
  table: string;
  incremental?: boolean;
  delimiter?: string;
  enclosure?: string;
  via?: 'direct' | 'importer';
  gzip?: boolean;
}

/** Refuses an input the workflow would refuse, before anything starts (every problem listed). */
function checked<I extends BackfillInput>(input: I): I {
  const { problems } = backfillWindows(input);
  if (problems.length > 0) throw new SapiInvalidInputError(`invalid backfill: ${problems.join('; ')}`);
  return input;
}

/**
 * The workflow input `backfill extract` describes. The configuration is validated as its first window will run it
 * (with `parameters.config.backfill` set, so `{"attr": "backfill.from"}` resolves).
 */
export function backfillExtractInput(configPath: string, flags: BackfillExtractFlags): BackfillExtractInput {
  const config = readJsonFile(configPath);
  const input = checked<BackfillExtractInput>(
    definedOnly({
      kind: 'extract' as const,
      extract: extractInput(config, { ...flags, load: true }),
      from: flags.from,
      to: flags.to,
      window: flags.window,
      parallel: flags.parallel,
      advanceState: flags.advanceState,
    }),
  );
  const [first] = backfillWindows(input).windows;
  checkExtractConfig(configPath, windowExtractInput(input.extract, first!).config);
  return input;
}

/** The workflow input `backfill import` describes; relative local sources are made absolute against `cwd`. */
export function backfillImportInput(sources: string[], flags: BackfillImportFlags, cwd: string = process.cwd()): BackfillImportInput {
  const csv = definedOnly({ delimiter: flags.delimiter, enclosure: flags.enclosure });
  return checked<BackfillImportInput>(
    definedOnly({
      kind: 'import' as const,
      import: definedOnly({
        connection: flags.connection,
        bucketId: flags.bucket,
        table: flags.table,
        mode: 'load' as const,
        incremental: flags.incremental,
        csv: Object.keys(csv).length > 0 ? csv : undefined,
        via: flags.via,
        gzip: flags.gzip,
        transferTaskQueue: flags.transferTaskQueue,
      }),
      sources: sources.map((source) => workerLocation(source, cwd)),
      parallel: flags.parallel,
    }),
  );
}

/** The summary of a finished backfill: counts, rows, the live state, the windows that did not end done. */
export function summarizeBackfill(result: BackfillResult): Summary {
  const notDone = result.perWindow.filter((w) => w.state !== 'done');
  return {
    title: `backfilled ${result.done} of ${result.windows} windows, ${result.rows} rows${result.cancelled ? ' (cancelled)' : ''}`,
    fields: [
      ['already done', result.alreadyDone > 0 ? `${result.alreadyDone} windows completed before under the same ids: not run again` : undefined],
      [
        'run state',
        result.state
          ? `${result.state.stateKey}: ${result.state.advanced ? `advanced to previousStart ${result.state.previousStart}` : (result.state.reason ?? 'not advanced')}`
          : undefined,
      ],
      ['not done', notDone.length > 0 ? notDone.map((w) => `${w.label} ${w.state}`).join(', ') : undefined],
    ],
  };
}

function addBackfillOptions(command: Command): Command {
  return addWorkflowOptions(
    command.option('--parallel <n>', `windows going at once, 1 to ${MAX_BACKFILL_PARALLEL} (default ${DEFAULT_BACKFILL_PARALLEL})`, integerParser(1)),
    `${BACKFILL_PRIORITY}, behind scheduled (2) and ad-hoc (3) runs; the windows take the backfill's`,
  );
}

/** `sapi-temporal backfill extract <config>` and `sapi-temporal backfill import <sources...>`. */
export function registerBackfillCommand(program: Command, context: CliContext): void {
  const backfill = program
    .command('backfill')
    .description(
      `run an extraction over past date windows, or imports of many files, as child runs (a few at a time, priority ${BACKFILL_PRIORITY} by default so live runs go first); run it again under the same --workflow-id and the windows done are not redone`,
    );

  const extract = addBackfillOptions(
    backfill
      .command('extract')
      .description(
        'extract window by window: each window a child extractWorkflow with the bounds in parameters.config.backfill ({"attr": "backfill.from"} / {"attr": "backfill.to"}); the live run state is never read or written, unless --advance-state',
      )
      .argument('<config>', 'the configuration JSON file; it reads the window as {"attr": "backfill.from"} and {"attr": "backfill.to"}')
      .requiredOption('--from <date>', 'start of the range, inclusive: 2025-01-01 or 2025-01-01T06:00:00Z')
      .requiredOption('--to <date>', 'end of the range, exclusive: 2026-11-01')
      .requiredOption('--window <duration>', 'length of a window, ISO 8601: P7D, P1M, PT6H')
      .option('--advance-state', 'once every window is done, store the run state of --state-key once with previousStart = --to (never moved back)')
      .option('--state-key <key>', 'the live run state of this configuration: only --advance-state writes it')
      .addOption(new Option('--mode <mode>', 'batch: one activity fetches many pages; page: one activity per page').choices(['batch', 'page']))
      .option('--batch-pages <n>', 'pages per activity in batch mode', integerParser(1))
      .option('--bucket <id>', 'target bucket (default in.c-<outputBucket>)', bucketIdArg)
      .option('--incremental', 'load incrementally (required unless the configuration has incrementalOutput: every window loads into the same tables)')
      .option('--keep-staging', 'keep the staged pages and CSVs after each window was loaded'),
  );
  extract.action(async (configPath: string, flags: BackfillExtractFlags) => {
    const input = backfillExtractInput(configPath, flags);
    await context.runTransfer({
      verb: 'backfill',
      workflowType: 'backfillWorkflow',
      workflowId: flags.workflowId ?? defaultWorkflowId('backfill', configPath.replace(/^.*\//, '').replace(/\.json$/i, '')),
      input,
      ...runOptions(context.env, flags),
      priority: priorityOf(flags, BACKFILL_PRIORITY),
      summarize: summarizeBackfill,
    });
  });

  const imports = addBackfillOptions(
    backfill
      .command('import')
      .description('import each source as a child importTableWorkflow, loaded incrementally into one existing table')
      .argument('<sources...>', 'the files (local paths, s3://…, https://…), one child run each, in this order')
      .requiredOption('--bucket <id>', 'bucket id, e.g. in.c-main', bucketIdArg)
      .requiredOption('--table <name>', 'the existing table every source loads into', tableNameArg)
      .option('--incremental', 'append (upsert by primary key); required: without it each source would replace the rows of the others')
      .option('--delimiter <char>', 'CSV delimiter (default ",")', parseCsvCharacter)
      .option('--enclosure <char>', "CSV enclosure (default '\"')", parseCsvCharacter)
      .addOption(new Option('--via <path>', 'direct: upload to file storage; importer: the Importer service').choices(['direct', 'importer']))
      .option('--gzip', 'compress while uploading'),
  );
  imports.action(async (sources: string[], flags: BackfillImportFlags) => {
    const input = backfillImportInput(sources, flags);
    await context.runTransfer({
      verb: 'backfill',
      workflowType: 'backfillWorkflow',
      workflowId: flags.workflowId ?? defaultWorkflowId('backfill', `${flags.bucket}.${flags.table}`),
      input,
      ...runOptions(context.env, flags),
      priority: priorityOf(flags, BACKFILL_PRIORITY),
      summarize: summarizeBackfill,
    });
  });
}
