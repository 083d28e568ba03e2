/**
 * The CLI's commands as the entry point (index.ts) knows them before it loads any: each group's names, the line the
 * top-level help shows for each, and how to load the module that registers them. `sapi-temporal --help` and
 * `--version` load none (the Temporal client, gRPC, zod and the extractor stay unloaded); a command loads its own
 * module only. The lines repeat what each command module registers (change both: test/unit/cli/lazy-commands.test.ts
 * compares them).
 */
import type { Command } from 'commander';
import type { CliContext } from './context';

/** One command as the top-level help lists it. */
export interface CommandSummary {
  readonly name: string;
  /** The help's left column: `name [options] <args>` (commander's `Help.subcommandTerm` of the real command). */
  readonly term: string;
  readonly description: string;
}

/** Registers the real commands of a group on the program. */
export type RegisterCommands = (program: Command, context: CliContext) => void;

/** Commands registered by one module. */
interface CommandGroup {
  readonly commands: readonly CommandSummary[];
  load(): Promise<RegisterCommands>;
}

/** Every command of the installed package, in the help's order. */
export const COMMAND_GROUPS: readonly CommandGroup[] = [
  {
    commands: [
      {
        name: 'import',
        term: 'import [options] <source>',
        description: 'import a CSV into a Storage table (importTableWorkflow) and wait for it, with a progress bar',
      },
    ],
    load: async () => (await import('./import')).registerImportCommand,
  },
  {
    commands: [
      {
        name: 'export',
        term: 'export [options] <tableId> <destination>',
        description: 'export a Storage table to a file (exportTableWorkflow) and wait for it, with a progress bar',
      },
    ],
    load: async () => (await import('./export')).registerExportCommand,
  },
  {
    commands: [
      {
        name: 'extract',
        term: 'extract [options] <config>',
        description: 'run a Generic-Extractor configuration (every pagination method) durably and load the records into Storage tables',
      },
    ],
    load: async () => (await import('./extract')).registerExtractCommand,
  },
  {
    commands: [
      {
        name: 'extract-state',
        term: 'extract-state',
        description: 'show, reset or import the run state of a configuration ({"time": {"previousStart": …}}, as the reference extractor\'s state.json)',
      },
    ],
    load: async () => (await import('./extract-state')).registerExtractStateCommand,
  },
  {
    commands: [
      {
        name: 'backfill',
        term: 'backfill',
        description:
          'run an extraction over past date windows, or imports of many files, as child runs (a few at a time, priority 4 by default so live runs go first); run it again under the same --workflow-id and the windows done are not redone',
      },
    ],
    load: async () => (await import('./backfill')).registerBackfillCommand,
  },
  {
    commands: [
      {
        name: 'status',
        term: 'status [options] <workflowId>',
        description:
          'show a workflow: type, status (running, completed, failed, cancelled, terminated, timed out), start/close time, its progress while running, its result or failure when closed',
      },
      {
        name: 'wait',
        term: 'wait [options] <workflowId>',
        description:
          'follow a running import/export/extract workflow to its end (progress bar, Temporal outages ridden out) and print its result as the command that started it would; Ctrl-C stops waiting, the workflow runs on',
      },
    ],
    load: async () => (await import('./status')).registerStatusCommands,
  },
  {
    commands: [
      {
        name: 'list',
        term: 'list [options]',
        description: 'list import/export/extract runs as Temporal visibility finds them by their search attributes (newest first)',
      },
    ],
    load: async () => (await import('./list')).registerListCommand,
  },
  {
    commands: [
      {
        name: 'receipts',
        term: 'receipts [options]',
        description: 'list the receipts of the loads into a table, newest first: run, rows, bytes, file, job, source, when',
      },
      {
        name: 'verify',
        term: 'verify [options]',
        description:
          "recount the tables a run loaded against its receipts (a full load: the table's rows equal the receipt's; incremental: at most the rows the receipted loads brought)",
      },
    ],
    load: async () => (await import('./receipts')).registerReceiptsCommands,
  },
  {
    commands: [
      {
        name: 'pause',
        term: 'pause [options] <workflowId>',
        description:
          'pause an extraction after the batch in flight, or a backfill (no further window starts; the running ones end) (refused when it is paused, cancelling or loading)',
      },
      { name: 'resume', term: 'resume [options] <workflowId>', description: 'resume a paused extraction or backfill (refused when it is not paused)' },
      {
        name: 'cancel',
        term: 'cancel [options] <workflowId>',
        description:
          'cancel a run (a Temporal cancellation request, after checking the run can still be cancelled); it ends cancelled: an import or export now (a Storage job already started is not polled further), an extraction after the batch in flight (its staged pages loaded unless loadOnCancel is false), a backfill once its running windows end (no further window starts)',
      },
      {
        name: 'limit',
        term: 'limit [options] <workflowId>',
        description:
          'set limits of a running extraction: stop fetching at --max-pages pages in all, then load the tables (exact: refused below the pages already fetched plus the most the call in flight may add, and the refusal names the least limit accepted)',
      },
      {
        name: 'extend-deadline',
        term: 'extend-deadline [options] <workflowId>',
        description:
          'move the deadline of the Storage job an import or export polls (refused when no job is polled, or the time is not later than the current deadline)',
      },
    ],
    load: async () => (await import('./control')).registerControlCommands,
  },
  {
    commands: [
      {
        name: 'schedule',
        term: 'schedule',
        description: 'Temporal Schedules that run imports, exports and extractions (create, list, trigger, pause, unpause, delete)',
      },
    ],
    load: async () => (await import('./schedule')).registerScheduleCommand,
  },
  {
    commands: [
      {
        name: 'worker',
        term: 'worker [options]',
        description:
          'run a worker for the plugin until Ctrl-C/SIGTERM (graceful stop). Settings from the environment: SAPI_URL + SAPI_TOKEN (SAPI_<NAME>_URL/_TOKEN for more connections), TEMPORAL_*, SAPI_HOST_TASK_QUEUE, AWS_*, SAPI_WORK_DIR, …',
      },
    ],
    load: async () => (await import('./worker')).registerWorkerCommand,
  },
  {
    commands: [
      {
        name: 'replay-check',
        term: 'replay-check [options]',
        description:
          "replay the histories of running workflows (or saved ones) against this version's workflow code before deploying it: one line per history, exit 1 when any would fail on it (non-determinism: the first diverging command)",
      },
    ],
    load: async () => (await import('./replay-check')).registerReplayCheckCommand,
  },
  {
    commands: [
      {
        name: 'codec-server',
        term: 'codec-server [options]',
        description:
          'serve POST /encode and /decode for the Temporal UI and `temporal --codec-endpoint`, with the keys of SAPI_CODEC_KEYS (or SAPI_CODEC_KEY_FILE), behind the bearer token in SAPI_CODEC_SERVER_TOKEN, until Ctrl-C/SIGTERM',
      },
    ],
    load: async () => (await import('./codec-server')).registerCodecServerCommand,
  },
];

/** The dev kit's commands (./dev-kit: the workspace only; the package's build leaves the module out). */
export const DEV_KIT_SUMMARIES: readonly CommandSummary[] = [
  {
    name: 'emulator',
    term: 'emulator [options]',
    description:
      'run the Storage API emulator until Ctrl-C/SIGTERM; files go to the S3 endpoint in AWS_ENDPOINT_URL_S3 (MinIO, with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_REGION, bucket SAPI_EMULATOR_BUCKET or sapi-files)',
  },
  {
    name: 'dev',
    term: 'dev [options]',
    description:
      'run the dev stack (Temporal dev server, MinIO, Azurite with --backend azure, fake-gcs-server with --backend gcp, Storage API emulator, worker) in the foreground; with codec keys (SAPI_CODEC_KEYS or SAPI_CODEC_KEY_FILE) also a codec server the Temporal UI decodes payloads through',
  },
  {
    name: 'demo',
    term: 'demo [options]',
    description: 'run the main job end to end on a fresh dev stack: import, incremental load, sliced export, extraction',
  },
];
