// docs/configuration.md from the code that reads the settings, so the reference cannot drift from it:
// - which environment variables exist: every variable the modules of the published package read (`env.NAME`,
//   `env['NAME']`, a `const …_ENV = 'NAME'`, the `…_VARIABLES` lists, found by parsing src/), and those only the dev
//   kit reads (emulator, dev stack, demo);
// - their defaults: the exported DEFAULT_* constants of src/config;
// - the `Settings` object: the zod schema of src/config/index.ts, field by field with its doc comment.
// What each variable means is written below (VARIABLES); a variable the code reads that has no entry there is listed
// as undocumented, and an entry for a variable the code no longer reads is left out.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import {
  DEFAULT_EXTRACT_SECRET_ENV_PREFIX,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  DEFAULT_MAX_CONCURRENT_ACTIVITIES,
  DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS,
  DEFAULT_PART_SIZE_MIB,
  DEFAULT_TASK_QUEUE,
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_NAMESPACE,
  DEFAULT_TRANSFER_CONCURRENCY,
} from '../../src/config';
import { DEFAULT_RECONNECT_TIMEOUT_MS } from '../../src/cli/common';
import { DEFAULT_SCHEDULE_METRICS_INTERVAL_S } from '../../src/observability/schedule-metrics';

const repoRoot = resolve(__dirname, '..', '..');
const srcRoot = join(repoRoot, 'src');

type Group =
  | 'Storage connections'
  | 'Temporal'
  | 'Object storage'
  | 'Capacity and transfers'
  | 'Input policy'
  | 'Secrets and payload encryption'
  | 'Logs and metrics'
  | 'Nexus'
  | 'Versioning'
  | 'CLI'
  | 'Dev kit';
const GROUPS: Group[] = [
  'Storage connections',
  'Temporal',
  'Object storage',
  'Capacity and transfers',
  'Input policy',
  'Secrets and payload encryption',
  'Logs and metrics',
  'Nexus',
  'Versioning',
  'CLI',
  'Dev kit',
];

interface VariableDoc {
  group: Group;
  default: string;
  meaning: string;
  /**
   * For a name the code builds (`SAPI_<NAME>_URL`, `SAPI_${prefix}TOKEN`) or hands to a helper (`locate(…, 'SAPI_MINIO_BIN')`)
   * rather than reading it as `env.NAME`: who reads it. Such entries are listed whether or not the scan finds them.
   */
  readBy?: 'package' | 'dev kit';
}

