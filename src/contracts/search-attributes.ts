// The search attributes the workflows set, and what a run shows in the Temporal UI (summary, details). Pure: safe
// for workflow code, activities, the CLI and the dev stack.
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributeUpdatePair } from '@temporalio/common';
import type { BackfillInput } from './backfill';
import type { ExtractInput } from './extract';
import type { ExportTableInput, ImportTableInput } from './transfer';

/** `import`, `export`, `extract` or `backfill`. */
export const SapiOperation = defineSearchAttributeKey('SapiOperation', SearchAttributeType.KEYWORD);
/** The table an import loads or an export reads (`in.c-main.orders`). */
export const SapiTableId = defineSearchAttributeKey('SapiTableId', SearchAttributeType.KEYWORD);
/** The bucket (`in.c-main`); an extraction's output bucket once known. */
export const SapiBucket = defineSearchAttributeKey('SapiBucket', SearchAttributeType.KEYWORD);
/** The Storage connection the worker resolves (`default` when none was named). */
export const SapiConnection = defineSearchAttributeKey('SapiConnection', SearchAttributeType.KEYWORD);
/** Where an import reads: `local`, `http`, `s3`, `sliced`, `staged` (an extraction's own CSV). */
export const SapiSourceKind = defineSearchAttributeKey('SapiSourceKind', SearchAttributeType.KEYWORD);
/** Where an export writes: `local` or `s3`. */
export const SapiDestinationKind = defineSearchAttributeKey('SapiDestinationKind', SearchAttributeType.KEYWORD);
/** The host of the API an extraction reads (`api.crm.example`). */
export const SapiApiHost = defineSearchAttributeKey('SapiApiHost', SearchAttributeType.KEYWORD);
/** An extraction's `stateKey`. */
export const SapiStateKey = defineSearchAttributeKey('SapiStateKey', SearchAttributeType.KEYWORD);
/** The run's phase (`uploading`, `importing`, `paused`, `done`, `failed`, …), kept up to date while it runs. */
export const SapiPhase = defineSearchAttributeKey('SapiPhase', SearchAttributeType.KEYWORD);
/** Rows imported (import) or extracted (extract), set at the end. */
export const SapiRows = defineSearchAttributeKey('SapiRows', SearchAttributeType.INT);
/** Bytes uploaded, downloaded or fetched, set at the end. */
export const SapiBytes = defineSearchAttributeKey('SapiBytes', SearchAttributeType.INT);

/** What became of an import's load receipt, set at the end: `written`, `failed` (the load stands), `off`. */
export const SapiReceipt = defineSearchAttributeKey('SapiReceipt', SearchAttributeType.KEYWORD);

/** Every search attribute of the plugin, in the order the docs list them. */
export const SAPI_SEARCH_ATTRIBUTES = [
  SapiOperation,
  SapiTableId,
  SapiBucket,
  SapiConnection,
  SapiSourceKind,
  SapiDestinationKind,
  SapiApiHost,
  SapiStateKey,
  SapiPhase,
  SapiRows,
  SapiBytes,
  SapiReceipt,
] as const;

/**
 * The attributes whose values name what a run moves (tables, buckets, connections, APIs, state keys). Search
 * attributes are indexed in clear, so a worker that encrypts payloads (`SAPI_CODEC_KEYS`) does not set these: it
 * would publish what the codec hides. The others (operation, kinds, phase, totals) name nothing of the user's.
 */
export const IDENTIFYING_SEARCH_ATTRIBUTES: readonly string[] = [SapiTableId, SapiBucket, SapiConnection, SapiApiHost, SapiStateKey].map((k) => k.name);

/** The type names `temporal operator search-attribute create --type` and `temporal server start-dev --search-attribute` take. */
const CLI_TYPE_NAMES: Record<string, string> = { [SearchAttributeType.KEYWORD]: 'Keyword', [SearchAttributeType.INT]: 'Int' };

