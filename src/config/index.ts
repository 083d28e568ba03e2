import { tmpdir } from 'node:os';
import { z } from 'zod';
import { loadCodecKeys } from '../codec/keys';
import { SapiInvalidInputError } from '../errors';
import { DEFAULT_LOG_FORMAT, LOG_FORMATS } from '../observability/log-format';
import { DEFAULT_SCHEDULE_METRICS_INTERVAL_S } from '../observability/schedule-metrics';
import { tracingFromEnv } from '../observability/tracing';
import { loadTemporalConnection, type TemporalConnectionSettings } from './temporal';
import { listSetting, originKey, policyProblems, type InputPolicy } from '../security/policy';
import { DEFAULT_RECEIPTS_TABLE, RECEIPTS_OFF, RECEIPTS_TABLE_PATTERN } from '../contracts/receipts';

export * from './temporal';

/** Default connection name: workflows that name no connection use this one (`SAPI_URL` + `SAPI_TOKEN`). */
export const DEFAULT_CONNECTION = 'default';
/** `SAPI_…_URL` variables that are settings, not Storage connections. */
const NOT_CONNECTION_URLS = new Set(['SAPI_STAGING_URL']);

/** Default task queue of the worker and the CLI. */
export const DEFAULT_TASK_QUEUE = 'sapi-temporal';
/** Default prefix of the environment variables an extractor configuration may reference (`${env:SAPI_SECRET_…}`). */
export const DEFAULT_EXTRACT_SECRET_ENV_PREFIX = 'SAPI_SECRET_';
/** Default S3 multipart part size (MiB), as the AWS CLI. Memory of an upload = part size × (concurrency + 1). */
export const DEFAULT_PART_SIZE_MIB = 8;
/** Default number of parts (upload) or slices (download) in flight. */
export const DEFAULT_TRANSFER_CONCURRENCY = 4;
/**
 * Default number of workflow runs the worker keeps in memory between their tasks (`SAPI_MAX_CACHED_WORKFLOWS`). The
 * SDK's own default grows with the heap limit (~2,300 on a machine with 16 GB or more), so a worker's memory would
 * depend on the host's; 1,000 cached import runs measured ~56 MB. A run evicted from the cache is replayed from its
 * history on its next task: less memory, more CPU (and with many more runs in flight than cached, much more).
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 1000;
/**
 * Default number of activities one worker runs at once (`SAPI_MAX_CONCURRENT_ACTIVITIES`; SDK default 100). Each
 * transfer activity holds up to part size × (transfer concurrency + 1) in buffers (40 MiB by default) while it
 * streams a large file; small files hold their own size only.
 */
export const DEFAULT_MAX_CONCURRENT_ACTIVITIES = 100;
/** Default number of workflow tasks one worker runs at once (`SAPI_MAX_CONCURRENT_WORKFLOW_TASKS`; as the SDK). */
export const DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS = 40;

/**
 * The settings' zod schema, built by each {@link loadSettings} and dropped after it: zod's schema objects carry
 * dozens of closures each (~1 MB of V8 heap for this one), which a worker would otherwise keep for its life to
 * parse its environment once.
 */