/** What each variable means. Defaults come from the code's constants where it has one. */
const VARIABLES: Record<string, VariableDoc> = {
  SAPI_URL: { group: 'Storage connections', readBy: 'package', default: '—', meaning: 'Storage API base URL (no `/v2/storage`) of the `default` connection' },
  SAPI_TOKEN: {
    group: 'Storage connections',
    readBy: 'package',
    default: '—',
    meaning: "Storage API token of the `default` connection. Lives only in the worker's environment: workflows name a connection, never carry a token",
  },
  SAPI_IMPORT_URL: {
    group: 'Storage connections',
    readBy: 'package',
    default: 'from the index',
    meaning: 'importer service URL (`services[id=import]` of `GET /v2/storage` otherwise)',
  },
  SAPI_BRANCH_ID: {
    group: 'Storage connections',
    readBy: 'package',
    default: '—',
    meaning: 'dev branch: files, buckets, tables go through `/v2/storage/branch/{id}/…`',
  },
  'SAPI_<NAME>_URL, SAPI_<NAME>_TOKEN, SAPI_<NAME>_IMPORT_URL, SAPI_<NAME>_BRANCH_ID': {
    group: 'Storage connections',
    default: '—',
    readBy: 'package',
    meaning: 'more connections; a workflow picks one with `connection: "<name>"` (lower case)',
  },
  TEMPORAL_ADDRESS: { group: 'Temporal', default: DEFAULT_TEMPORAL_ADDRESS, meaning: 'Temporal frontend `host:port` (CLI: `--address` wins)' },
  TEMPORAL_NAMESPACE: { group: 'Temporal', default: DEFAULT_TEMPORAL_NAMESPACE, meaning: 'namespace (CLI: `--namespace` wins)' },
  TEMPORAL_API_KEY: { group: 'Temporal', default: '—', meaning: 'API key (Temporal Cloud); sent as a bearer token, turns TLS on' },
  TEMPORAL_TLS: {
    group: 'Temporal',
    default: 'off (on with any `TEMPORAL_TLS_*` or an API key)',
    meaning: '`true`/`1` forces TLS; `false` forces plain text (the dev stack sets it)',
  },
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: { group: 'Temporal', default: 'system roots', meaning: "CA that signed the server's certificate (a file)" },
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: { group: 'Temporal', default: 'system roots', meaning: 'the same, as PEM text' },
  TEMPORAL_TLS_CLIENT_CERT_PATH: { group: 'Temporal', default: '—', meaning: 'client certificate for mTLS (with its key: both or neither)' },
  TEMPORAL_TLS_CLIENT_CERT_DATA: { group: 'Temporal', default: '—', meaning: 'the same, as PEM text' },
  TEMPORAL_TLS_CLIENT_KEY_PATH: { group: 'Temporal', default: '—', meaning: 'client key for mTLS (with its certificate: both or neither)' },
  TEMPORAL_TLS_CLIENT_KEY_DATA: { group: 'Temporal', default: '—', meaning: 'the same, as PEM text' },
  TEMPORAL_TLS_SERVER_NAME: { group: 'Temporal', default: 'host of the address', meaning: "name to check the server's certificate against" },
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: {
    group: 'Temporal',
    default: 'false',
    meaning: '`true`: the CLI accepts a server certificate issued for another name (the CA is still checked); testing only, the worker refuses it',
  },
  'TEMPORAL_GRPC_META_<NAME>': { group: 'Temporal', default: '—', readBy: 'package', meaning: 'extra gRPC header `<name>`' },
  TEMPORAL_CONFIG_FILE: {
    group: 'Temporal',
    default: '`~/.config/temporalio/temporal.toml`',
    meaning: "Temporal's standard TOML config file (a missing default file is fine; a file named here must exist)",
  },
  TEMPORAL_PROFILE: { group: 'Temporal', default: 'default', meaning: 'profile of that file; the variables above override its values' },
  TEMPORAL_ENV: {
    group: 'Temporal',
    default: 'default (when the file has it)',
    meaning: 'CLI: preset of `temporal env set` (`~/.config/temporalio/temporal.yaml`) giving defaults to the connection flags, as `--env` does',
  },
  TEMPORAL_TASK_QUEUE: { group: 'Temporal', default: DEFAULT_TASK_QUEUE, meaning: 'queue the worker polls and the CLI submits to (CLI: `--task-queue` wins)' },
  SAPI_HOST_TASK_QUEUE: {
    group: 'Temporal',
    default: '—',
    meaning: 'an extra queue this worker polls, for transfers of files on its own disk (start workflows with `transferTaskQueue`)',
  },
  AWS_ENDPOINT_URL_S3: {
    group: 'Object storage',
    default: '—',
    meaning: 'S3 endpoint for S3-compatible stores (MinIO; path-style). Unset against the real service',
  },
  AWS_REGION: { group: 'Object storage', default: 'us-east-1', meaning: 'region when the file resource names none' },
  AWS_DEFAULT_REGION: { group: 'Object storage', default: '—', meaning: 'read when `AWS_REGION` is unset' },
  AWS_ACCESS_KEY_ID: {
    group: 'Object storage',
    default: 'default AWS chain',
    meaning: "the worker's own key, for `s3://` sources/destinations and extraction staging",
  },
  AWS_SECRET_ACCESS_KEY: { group: 'Object storage', default: 'default AWS chain', meaning: 'its secret' },
  STORAGE_EMULATOR_HOST: {
    group: 'Object storage',
    default: '— (`https://storage.googleapis.com`)',
    meaning: "Google Cloud Storage endpoint when it is an emulator (fake-gcs-server), as Google's own clients read it",
  },
  SAPI_PART_SIZE_MIB: {
    group: 'Capacity and transfers',
    default: `${DEFAULT_PART_SIZE_MIB}`,
    meaning:
      'multipart part size in MiB (5–5120; grown when a file would need more than 10,000 parts); an upload holds part size × (concurrency + 1) in buffers, reused part after part',
  },
  SAPI_TRANSFER_CONCURRENCY: {
    group: 'Capacity and transfers',
    default: `${DEFAULT_TRANSFER_CONCURRENCY}`,
    meaning: 'parts (upload) / slices (download) in flight (1–64)',
  },
  SAPI_MAX_CACHED_WORKFLOWS: {
    group: 'Capacity and transfers',
    default: `${DEFAULT_MAX_CACHED_WORKFLOWS}`,
    meaning:
      "workflow runs kept in the worker's memory between their tasks (`0`: none); a run out of the cache is replayed from its history on its next task (CPU). The SDK's default grows with the heap limit (~2,300 with 16 GB of RAM); 1,000 cached import runs measured ~56 MB",
  },
  SAPI_MAX_CONCURRENT_ACTIVITIES: {
    group: 'Capacity and transfers',
    default: `${DEFAULT_MAX_CONCURRENT_ACTIVITIES}`,
    meaning:
      'activities one worker runs at once; a transfer of a large file holds part size × (transfer concurrency + 1) in buffers, a small file its own size',
  },
  SAPI_MAX_CONCURRENT_WORKFLOW_TASKS: {
    group: 'Capacity and transfers',
    default: `${DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS}`,
    meaning: 'workflow tasks one worker runs at once (at least 2, at most the cache size)',
  },
  SAPI_WORK_DIR: { group: 'Capacity and transfers', default: '`<tmp>/sapi-temporal`', meaning: 'temporary files (slice downloads)' },
  SAPI_STAGING_URL: {
    group: 'Capacity and transfers',
    default: '`<work dir>/staging`',
    meaning: 'where extraction stages page records: `s3://bucket/prefix` (any worker can resume) or a folder',
  },
  SAPI_RECEIPTS_TABLE: {
    group: 'Capacity and transfers',
    default: '`in.c-sapi-temporal.receipts`',
    meaning:
      'the Storage table load receipts go to when a run names none (one row per table load, [using.md](using.md#receipts)); `off`: none unless a run names a table',
  },
  SAPI_LOCAL_ROOTS: {
    group: 'Input policy',
    default: 'none: no local path',
    meaning:
      'folders local sources and export destinations must be under ([security.md](security.md#who-can-start-a-workflow-does-not-own-the-worker-the-input-policy))',
  },
  SAPI_ALLOWED_URLS: { group: 'Input policy', default: 'any public URL', meaning: 'URL prefixes or hosts `http(s)://` sources and extracted APIs must match' },
  SAPI_ALLOWED_NETWORKS: { group: 'Input policy', default: 'none', meaning: 'CIDRs reachable although refused by default (loopback, private, link-local, …)' },
  SAPI_ALLOWED_OBJECT_PREFIXES: {
    group: 'Input policy',
    default: 'none: no `s3://` input',
    meaning: "`s3://bucket/prefix/` the worker's own keys may read and write",
  },
  SAPI_INTERNAL_URLS: { group: 'Input policy', default: '—', meaning: "more of the worker's own services to refuse" },
  'SAPI_SECRET_<NAME>_HOSTS': {
    group: 'Input policy',
    default: 'none: the secret is sent nowhere',
    readBy: 'package',
    meaning: 'hosts `${env:SAPI_SECRET_<NAME>}` may be sent to',
  },
  SAPI_EXTRACT_SECRET_ENV_PREFIX: {
    group: 'Secrets and payload encryption',
    default: DEFAULT_EXTRACT_SECRET_ENV_PREFIX,
    meaning: 'worker variables an extractor configuration may reference as `${env:NAME}` ([security.md](security.md#extractor-secrets))',
  },
  SAPI_CODEC_KEYS: {
    group: 'Secrets and payload encryption',
    default: '— (codec off)',
    meaning:
      'payload encryption keys `id:base64key,…` (first encrypts, all decrypt); the same on workers, CLI and clients ([security.md](security.md#payload-encryption-codec))',
  },
  SAPI_CODEC_KEY_FILE: {
    group: 'Secrets and payload encryption',
    default: '— (codec off)',
    meaning: 'a file with one `id:base64key` a line (`#` comments), instead of `SAPI_CODEC_KEYS`',
  },
  SAPI_CODEC_SERVER_TOKEN: {
    group: 'Secrets and payload encryption',
    default: '—',
    meaning: "the codec server's bearer token (`sapi-temporal dev` generates one when unset)",
  },
  SAPI_CODEC_SERVER_CORS_ORIGINS: {
    group: 'Secrets and payload encryption',
    default: '—',
    meaning: 'UI origins the codec server allows (comma-separated; `--cors-origin` adds more)',
  },
  SAPI_METRICS_ADDRESS: {
    group: 'Logs and metrics',
    default: '— (off)',
    meaning: "`host:port` of the worker's Prometheus endpoint ([operating.md](operating.md#metrics))",
  },
  SAPI_LOG_FORMAT: { group: 'Logs and metrics', default: 'text', meaning: '`json`: one JSON object a line' },
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: {
    group: 'Logs and metrics',
    readBy: 'package',
    default: '`true` (set by the worker, the plugin and the CLI unless set)',
    meaning: "the AWS SDK's own: `true` keeps its notice that its releases after January 2027 need Node 22 off; any other value lets it print",
  },
  SAPI_SCHEDULE_METRICS_INTERVAL: {
    group: 'Logs and metrics',
    default: `${DEFAULT_SCHEDULE_METRICS_INTERVAL_S} (seconds)`,
    meaning:
      "with a metrics endpoint: how often the worker reads the skip counts of the schedules that start the plugin's workflows on its task queues, for `sapi_schedule_runs_skipped_total`; `0`: never ([operating.md](operating.md#metrics))",
  },
  SAPI_OTEL_ENDPOINT: {
    group: 'Logs and metrics',
    default: '— (no tracing)',
    meaning:
      "OTLP/HTTP base URL of a trace collector (`http://otel-collector:4318`; spans to `<url>/v1/traces`), for the worker and the CLI's transfer commands ([operating.md](operating.md#traces))",
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    group: 'Logs and metrics',
    readBy: 'package',
    default: '—',
    meaning: 'the standard variable, read when `SAPI_OTEL_ENDPOINT` is unset (also `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, a full URL)',
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    group: 'Logs and metrics',
    readBy: 'package',
    default: '—',
    meaning: 'the full traces URL, read when `SAPI_OTEL_ENDPOINT` is unset',
  },
  OTEL_SERVICE_NAME: {
    group: 'Logs and metrics',
    readBy: 'package',
    default: '`sapi-temporal-worker` / `sapi-temporal-cli`',
    meaning: '`service.name` of the spans',
  },
  OTEL_SDK_DISABLED: {
    group: 'Logs and metrics',
    readBy: 'package',
    default: 'false',
    meaning: '`true`: no tracing whatever the endpoint (so does `OTEL_TRACES_EXPORTER=none`)',
  },
  OTEL_TRACES_EXPORTER: { group: 'Logs and metrics', readBy: 'package', default: '—', meaning: '`none`: no tracing' },
  SAPI_LOG_LEVEL: {
    group: 'Logs and metrics',
    default: 'INFO (WARN in the demo)',
    meaning: 'Temporal worker runtime log level: TRACE, DEBUG, INFO, WARN, ERROR',
  },
  SAPI_DEPLOYMENT_NAME: {
    group: 'Versioning',
    default: '(unset: unversioned)',
    meaning:
      'Worker Deployment Versioning: the worker polls as version `<name>:<build id>`, runs stay on the version that started them, extractions move at a continue-as-new ([deploying.md](deploying.md#versioned-deploys))',
  },
  SAPI_BUILD_ID: {
    group: 'Versioning',
    default: '`<package version>+<bundle hash>`',
    meaning: "the build id of this worker's deployment version (needs `SAPI_DEPLOYMENT_NAME`); `+traced` is appended with tracing on",
  },
  SAPI_NEXUS_SERVICE: {
    group: 'Nexus',
    default: 'false',
    meaning: '`true`: the worker also serves the Nexus service `sapi-temporal` ([deploying.md](deploying.md#another-teams-namespace-the-nexus-service))',
  },
  SAPI_CLI_RECONNECT_TIMEOUT: {
    group: 'CLI',
    default: `${DEFAULT_RECONNECT_TIMEOUT_MS / 60_000}m`,
    meaning: 'default of `--reconnect-timeout` (`90s`, `10m`, `1h` or bare seconds)',
  },
  SAPI_EMULATOR_ADMIN_TOKEN: { group: 'Dev kit', default: 'generated and printed', meaning: "the emulator's admin secret (`/_emulator/*` endpoints)" },
  SAPI_EMULATOR_BUCKET: { group: 'Dev kit', default: 'sapi-files', meaning: 'the S3 bucket the emulator keeps its files in' },
  SAPI_EMULATOR_OPTIONS: {
    group: 'Dev kit',
    default: '—',
    meaning: "the emulator's options (JSON) handed to its own process by the dev stack (`src/emulator/child.ts`), not set by hand",
  },
  SAPI_CODEC_SERVER_URL: {
    group: 'Dev kit',
    default: '—',
    meaning: "the codec server's address, written to `.env.dev` by the dev stack when it runs one (for `temporal workflow show --codec-endpoint`)",
  },
  SAPI_TOOLS_DIR: { group: 'Dev kit', readBy: 'dev kit', default: '`.tools`', meaning: 'where `make` installs the dev tools' },
  SAPI_TEMPORAL_BIN: { group: 'Dev kit', readBy: 'dev kit', default: 'found or installed', meaning: 'a Temporal CLI binary of your own' },
  SAPI_TEST_SERVER_BIN: {
    group: 'Dev kit',
    readBy: 'dev kit',
    default: 'found or installed',
    meaning: "a time-skipping test server binary of your own (the Java SDK's `temporal-test-server`, for the workflow tier)",
  },
  SAPI_MINIO_BIN: { group: 'Dev kit', readBy: 'dev kit', default: 'found or installed', meaning: 'a MinIO binary of your own' },
  SAPI_AZURITE_BIN: { group: 'Dev kit', readBy: 'dev kit', default: 'found or installed', meaning: 'an Azurite binary of your own' },
  SAPI_FAKE_GCS_BIN: {
    group: 'Dev kit',
    readBy: 'dev kit',
    default: 'found or installed',
    meaning: 'a fake-gcs-server binary of your own (an unpatched one breaks resumed GCS uploads)',
  },
  SAPI_MC_BIN: {
    group: 'Dev kit',
    readBy: 'dev kit',
    default: '`.tools/bin/mc` (built by `make bench`)',
    meaning:
      "an mc (MinIO's client) binary of your own: the baseline of the bench's upload and download; never taken from PATH (`mc` there may be Midnight Commander)",
  },
  TEMPORAL_UI_URL: { group: 'Dev kit', default: '—', meaning: "the Temporal UI address, in the dev stack's environment (`.env.dev`), not read from yours" },
};