/** `Name=Type` of each attribute, as `temporal server start-dev --search-attribute` takes them. */
export function searchAttributeDefinitions(): string[] {
  return SAPI_SEARCH_ATTRIBUTES.map((key) => `${key.name}=${CLI_TYPE_NAMES[key.type]}`);
}

/** The command that registers `names` (default: all) in a namespace of a real cluster. */
export function registerCommand(namespace: string, names: readonly string[] = SAPI_SEARCH_ATTRIBUTES.map((k) => k.name)): string {
  const keys = SAPI_SEARCH_ATTRIBUTES.filter((key) => names.includes(key.name));
  return `temporal operator search-attribute create --namespace ${namespace} ${keys.map((k) => `--name ${k.name} --type ${CLI_TYPE_NAMES[k.type]}`).join(' ')}`;
}

/** The kind of an import source or export destination: `s3`, `http`, `local`. */
function locationKind(location: string | undefined): string {
  if (!location) return 'local';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(location)?.[1]?.toLowerCase();
  if (scheme === 'https') return 'http';
  return scheme ?? 'local';
}

/** Host of a URL, lower case, or undefined. Plain string work: workflow code has no `URL` it could trust across versions. */
export function hostOf(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]+\]|[^:/?#]+)/i.exec(url.trim());
  return match?.[1]?.toLowerCase();
}

/** Search attribute values of a run, by attribute name (unset ones absent). */
export type RunAttributeValues = Partial<{
  SapiOperation: string;
  SapiTableId: string;
  SapiBucket: string;
  SapiConnection: string;
  SapiSourceKind: string;
  SapiDestinationKind: string;
  SapiApiHost: string;
  SapiStateKey: string;
  SapiPhase: string;
  SapiRows: number;
  SapiBytes: number;
  SapiReceipt: string;
}>;

/** What an import is searchable by from its start. */
export function importAttributes(input: ImportTableInput): RunAttributeValues {
  return {
    SapiOperation: 'import',
    SapiTableId: `${input.bucketId}.${input.table}`,
    SapiBucket: input.bucketId,
    SapiConnection: input.connection ?? 'default',
    SapiSourceKind: input.sourceGrant ? 'staged' : input.slices?.length ? 'sliced' : locationKind(input.source),
  };
}

/** What an export is searchable by from its start. */
export function exportAttributes(input: ExportTableInput): RunAttributeValues {
  return {
    SapiOperation: 'export',
    SapiTableId: input.tableId,
    SapiBucket: typeof input.tableId === 'string' ? input.tableId.split('.').slice(0, 2).join('.') : undefined,
    SapiConnection: input.connection ?? 'default',
    SapiDestinationKind: locationKind(input.destination),
  };
}

/** What an extraction is searchable by from its start (the bucket once the configuration is validated). */
export function extractAttributes(input: ExtractInput): RunAttributeValues {
  const config = input.config as { parameters?: { api?: { baseUrl?: unknown } } } | undefined;
  return {
    SapiOperation: 'extract',
    SapiConnection: input.connection ?? 'default',
    SapiApiHost: hostOf(config?.parameters?.api?.baseUrl),
    SapiStateKey: typeof input.stateKey === 'string' ? input.stateKey : undefined,
  };
}

/**
 * What a backfill is searchable by from its start: operation `backfill`, and what its windows move (an extraction's
 * API host and state key, an import's table), so it is found next to the live runs of the same configuration or table.
 */
export function backfillAttributes(input: BackfillInput): RunAttributeValues {
  if (input?.kind === 'extract') return { ...extractAttributes(input.extract ?? { config: undefined }), SapiOperation: 'backfill' };
  const template = (input as { import?: Partial<ImportTableInput> } | undefined)?.import;
  return {
    SapiOperation: 'backfill',
    SapiConnection: template?.connection ?? 'default',
    SapiTableId: template?.bucketId !== undefined && template.table !== undefined ? `${template.bucketId}.${template.table}` : undefined,
    SapiBucket: template?.bucketId,
  };
}

