import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { parseExtractorConfig } from '../extractor/config-schema';
import { ExtractorConfigError } from '../extractor/errors';
import { clearSecretsError, findClearSecrets } from '../extractor/secrets';
import type { ExtractInput, ExtractResult } from '../contracts/extract';
import type { CliContext, Summary } from './context';
import { addWorkflowOptions, bucketIdArg, defaultWorkflowId, definedOnly, integerParser, runOptions, type WorkflowFlags } from './common';
import { formatBytes } from './progress';
import { inContext, SapiInvalidInputError } from '../errors';
import { addReceiptsOptions, receiptsOf } from './import';

/** `sapi-temporal extract` flags as commander parses them. */
export interface ExtractFlags extends WorkflowFlags {
  mode?: 'page' | 'batch';
  batchPages?: number;
  /** False with `--no-load`. */
  load: boolean;
  bucket?: string;
  incremental?: boolean;
  keepStaging?: boolean;
  stateKey?: string;
  /** A reference `state.json` to start from. */
  importState?: string;
  resetState?: boolean;
  receiptsTable?: string;
  /** False with `--no-receipts`. */
  receipts?: boolean;
}

/**
 * Reads and validates a Generic-Extractor configuration file. A configuration error fails here, before any
 * workflow starts or any request is sent, with every issue and its path. So does a secret given in clear (a `#` key,
 * a credential header or param without a `${env:SAPI_SECRET_…}` reference): it would be stored in the history.
 */
export function readExtractConfig(path: string): unknown {
  const json = readJsonFile(path);
  checkExtractConfig(path, json);
  return json;
}

/** The JSON of file `path` (`SAPI_INVALID_INPUT` naming the file when it cannot be read or is not JSON). */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (err) {
    throw new SapiInvalidInputError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SapiInvalidInputError(`${path} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return json;
}

/** Validates a configuration read from `path` as `readExtractConfig` does (every issue with its path; no secret in clear). */
export function checkExtractConfig(path: string, json: unknown): void {
  try {
    parseExtractorConfig(json);
    const clear = findClearSecrets(json);
    if (clear.length > 0) throw clearSecretsError(clear);
  } catch (err) {
    if (err instanceof ExtractorConfigError) throw inContext(err, `${path}: ${err.message}`);
    throw new ExtractorConfigError([{ path: '', message: `${path}: ${err instanceof Error ? err.message : String(err)}` }]);
  }
}

/** The state to start from: `--reset-state` (`{}`), or the JSON file of `--import-state` (a reference `state.json`). */
export function importStateOf(flags: Pick<ExtractFlags, 'importState' | 'resetState' | 'stateKey'>): unknown {
  if (flags.resetState && flags.importState !== undefined) throw new SapiInvalidInputError('use either --reset-state or --import-state, not both');
  if ((flags.resetState || flags.importState !== undefined) && flags.stateKey === undefined) {
    throw new SapiInvalidInputError('--reset-state and --import-state need --state-key (the state they replace)');
  }
  if (flags.resetState) return {};
  if (flags.importState === undefined) return undefined;
  try {
    return JSON.parse(readFileSync(resolve(flags.importState), 'utf8')) as unknown;
  } catch (err) {
    throw new SapiInvalidInputError(`cannot read the state ${flags.importState}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The workflow input a command line describes. */
export function extractInput(config: unknown, flags: ExtractFlags): ExtractInput {
  if (flags.receipts === false && flags.receiptsTable !== undefined) throw new SapiInvalidInputError('use either --no-receipts or --receipts-table, not both');
  return definedOnly<ExtractInput>({
    connection: flags.connection,
    config,
    stateKey: flags.stateKey,
    importState: importStateOf(flags),
    options: definedOnly({
      mode: flags.mode,
      batchPages: flags.batchPages,
      load: flags.load === false ? false : undefined,
      bucketId: flags.bucket,
      incremental: flags.incremental,
      keepStaging: flags.keepStaging,
      receipts: receiptsOf(flags),
    }),
  } as ExtractInput);
}

/** Adds `<config>` and the extract flags (shared by `extract` and `schedule extract`). */
export function addExtractArguments(command: Command): Command {
  command
    .argument('<config>', 'the configuration JSON file ({"parameters": {"api": …, "config": …}}), validated before anything starts')
    .addOption(new Option('--mode <mode>', 'batch: one activity fetches many pages; page: one activity per page').choices(['batch', 'page']))
    .option('--batch-pages <n>', 'pages per activity in batch mode', integerParser(1))
    .option('--no-load', 'extract and stage only; do not load the tables into Storage')
    .option('--bucket <id>', 'target bucket (default in.c-<outputBucket>)', bucketIdArg)
    .option('--incremental', 'load into existing tables incrementally instead of replacing their rows')
    .option('--keep-staging', 'keep the staged pages and CSVs after the tables were loaded (default: removed)')
    .option('--state-key <key>', 'run state of this configuration ({"time": "previousStart"}): read at the start, stored after a successful load')
    .option('--import-state <file>', "start from this state (a reference extractor's state.json) instead of the stored one")
    .option('--reset-state', 'start from an empty state (previousStart 0) instead of the stored one');
  return addReceiptsOptions(command);
}

/** The summary of a finished extraction (also what `wait` prints for an extractWorkflow). */
export function summarizeExtract(result: ExtractResult): Summary {
  return {
    title: `extracted ${result.pages} pages, ${result.records} records${result.cancelled ? ' (cancelled)' : ''}`,
    fields: [
      ...result.tables.map((table): [string, string] => [table.tableId ?? table.name, `${table.rows} rows${table.tableId ? '' : ' (staged, not loaded)'}`]),
      ['bytes', formatBytes(result.bytes)],
      ['staging', result.staging && 'removed' in result.staging ? `${result.staging.removed} staged objects removed` : undefined],
      ['warnings', result.warnings.length ? result.warnings.join('; ') : undefined],
      [
        'run state',
        result.runState
          ? `${result.runState.stateKey}: previousStart ${result.runTimes?.previousStart ?? 0}, ${result.runState.stored ? `stored previousStart ${result.runState.stored.time.previousStart}` : 'not stored'}`
          : undefined,
      ],
    ],
  };
}

/** `sapi-temporal extract <config.json>`: validates the configuration, runs `extractWorkflow`, prints rows per table. */
export function registerExtractCommand(program: Command, context: CliContext): void {
  const command = addExtractArguments(
    program.command('extract').description('run a Generic-Extractor configuration (every pagination method) durably and load the records into Storage tables'),
  );
  addWorkflowOptions(command).action(async (configPath: string, flags: ExtractFlags) => {
    const config = readExtractConfig(configPath);
    await context.runTransfer({
      verb: 'extract',
      workflowType: 'extractWorkflow',
      workflowId: flags.workflowId ?? defaultWorkflowId('extract', configPath.replace(/^.*\//, '').replace(/\.json$/i, '')),
      input: extractInput(config, flags),
      ...runOptions(context.env, flags),
      summarize: summarizeExtract,
    });
  });
}