/** Names that look like settings but are not read as variables of ours (prefixes, patterns' parts). */
const VARIABLE_NAME = /^(?:SAPI|TEMPORAL|AWS|STORAGE_EMULATOR)_[A-Z0-9_]*[A-Z0-9]$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
}

/** The modules the published package is built from: its tsconfig's files and what they import (not `require`). */
function packageModules(): Set<string> {
  const config = ts.readConfigFile(join(repoRoot, 'packages', 'sapi-temporal', 'tsconfig.json'), ts.sys.readFile).config as { files: string[] };
  const pending = config.files.map((file) => resolve(repoRoot, 'packages', 'sapi-temporal', file));
  const seen = new Set<string>();
  while (pending.length) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const visit = (node: ts.Node): void => {
      let specifier: ts.Expression | undefined;
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) specifier = node.moduleSpecifier;
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0];
      if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
        const base = resolve(dirname(file), specifier.text);
        const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => ts.sys.fileExists(candidate));
        if (target) pending.push(target);
      }
      ts.forEachChild(node, visit);
    };
    visit(parse(file));
  }
  return seen;
}

/** The variables a file reads: `env.NAME`, `env['NAME']`, `const X_ENV = 'NAME'`, and the `…_VARIABLES` lists. */
function variablesReadBy(file: string): Set<string> {
  const found = new Set<string>();
  const add = (name: string) => VARIABLE_NAME.test(name) && found.add(name);
  const isEnv = (node: ts.Expression) => (ts.isIdentifier(node) && node.text === 'env') || (ts.isPropertyAccessExpression(node) && node.name.text === 'env');
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && isEnv(node.expression)) add(node.name.text);
    if (ts.isElementAccessExpression(node) && isEnv(node.expression) && ts.isStringLiteralLike(node.argumentExpression)) add(node.argumentExpression.text);
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const init = ts.isAsExpression(node.initializer) ? node.initializer.expression : node.initializer;
      if (/_ENV$/.test(node.name.text) && ts.isStringLiteralLike(init)) add(init.text);
      if (/_VARIABLES$/.test(node.name.text) && ts.isArrayLiteralExpression(init))
        for (const item of init.elements) if (ts.isStringLiteralLike(item)) add(item.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(file));
  return found;
}