function buildSettingsSchema() {
  const connectionSchema = z.object({
    url: z.url({ message: 'must be an http(s) URL of the Storage API, e.g. https://connection.keboola.com' }),
    token: z.string().min(1, 'is required'),
    importUrl: z.url().optional(),
    branchId: z.string().min(1).optional(),
  });

  const settingsSchema = z.object({
    connections: z.record(z.string(), connectionSchema),
    /** How to reach Temporal (envconfig: address, namespace, API key, TLS, profile) and the task queue. */
    temporal: z.object({
      address: z.string().min(1),
      namespace: z.string().min(1),
      taskQueue: z.string().min(1),
      apiKey: z.string().min(1).optional(),
      tls: z.custom<NonNullable<TemporalConnectionSettings['tls']>>((value) => typeof value === 'object' && value !== null).optional(),
      grpcMeta: z.record(z.string(), z.string()).optional(),
      profile: z.string().min(1).optional(),
      disableHostVerification: z.boolean().optional(),
    }),
    /** Optional extra task queue this worker also polls, for work bound to its host (local paths). */
    hostTaskQueue: z.string().min(1).optional(),
    s3: z.object({
      endpoint: z.url().optional(),
      region: z.string().optional(),
      /** The worker's own S3 keys (for `s3://` sources/destinations and staging); else the default AWS chain. */
      accessKeyId: z.string().optional(),
      secretAccessKey: z.string().optional(),
    }),
    gcs: z.object({
      /** JSON API root of Google Cloud Storage: an emulator's (fake-gcs-server); absent: `https://storage.googleapis.com`. */
      endpoint: z.url().optional(),
    }),
    /** Where extraction stages page records: `s3://bucket/prefix` (durable, any worker) or a local folder. */
    stagingUrl: z.string().min(1),
    transfer: z.object({
      partSizeBytes: z
        .number()
        .int()
        .min(5 * 1024 * 1024),
      concurrency: z.number().int().min(1).max(64),
    }),
    /** How much work one worker process takes on: its memory is a function of these (docs/deploying.md, Scaling out). */
    worker: z.object({
      maxCachedWorkflows: z.number().int().min(0),
      maxConcurrentActivities: z.number().int().min(1),
      maxConcurrentWorkflowTasks: z.number().int().min(2),
    }),
    /** Where activities keep temporary files (slice downloads, staged pages). */
    workDir: z.string().min(1),
    /**
     * The Storage table load receipts go to when a run names none (`SAPI_RECEIPTS_TABLE`, default
     * `in.c-sapi-temporal.receipts`); `null` (`off`): none unless a run names a table.
     */
    receiptsTable: z.string().regex(RECEIPTS_TABLE_PATTERN, `must be a table id like ${DEFAULT_RECEIPTS_TABLE}, or ${RECEIPTS_OFF}`).nullable(),
    /** Extractor configurations may reference (`${env:NAME}`) only the worker's variables starting with this. */
    extractSecretEnvPrefix: z.string().min(1, 'must not be empty (it keeps configurations from reading any other variable of the worker)'),
    /** What workflow inputs may name: local roots, URLs and networks, object prefixes (docs/security.md). */
    policy: z.custom<InputPolicy>((value) => typeof value === 'object' && value !== null),
    /** Payload-encryption keys (first encrypts, any decrypts); absent: the payload codec is off. */
    codecKeys: z
      .array(z.object({ id: z.string().min(1), key: z.string().min(1) }))
      .min(1)
      .optional(),
    /** Register the plugin's Nexus service (`sapi-temporal`: importTable, exportTable, extract) on the worker. */
    nexusService: z.boolean({ message: 'must be true or false' }),
    /**
     * Worker Deployment Versioning: with a deployment name the worker polls as version `<name>:<buildId>` (build id
     * default: the package version and a hash of the workflow bundle); imports and exports stay on the version that
     * started them, an extraction moves to the current version at its next continue-as-new (docs/deploying.md).
     */
    deployment: z
      .object({ name: z.string().min(1).optional(), buildId: z.string().min(1).optional() })
      .refine((d) => d.buildId === undefined || d.name !== undefined, {
        message: 'SAPI_BUILD_ID needs SAPI_DEPLOYMENT_NAME (a build id belongs to a deployment)',
      }),
    observability: z.object({
      /** `host:port` of the worker's Prometheus endpoint (`/metrics`); absent: no endpoint. */
      metricsAddress: z
        .string()
        .regex(/^[^\s:]*:\d{1,5}$/, 'must be host:port, e.g. 0.0.0.0:9464')
        .optional(),
      /** The worker runtime's log lines: `text` (default) or `json` (one object a line). */
      logFormat: z.enum(LOG_FORMATS, { message: 'must be text or json' }),
      /**
       * How often (seconds) a worker with a metrics endpoint reads the skip counts of the schedules that start the
       * plugin's workflows on its task queues (`sapi_schedule_runs_skipped_total`); 0: never.
       */
      scheduleMetricsIntervalS: z
        .number({ message: 'must be a whole number of seconds' })
        .int('must be a whole number of seconds')
        .min(0, 'must be 0 (off) or more seconds'),
      /**
       * OpenTelemetry tracing (`SAPI_OTEL_ENDPOINT`, else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
       * `OTEL_EXPORTER_OTLP_ENDPOINT`; see `tracingFromEnv`); absent: off.
       */
      tracing: z
        .object({
          endpoint: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL, e.g. http://otel-collector:4318' }).optional(),
          tracesUrl: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL, e.g. http://otel-collector:4318/v1/traces' }).optional(),
          serviceName: z.string().min(1).optional(),
        })
        .optional(),
    }),
  });
  return settingsSchema;
}

/** The worker's settings as its schema parses them. */
type ParsedSettings = z.infer<ReturnType<typeof buildSettingsSchema>>;

