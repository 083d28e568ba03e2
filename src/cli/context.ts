// The types the CLI's commands share: what a command is given (CliContext, its settings and flags) and what it hands
// to the transfer runner. Types only, importing no command module, so every command and the runner import them from
// here without importing each other.
import type { Priority } from '@temporalio/common';
import type { CodecKey } from '../codec/keys';
import type { TemporalConnectionSettings } from '../config';
import type { WorkflowInput, WorkflowName, WorkflowResult } from '../contracts/workflows';
import type { TracingOptions } from '../observability/tracing';

/**
 * Where and how the CLI reaches Temporal (address, namespace, API key, TLS, profile) and the task queue. The CLI
 * needs nothing else: Storage tokens live in the worker's environment.
 */
export interface CliSettings extends TemporalConnectionSettings {
  taskQueue: string;
  /** Payload-encryption keys (`SAPI_CODEC_KEYS` / `SAPI_CODEC_KEY_FILE`) for the client's data converter; absent: off. */
  codecKeys?: CodecKey[];
  /** Tracing of a transfer command (`SAPI_OTEL_ENDPOINT` / `OTEL_EXPORTER_OTLP_*`, as the worker reads them); absent: off. */
  tracing?: TracingOptions;
}

/** The Temporal connection flags as commander parses them (the Temporal CLI's names). */
export interface TemporalFlags {
  address?: string;
  namespace?: string;
  taskQueue?: string;
  /** `--env`: a preset of `temporal env set` (`~/.config/temporalio/temporal.yaml`). */
  env?: string;
  envFile?: string;
  /** `--profile` of the TOML config file (`temporal config set`). */
  profile?: string;
  configFile?: string;
  apiKey?: string;
  /** `--tls`: TLS on without any other TLS setting (true), or off (`--no-tls`: false). */
  tls?: boolean;
  tlsCertPath?: string;
  tlsKeyPath?: string;
  tlsCaPath?: string;
  tlsServerName?: string;
  tlsDisableHostVerification?: boolean;
}

/** What the commands depend on; tests replace `runTransfer` to see the workflow input a command line produces. */
export interface CliContext {
  /** Environment the commands read. Default `process.env`. */
  env: NodeJS.ProcessEnv;
  /** Starts a transfer workflow, shows its progress and prints its result. Default `runTransfer` (run-transfer.ts). */
  runTransfer: TransferRunner;
}

/** A result as a person reads it: a title line and labelled values (undefined values are left out). */
export interface Summary {
  title: string;
  fields: Array<[label: string, value: string | number | undefined]>;
}

/** One workflow run as a command describes it: a registered workflow and its typed input. */
export interface TransferRun<W extends WorkflowName = WorkflowName> {
  /** `import` or `export`: names the run in messages. */
  verb: string;
  /** Registered workflow name, e.g. `importTableWorkflow`. */
  workflowType: W;
  workflowId: string;
  input: WorkflowInput<W>;
  settings: CliSettings;
  /** Print exactly one JSON object `{workflowId, runId, ...result}` on stdout, no summary and no progress bar. */
  json: boolean;
  /** Keep following through a Temporal outage this long before giving up with exit code 3 (ms). */
  reconnectTimeoutMs: number;
  /** `--detach`: start the workflow, print its id (`{workflowId, runId, taskQueue}` with `json`) and return. Default false. */
  detach?: boolean;
  /** First Ctrl-C while following: `detach` (default) stops waiting, `cancel` (`--cancel-on-interrupt`) cancels the workflow. */
  onInterrupt?: 'detach' | 'cancel';
  /**
   * Run again when the last run under `workflowId` completed (`--rerun`). Default false: such a command runs nothing,
   * says the run is already done and prints its result. A run still going under the id is always followed instead of
   * starting a second one (two commands racing to start it get one workflow).
   */
  rerun?: boolean;
  /** Priority and fairness of the run (inherited by its activities and child workflows); the server's default when absent. */
  priority?: Priority;
  /** Check that a worker polls the task queue(s) before starting (default true; `--no-worker-check` turns it off). */
  checkWorkers?: boolean;
  /** The human summary: a title line and labelled values (undefined values are left out). */
  summarize(result: WorkflowResult<W>): Summary;
}

/** `runTransfer`'s shape, so tests can put a recorder in its place. */
export type TransferRunner = <W extends WorkflowName>(run: TransferRun<W>) => Promise<void>;