/** Every variable the code reads, and whether the published package reads it (else only the dev kit does). */
export function variablesInCode(): Map<string, 'package' | 'dev kit'> {
  const inPackage = packageModules();
  const found = new Map<string, 'package' | 'dev kit'>();
  for (const file of sourceFiles(srcRoot).sort()) {
    for (const name of variablesReadBy(file)) {
      if (inPackage.has(file)) found.set(name, 'package');
      else if (!found.has(name)) found.set(name, 'dev kit');
    }
  }
  return found;
}

/** Text for a markdown table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}

function code(text: string): string {
  return /^[—`]|^(?:none|any|from|off|system|host|default AWS|generated|found)\b/.test(text) || text.includes(' ') ? text : `\`${text}\``;
}

/** The zod object literal of `settingsSchema` in src/config/index.ts, as rows: path, schema, doc comment. */
function settingsSchemaRows(): { path: string; schema: string; doc: string }[] {
  const file = parse(join(srcRoot, 'config', 'index.ts'));
  let root: ts.ObjectLiteralExpression | undefined;
  const find = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.name.text === 'settingsSchema' &&
      node.initializer &&
      ts.isCallExpression(node.initializer)
    ) {
      const [arg] = node.initializer.arguments;
      if (arg && ts.isObjectLiteralExpression(arg)) root = arg;
    }
    ts.forEachChild(node, find);
  };
  find(file);
  if (!root) throw new Error('src/config/index.ts: settingsSchema = z.object({…}) not found: update scripts/gen-docs/configuration.ts');
  const rows: { path: string; schema: string; doc: string }[] = [];
  const walk = (object: ts.ObjectLiteralExpression, prefix: string): void => {
    for (const property of object.properties) {
      if (!ts.isPropertyAssignment(property)) continue;
      const path = `${prefix}${property.name.getText(file)}`;
      const doc = ts
        .getJSDocCommentsAndTags(property)
        .map((comment) => (typeof comment.comment === 'string' ? comment.comment : (ts.getTextOfJSDocComment(comment.comment) ?? '')))
        .join(' ');
      const init = property.initializer;
      const nested =
        ts.isCallExpression(init) && init.expression.getText(file) === 'z.object' && init.arguments[0] && ts.isObjectLiteralExpression(init.arguments[0])
          ? init.arguments[0]
          : undefined;
      if (nested) {
        rows.push({ path, schema: 'object', doc });
        walk(nested, `${path}.`);
      } else {
        rows.push({
          path,
          schema: init
            .getText(file)
            .replace(/\s+/g, ' ')
            .replace(/\{ message: '[^']*' \}|'[^']*'/g, (m) => (m.startsWith('{') ? '…' : m)),
          doc,
        });
      }
    }
  };
  walk(root, '');
  return rows;
}

