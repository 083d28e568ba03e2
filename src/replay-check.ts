// Will this version's workflow code carry on the runs already in flight? The replay the worker makes when it picks
// up a run another version started, made before deploying: a non-deterministic change shows here, not in production.
// The CLI's `replay-check` (histories from a Temporal namespace, or from files) and the unit tier's saved histories
// both go through `replayCheck`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker, type WorkerPlugin, type WorkflowBundle } from '@temporalio/worker';
import { replayTracingPlugin } from './observability/tracing';
import { leanBundleOptions } from './workflow-bundle';

/** A history to replay and the name it is reported under (its workflow id, or its file's name). */
export interface NamedHistory {
  workflowId: string;
  history: History;
}

/** The outcome of one history: `problem` is absent when it replayed. */
export interface ReplayVerdict {
  workflowId: string;
  runId: string;
  workflowType: string;
  events: number;
  /** Why it did not replay: the SDK's error type and message (for non-determinism, the first diverging command). */
  problem?: string;
}

export interface ReplayCheckOptions {
  /** The workflow module to replay against (a worker's own module that re-exports the plugin's). Default: the plugin's. */
  workflowsPath?: string;
  /** A bundle already built (tests build one per file); wins over `workflowsPath`. */
  workflowBundle?: WorkflowBundle;
  /** The data converter the workers run with (the payload codec when `SAPI_CODEC_KEYS` is set). */
  dataConverter?: DataConverter;
  /** Plugins of the replay worker (the SDK's OpenTelemetryPlugin injects the sink its workflow interceptors call). */
  plugins?: WorkerPlugin[];
  /**
   * Replay as a traced worker runs (its bundle has the OpenTelemetry workflow interceptors, which add commands'
   * headers and can order commands differently): what `SapiPlugin` bundles with tracing on. Default false. Ignored
   * with a prebuilt `workflowBundle`.
   */
  tracing?: boolean;
}

/**
 * The bundle a worker of the plugin runs: the workflow module with the plugin's workflow interceptor module (the
 * transfer log) and, with `tracing`, the OpenTelemetry plugin's (which the replay worker then needs as a plugin too).
 */
export async function workerBundle(
  options: Pick<ReplayCheckOptions, 'workflowsPath' | 'tracing'> = {},
): Promise<{ bundle: WorkflowBundle; plugins: WorkerPlugin[] }> {
  const plugins: WorkerPlugin[] = options.tracing ? [replayTracingPlugin()] : [];
  const bundle = await bundleWorkflowCode(
    leanBundleOptions({
      workflowsPath: options.workflowsPath ?? pluginWorkflowsPath,
      workflowInterceptorModules: [transferLogModule],
      plugins,
      logger: quiet,
    }),
  );
  return { bundle, plugins };
}

/** The plugin's workflow bundle entry (as `workflowsPath` of ./plugin, without loading the activities). */
const pluginWorkflowsPath = require.resolve('./workflows/entry');
/** The plugin's workflow interceptor module (as `transferLogModule` of ./plugin, without loading the activities). */
const transferLogModule = require.resolve('./observability/transfer-log');

// webpack's bundle report is noise for a check that prints one line per history
const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Replays every history against the workflow code, in order; one verdict each. */
export async function replayCheck(histories: Iterable<NamedHistory> | AsyncIterable<NamedHistory>, options: ReplayCheckOptions = {}): Promise<ReplayVerdict[]> {
  const built = options.workflowBundle ? undefined : await workerBundle(options);
  const workflowBundle = options.workflowBundle ?? built!.bundle;
  const plugins = [...(built?.plugins ?? []), ...(options.plugins ?? [])];
  // by run (a query may return several runs of one workflow id), in the order they were fed
  const seen = new Map<string, Array<Omit<ReplayVerdict, 'problem'>>>();
  async function* noted() {
    for await (const named of histories) {
      const runs = seen.get(named.workflowId) ?? [];
      runs.push({ workflowId: named.workflowId, ...describeHistory(named.history) });
      seen.set(named.workflowId, runs);
      yield named;
    }
  }
  const verdicts: ReplayVerdict[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle, dataConverter: options.dataConverter, plugins }, noted())) {
    const known = seen.get(result.workflowId)?.shift() ?? { workflowId: result.workflowId, runId: result.runId, workflowType: 'unknown', events: 0 };
    verdicts.push(result.error ? { ...known, problem: `${result.error.name}: ${oneLine(result.error.message)}` } : known);
  }
  return verdicts;
}

/** The run id and workflow type its first event names, and the number of events. */
export function describeHistory(history: History): Pick<ReplayVerdict, 'runId' | 'workflowType' | 'events'> {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return { runId: started?.originalExecutionRunId ?? 'unknown', workflowType: started?.workflowType?.name ?? 'unknown', events: history.events?.length ?? 0 };
}

/**
 * Histories saved as JSON (what `temporal workflow show --output json` prints, or the test tier's saved histories):
 * one file, or every `*.json` of a folder in name order, each named after its file.
 */
export function readHistoryFiles(path: string): NamedHistory[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((name) => name.endsWith('.json'))
        .sort()
        .map((name) => join(path, name))
    : [path];
  return files.map((file) => {
    let history: History;
    try {
      history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
    } catch (err) {
      throw new Error(
        `${file}: not a workflow history (${err instanceof Error ? err.message : String(err)}); expected what \`temporal workflow show --output json\` prints`,
        { cause: err },
      );
    }
    if (!history.events?.length) throw new Error(`${file}: a history without events`);
    return { workflowId: basename(file).replace(/\.json$/, ''), history };
  });
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