/** The update pairs of `values` whose attribute is in `registered` (values left undefined are skipped). */
export function attributeUpdates(values: RunAttributeValues, registered: ReadonlySet<string>): SearchAttributeUpdatePair[] {
  const pairs: SearchAttributeUpdatePair[] = [];
  for (const key of SAPI_SEARCH_ATTRIBUTES) {
    const value = values[key.name as keyof RunAttributeValues];
    if (value === undefined || !registered.has(key.name)) continue;
    pairs.push({ key, value } as SearchAttributeUpdatePair);
  }
  return pairs;
}

/** `3.1 GB`, `512 B`: decimal units, one decimal from kB on. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The last path segment of a path or URL (query and fragment dropped). */
export function baseNameOf(location: string): string {
  const path = location.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return path.slice(path.lastIndexOf('/') + 1) || path;
}

/** The one-line summary the Temporal UI shows for a run: `import orders.csv → in.c-main.orders (direct, 3.1 GB)`. */
function runSummary(
  run:
    | { workflowType: 'importTableWorkflow'; input: ImportTableInput; sizeBytes?: number }
    | { workflowType: 'exportTableWorkflow'; input: ExportTableInput }
    | { workflowType: 'extractWorkflow'; input: ExtractInput },
): string {
  if (run.workflowType === 'importTableWorkflow') {
    const { input } = run;
    const source = input.slices?.length ? `${input.slices.length} slices` : baseNameOf(input.source);
    const how = [
      input.via ?? 'direct',
      input.mode === 'load' ? (input.incremental ? 'incremental load' : 'full load') : undefined,
      run.sizeBytes !== undefined ? formatBytes(run.sizeBytes) : undefined,
    ];
    return `import ${source} → ${input.bucketId}.${input.table} (${how.filter(Boolean).join(', ')})`;
  }
  if (run.workflowType === 'exportTableWorkflow')
    return `export ${run.input.tableId} → ${baseNameOf(run.input.destination)} (${locationKind(run.input.destination)})`;
  const attrs = extractAttributes(run.input);
  const bucket = run.input.options?.bucketId;
  return `extract ${attrs.SapiApiHost ?? 'API'}${bucket ? ` → ${bucket}` : ''} (${run.input.options?.mode ?? 'batch'} mode${attrs.SapiStateKey ? `, state ${attrs.SapiStateKey}` : ''})`;
}

/** The static details (markdown) the Temporal UI shows under the summary: what the run was asked to do, no secrets. */
function runDetails(fields: Record<string, string | number | boolean | undefined>): string {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => `**${name}**: ${String(value)}`)
    .join('  \n');
}

/** Static summary and details of a run the CLI or a schedule starts (what the Temporal UI shows above its history). */
export function runMetadata(
  run:
    | { workflowType: 'importTableWorkflow'; input: ImportTableInput; sizeBytes?: number }
    | { workflowType: 'exportTableWorkflow'; input: ExportTableInput }
    | { workflowType: 'extractWorkflow'; input: ExtractInput },
  startedBy?: string,
): { staticSummary: string; staticDetails: string } {
  const input = run.input as Partial<ImportTableInput & ExportTableInput & ExtractInput>;
  const extract = run.workflowType === 'extractWorkflow' ? extractAttributes(run.input) : undefined;
  return {
    staticSummary: runSummary(run),
    staticDetails: runDetails({
      source: run.workflowType === 'importTableWorkflow' ? (input.slices?.length ? input.slices.join(', ') : input.source) : undefined,
      table: run.workflowType === 'importTableWorkflow' ? `${input.bucketId}.${input.table}` : input.tableId,
      destination: input.destination,
      mode: run.workflowType === 'importTableWorkflow' ? `${input.mode ?? 'create'}${input.incremental ? ' (incremental)' : ''}` : input.options?.mode,
      via: input.via,
      'API host': extract?.SapiApiHost,
      'state key': extract?.SapiStateKey,
      connection: input.connection ?? 'default',
      'transfer task queue': input.transferTaskQueue,
      'started by': startedBy,
    }),
  };
}