/** The markdown of docs/configuration.md; `warnings` gets what the generator could not document. */
export function renderConfigurationReference(warnings: string[] = []): string {
  const inCode = variablesInCode();
  const out: string[] = [
    '# Configuration reference',
    '',
    '<!-- Generated by `npm run docs` (scripts/gen-docs.ts) from the code that reads the settings (src/config and the',
    '     modules that read the environment) and the settings schema. Do not edit: test/unit/docs/generated-docs.test.ts',
    '     fails when this file differs from what the generator writes; meanings live in scripts/gen-docs/configuration.ts. -->',
    '',
    'The worker reads its settings once at start from environment variables (`loadSettings()` in `src/config`:',
    'validated with zod, frozen; one error lists every invalid variable); the CLI reads only the Temporal ones (and',
    'its own). Your own worker passes the same `Settings` to `new SapiPlugin({ settings })`, from `loadSettings()` or',
    '`loadSettings({ ...env })`. Temporal connection settings follow the Temporal CLI and SDKs (`@temporalio/envconfig`):',
    'see [deploying.md](deploying.md#connecting-to-temporal-cloud-or-a-secured-cluster) for Temporal Cloud, mTLS and',
    'profiles. The `sapi-temporal` command also sets three process settings unless the environment does:',
    '`MALLOC_ARENA_MAX=2`, `MALLOC_MMAP_THRESHOLD_=131072` and `--max-semi-space-size=8` in `NODE_OPTIONS`',
    '([deploying.md](deploying.md#scaling-out) says why).',
    '',
    'The "read by" column says where: `package` is the published package (worker, plugin, CLI), `dev kit` the',
    'emulator, dev stack and demo of this repository.',
    '',
  ];
  const documented = new Map<string, VariableDoc>();
  for (const [name, doc] of Object.entries(VARIABLES)) {
    if (doc.readBy || inCode.has(name)) documented.set(name, doc);
    else warnings.push(`${name} is described in scripts/gen-docs/configuration.ts but no code reads it: left out`);
  }
  const undocumented = [...inCode.keys()].filter((name) => !(name in VARIABLES)).sort();
  for (const name of undocumented) warnings.push(`${name} is read by the code but has no meaning in scripts/gen-docs/configuration.ts`);
  for (const group of GROUPS) {
    const rows = [...documented].filter(([, doc]) => doc.group === group);
    if (!rows.length) continue;
    out.push(`## ${group}`, '', '| variable | default | meaning | read by |', '|---|---|---|---|');
    for (const [name, doc] of rows) {
      const names = name
        .split(', ')
        .map((part) => `\`${part}\``)
        .join(', ');
      out.push(`| ${names} | ${cell(code(doc.default))} | ${cell(doc.meaning)} | ${inCode.get(name) ?? doc.readBy} |`);
    }
    out.push('');
  }
  if (undocumented.length) {
    out.push('## Not described yet', '', '| variable | read by |', '|---|---|');
    for (const name of undocumented) out.push(`| \`${name}\` | ${inCode.get(name)} |`);
    out.push('');
  }
  out.push(
    '## The `Settings` object',
    '',
    'What `loadSettings()` returns and `SapiPlugin` takes, from the zod schema in `src/config/index.ts` (field, schema,',
    'comment). Sizes are bytes here (`SAPI_PART_SIZE_MIB` × 1 MiB).',
    '',
    '| field | schema | meaning |',
    '|---|---|---|',
  );
  for (const row of settingsSchemaRows())
    out.push(`| \`${row.path}\` | ${row.schema === 'object' ? 'object' : `\`${cell(row.schema)}\``} | ${cell(row.doc)} |`);
  return `${out.join('\n').trimEnd()}\n`;
}