/** A Storage API connection as the worker knows it: the token never leaves the worker's configuration. */
export type ConnectionSettings = ParsedSettings['connections'][string];

/** The worker's settings, parsed once from the environment and frozen. */
export type Settings = Readonly<ParsedSettings>;

/**
 * Reads the settings from environment variables:
 * - `SAPI_URL`, `SAPI_TOKEN` (+ optional `SAPI_IMPORT_URL`, `SAPI_BRANCH_ID`): the `default` connection;
 *   `SAPI_<NAME>_URL` / `SAPI_<NAME>_TOKEN` add a connection named `<name>` (lower-case).
 * - Temporal, as the Temporal CLI and SDKs read it ({@link loadTemporalConnection}): `TEMPORAL_ADDRESS` (default
 *   `localhost:7233`), `TEMPORAL_NAMESPACE` (`default`), `TEMPORAL_API_KEY`, `TEMPORAL_TLS`, `TEMPORAL_TLS_*`,
 *   `TEMPORAL_PROFILE` / `TEMPORAL_CONFIG_FILE`; `TEMPORAL_TASK_QUEUE` (`sapi-temporal`), `SAPI_HOST_TASK_QUEUE` (optional).
 * - `AWS_ENDPOINT_URL_S3`, `AWS_REGION` (object storage; the endpoint only for MinIO or other S3-compatible stores).
 * - `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`: the worker's own S3 keys (else the default AWS chain).
 * - `STORAGE_EMULATOR_HOST`: Google Cloud Storage's endpoint when it is an emulator (`http://127.0.0.1:4443`), as
 *   Google's own clients read it; unset: the real service.
 * - `SAPI_MAX_CACHED_WORKFLOWS` (1000), `SAPI_MAX_CONCURRENT_ACTIVITIES` (100), `SAPI_MAX_CONCURRENT_WORKFLOW_TASKS` (40).
 * - `SAPI_PART_SIZE_MIB` (8), `SAPI_TRANSFER_CONCURRENCY` (4), `SAPI_WORK_DIR` (`<tmp>/sapi-temporal`),
 *   `SAPI_STAGING_URL` (`s3://bucket/prefix` or a folder; default `<work dir>/staging`).
 * - `SAPI_RECEIPTS_TABLE` (`in.c-sapi-temporal.receipts`; `off`: none): where load receipts go when a run names no table.
 * - `SAPI_EXTRACT_SECRET_ENV_PREFIX` (`SAPI_SECRET_`): the variables extractor configurations may reference.
 * - `SAPI_CODEC_KEYS` (`id:base64key,…`) or `SAPI_CODEC_KEY_FILE` (one per line): payload encryption; unset: off.
 * - `SAPI_METRICS_ADDRESS` (`host:port`, e.g. `0.0.0.0:9464`; unset: no metrics endpoint), `SAPI_LOG_FORMAT`
 *   (`text` default, or `json`), `SAPI_SCHEDULE_METRICS_INTERVAL` (seconds, default 60; 0: off),
 *   `SAPI_OTEL_ENDPOINT` (OTLP/HTTP base URL of a trace collector, or the standard
 *   `OTEL_EXPORTER_OTLP_*` variables; unset: no tracing).
 * - `SAPI_NEXUS_SERVICE` (`true`/`false`, default false): register the Nexus service on the worker.
 * Throws one error that lists every invalid variable.
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env, tmpDir = tmpdir()): Settings {
  const connections: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(env)) {
    const match = key.match(/^SAPI_(?:([A-Z0-9_]+)_)?URL$/);
    if (!match || key.endsWith('_IMPORT_URL') || NOT_CONNECTION_URLS.has(key) || value === undefined || value === '') continue;
    const prefix = match[1] ? `SAPI_${match[1]}_` : 'SAPI_';
    const name = match[1] ? match[1].toLowerCase() : DEFAULT_CONNECTION;
    connections[name] = {
      url: value,
      token: env[`${prefix}TOKEN`] ?? '',
      importUrl: env[`${prefix}IMPORT_URL`] || undefined,
      branchId: env[`${prefix}BRANCH_ID`] || undefined,
    };
  }
  const parsed = buildSettingsSchema().safeParse({
    connections,
    temporal: { ...loadTemporalConnection(env), taskQueue: env.TEMPORAL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE },
    hostTaskQueue: env.SAPI_HOST_TASK_QUEUE || undefined,
    s3: {
      endpoint: env.AWS_ENDPOINT_URL_S3 || undefined,
      region: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined,
      accessKeyId: env.AWS_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY || undefined,
    },
    gcs: { endpoint: env.STORAGE_EMULATOR_HOST || undefined },
    stagingUrl: env.SAPI_STAGING_URL || `${env.SAPI_WORK_DIR ?? `${tmpDir}/sapi-temporal`}/staging`,
    transfer: {
      partSizeBytes: Number(env.SAPI_PART_SIZE_MIB ?? DEFAULT_PART_SIZE_MIB) * 1024 * 1024,
      concurrency: Number(env.SAPI_TRANSFER_CONCURRENCY ?? DEFAULT_TRANSFER_CONCURRENCY),
    },
    worker: {
      maxCachedWorkflows: Number(env.SAPI_MAX_CACHED_WORKFLOWS ?? DEFAULT_MAX_CACHED_WORKFLOWS),
      maxConcurrentActivities: Number(env.SAPI_MAX_CONCURRENT_ACTIVITIES ?? DEFAULT_MAX_CONCURRENT_ACTIVITIES),
      maxConcurrentWorkflowTasks: Number(env.SAPI_MAX_CONCURRENT_WORKFLOW_TASKS ?? DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS),
    },
    workDir: env.SAPI_WORK_DIR ?? `${tmpDir}/sapi-temporal`,
    receiptsTable: env.SAPI_RECEIPTS_TABLE === RECEIPTS_OFF ? null : env.SAPI_RECEIPTS_TABLE || DEFAULT_RECEIPTS_TABLE,
    extractSecretEnvPrefix: env.SAPI_EXTRACT_SECRET_ENV_PREFIX ?? DEFAULT_EXTRACT_SECRET_ENV_PREFIX,
    policy: inputPolicyOf(env, connections),
    codecKeys: codecKeysOf(env),
    nexusService: booleanSetting(env.SAPI_NEXUS_SERVICE),
    deployment: { name: env.SAPI_DEPLOYMENT_NAME || undefined, buildId: env.SAPI_BUILD_ID || undefined },
    observability: {
      metricsAddress: env.SAPI_METRICS_ADDRESS || undefined,
      logFormat: (env.SAPI_LOG_FORMAT || DEFAULT_LOG_FORMAT).toLowerCase(),
      scheduleMetricsIntervalS: Number(env.SAPI_SCHEDULE_METRICS_INTERVAL || DEFAULT_SCHEDULE_METRICS_INTERVAL_S),
      tracing: tracingFromEnv(env),
    },
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${variableOf(issue.path)} ${issue.message}`);
    throw new Error(`invalid configuration: ${problems.join('; ')}`);
  }
  return deepFreeze(parsed.data);
}

/**
 * The input policy from `SAPI_LOCAL_ROOTS`, `SAPI_ALLOWED_URLS`, `SAPI_ALLOWED_NETWORKS`, `SAPI_ALLOWED_OBJECT_PREFIXES`
 * (comma-separated; unset: nothing allowed but public URLs) and the worker's own services (its Storage, importer,
 * object-store and Temporal addresses, `SAPI_METRICS_ADDRESS`, the trace collector's URL, `SAPI_INTERNAL_URLS`), which no input may reach.
 */
function inputPolicyOf(env: NodeJS.ProcessEnv, connections: Record<string, unknown>): InputPolicy {
  const own = [
    ...Object.values(connections).flatMap((c) => [(c as { url?: string }).url, (c as { importUrl?: string }).importUrl]),
    env.AWS_ENDPOINT_URL_S3,
    env.STORAGE_EMULATOR_HOST,
    env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    env.SAPI_METRICS_ADDRESS,
    env.SAPI_OTEL_ENDPOINT,
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    env.OTEL_EXPORTER_OTLP_ENDPOINT,
    ...listSetting(env.SAPI_INTERNAL_URLS),
  ];
  // unset or empty (Compose passes an empty `${VAR:-}` as null): any public URL
  const allowedUrls = listSetting(env.SAPI_ALLOWED_URLS);
  const policy: InputPolicy = {
    localRoots: listSetting(env.SAPI_LOCAL_ROOTS),
    ...(allowedUrls.length > 0 ? { allowedUrls } : {}),
    allowedNetworks: listSetting(env.SAPI_ALLOWED_NETWORKS),
    internalOrigins: [...new Set(own.flatMap((value) => (value ? [originKey(value)].filter((k): k is string => k !== undefined) : [])))],
    objectPrefixes: listSetting(env.SAPI_ALLOWED_OBJECT_PREFIXES),
  };
  const problems = policyProblems(policy);
  if (problems.length) throw new Error(`invalid configuration: ${problems.join('; ')}`);
  return policy;
}

/** `true`/`1`/`on`/`yes` and `false`/`0`/`off`/`no` (any case); unset or empty: false; anything else is left for zod to refuse. */
function booleanSetting(value: string | null | undefined): unknown {
  const normalized = (value ?? '').trim().toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(normalized)) return true;
  if (['', 'false', '0', 'off', 'no'].includes(normalized)) return false;
  return value;
}

/** The codec keys, or an `invalid configuration` error that names the variable (they are checked before zod). */
function codecKeysOf(env: NodeJS.ProcessEnv) {
  try {
    return loadCodecKeys(env);
  } catch (err) {
    throw new Error(`invalid configuration: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** The connection a workflow named, with a message that lists the configured ones when it is unknown. */
export function connectionFor(settings: Settings, name: string = DEFAULT_CONNECTION): ConnectionSettings {
  const connection = settings.connections[name];
  if (!connection) {
    const known = Object.keys(settings.connections);
    const hint = name === DEFAULT_CONNECTION ? 'set SAPI_URL and SAPI_TOKEN' : `set SAPI_${name.toUpperCase()}_URL and SAPI_${name.toUpperCase()}_TOKEN`;
    // never worth retrying: the worker's connections are fixed at its start (a typo in `--connection` would be
    // retried forever as a bare Error)
    throw new SapiInvalidInputError(
      `unknown Storage connection "${name}" (configured: ${known.length ? known.join(', ') : 'none'}); ${hint} in the worker's environment`,
      {
        connection: name,
        configured: known,
      },
    );
  }
  return connection;
}

/** The environment variable of a connection's setting: `SAPI_TOKEN` for `default`, `SAPI_<NAME>_TOKEN` otherwise. */
export function connectionVariable(connection: string, field: keyof ConnectionSettings): string {
  const prefix = connection === DEFAULT_CONNECTION ? 'SAPI_' : `SAPI_${connection.toUpperCase()}_`;
  return `${prefix}${field === 'importUrl' ? 'IMPORT_URL' : field === 'branchId' ? 'BRANCH_ID' : field.toUpperCase()}`;
}

function variableOf(path: PropertyKey[]): string {
  const [section, name, field] = path.map(String);
  if (section === 'connections' && name) return connectionVariable(name, (field ?? '') as keyof ConnectionSettings);
  const names: Record<string, string> = {
    'temporal.address': 'TEMPORAL_ADDRESS',
    'temporal.namespace': 'TEMPORAL_NAMESPACE',
    'temporal.taskQueue': 'TEMPORAL_TASK_QUEUE',
    'temporal.apiKey': 'TEMPORAL_API_KEY',
    'transfer.partSizeBytes': 'SAPI_PART_SIZE_MIB',
    'transfer.concurrency': 'SAPI_TRANSFER_CONCURRENCY',
    'worker.maxCachedWorkflows': 'SAPI_MAX_CACHED_WORKFLOWS',
    'worker.maxConcurrentActivities': 'SAPI_MAX_CONCURRENT_ACTIVITIES',
    'worker.maxConcurrentWorkflowTasks': 'SAPI_MAX_CONCURRENT_WORKFLOW_TASKS',
    's3.endpoint': 'AWS_ENDPOINT_URL_S3',
    'gcs.endpoint': 'STORAGE_EMULATOR_HOST',
    hostTaskQueue: 'SAPI_HOST_TASK_QUEUE',
    workDir: 'SAPI_WORK_DIR',
    receiptsTable: 'SAPI_RECEIPTS_TABLE',
    stagingUrl: 'SAPI_STAGING_URL',
    'observability.metricsAddress': 'SAPI_METRICS_ADDRESS',
    'observability.logFormat': 'SAPI_LOG_FORMAT',
    'observability.scheduleMetricsIntervalS': 'SAPI_SCHEDULE_METRICS_INTERVAL',
    'observability.tracing.endpoint': 'SAPI_OTEL_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT)',
    'observability.tracing.tracesUrl': 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    extractSecretEnvPrefix: 'SAPI_EXTRACT_SECRET_ENV_PREFIX',
    nexusService: 'SAPI_NEXUS_SERVICE',
    'deployment.name': 'SAPI_DEPLOYMENT_NAME',
    'deployment.buildId': 'SAPI_BUILD_ID',
    deployment: 'SAPI_BUILD_ID',
  };
  return names[path.map(String).join('.')] ?? path.map(String).join('.');
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
