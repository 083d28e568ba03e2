/**
 * The Storage API emulator: one function, {@link createEmulator}, used by tests, the CLI and the dev stack.
 * Files live in MinIO (temporary credentials from MinIO STS), Azurite or fake-gcs-server, tables in DuckDB, jobs and
 * file/bucket records in a state log under `dataDir`, so a restart on the same `dataDir` keeps everything and resumes
 * unfinished jobs; or, with store `memory`, all of it in the process's memory.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { buildApp } from './app';
import { type EmulatorContext, type IdKind } from './context';
import { EventLog } from './events';
import { recordJobEvent } from './job-events';
import { runBranchCreate, runBranchDelete } from './jobs/branch-jobs';
import { MetadataStore } from './metadata';
import { DocLog } from './doc-log';
import { Faults } from './faults';
import { JobRunner } from './jobs/job-runner';
import { runTableExport } from './jobs/table-export';
import {
  runColumnAdd,
  runColumnDefinitionUpdate,
  runColumnDelete,
  runDefinitionUpdate,
  runPrimaryKeyAdd,
  runPrimaryKeyDelete,
  runRowsDelete,
  runSnapshotCreate,
  runTableCreateFromSnapshot,
  runTableDrop,
  runTablePull,
  runTableUpdate,
} from './jobs/table-change';
import { runTableCreate, runTableDefinitionCreate, runTableImport } from './jobs/table-load';
import { AbsObjectStore } from './abs-store';
import { GcsObjectStore } from './gcs-store';
import { MemoryObjectStore } from './memory-store';
import { S3ObjectStore, type ObjectStore } from './object-store';
import {
  DEFAULT_CREDENTIALS_TTL_SECONDS,
  DEFAULT_DUCKDB_COMPRESS_STRINGS,
  DEFAULT_DUCKDB_MEMORY_LIMIT,
  DEFAULT_EMULATOR_HOST,
  DEFAULT_EMULATOR_STORE,
  DEFAULT_JOB_PROCESSING_MS,
  DEFAULT_JOB_WAITING_MS,
  DEFAULT_MAX_TABLE_COLUMNS,
  DEFAULT_PRESIGN_TTL_SECONDS,
  DEFAULT_PROJECT_ID,
  DEFAULT_REQUEST_LOG_LIMIT,
  DEFAULT_SLICE_SIZE_BYTES,
  DEFAULT_SLICED_EXPORTS,
  DEFAULT_STACK_REGION,
  DEFAULT_TABLE_BACKEND,
  type EmulatorHandle,
  type EmulatorOptions,
  IMPORTER_PREFIX,
} from './options';
import { RequestLog } from './request-log';
import { TableStore } from './table-store';
import { TokenStore } from './tokens';

export * from './options';
export type { CredentialsExpiryRule, FaultAction, FaultRule, FaultsController, HeldJob, JobFailureRule, JobHoldRule, JobSlowdownRule } from './faults';
export type { RequestLogEntry } from './request-log';
export { TABLE_EXPORT_TAG } from './jobs/table-export';

const optionsSchema = z.object({
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  dataDir: z.string().min(1),
  backend: z.enum(['aws', 'azure', 'gcp']).optional(),
  store: z.enum(['server', 'memory']).optional(),
  tableBackend: z.enum(['snowflake', 'bigquery']).optional(),
  s3: z
    .object({
      endpoint: z.string().url(),
      region: z.string().min(1),
      accessKeyId: z.string().min(1),
      secretAccessKey: z.string().min(1),
      bucket: z.string().min(3),
    })
    .optional(),
  gcs: z
    .object({
      endpoint: z.string().url(),
      projectId: z.string().min(1),
      bucket: z.string().regex(/^[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]$/, 'a bucket name: 3-63 lowercase letters, digits, dashes, underscores and dots'),
      publicEndpoint: z.string().url().optional(),
    })
    .optional(),
  abs: z
    .object({
      blobEndpoint: z.string().url(),
      accountName: z.string().min(1),
      accountKey: z.string().min(1),
      publicBlobEndpoint: z.string().url().optional(),
      container: z.string().regex(/^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$/, 'a container name: 3-63 lowercase letters, digits and single dashes'),
    })
    .optional(),
  tokens: z
    .array(
      z.object({
        token: z.string().min(1),
        id: z.number().int().positive().optional(),
        description: z.string().optional(),
        isMasterToken: z.boolean().optional(),
        canManageBuckets: z.boolean().optional(),
        canReadAllFileUploads: z.boolean().optional(),
        bucketPermissions: z.record(z.string().min(1), z.enum(['read', 'write', 'manage'])).optional(),
      }),
    )
    .min(1),
  jobDelays: z.object({ waitingMs: z.number().nonnegative().optional(), processingMs: z.number().nonnegative().optional() }).optional(),
  sliceSizeBytes: z.number().int().positive().optional(),
  slicedExports: z.boolean().optional(),
  projectId: z.number().int().positive().optional(),
  region: z.string().min(1).optional(),
  adminEnabled: z.boolean().optional(),
  adminToken: z.string().min(1).optional(),
  credentialsTtlSeconds: z.number().int().min(900).max(43_200).optional(),
  requestLogLimit: z.number().int().positive().optional(),
  publicUrl: z.string().url().optional(),
  maxTableColumns: z.number().int().positive().optional(),
  duckdbMemoryLimit: z
    .string()
    .regex(/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i)
    .optional(),
});

/**
 * The object store: the emulator's memory with store `memory`; else the backend's server: `backend`, else `azure`
 * when only `abs` is configured, `gcp` when only `gcs`, else `aws`.
 */
function createObjectStore(options: EmulatorOptions, baseUrl: () => string): ObjectStore {
  if ((options.store ?? DEFAULT_EMULATOR_STORE) === 'memory') {
    const given = (['s3', 'abs', 'gcs'] as const).filter((name) => options[name] !== undefined);
    if (given.length > 0)
      throw new Error(`invalid emulator options: store "memory" keeps files in the emulator's memory; drop ${given.join(', ')} or use store "server"`);
    if (options.backend !== undefined && options.backend !== 'aws') {
      throw new Error(
        `invalid emulator options: store "memory" answers as an aws stack; backend "${options.backend}" needs store "server" and its object-storage server`,
      );
    }
    return new MemoryObjectStore(baseUrl, DEFAULT_PRESIGN_TTL_SECONDS);
  }
  const backend = options.backend ?? (options.abs && !options.s3 ? 'azure' : options.gcs && !options.s3 ? 'gcp' : 'aws');
  const ttl = options.credentialsTtlSeconds ?? DEFAULT_CREDENTIALS_TTL_SECONDS;
  if (backend === 'gcp') {
    if (!options.gcs) throw new Error('invalid emulator options: backend "gcp" needs gcs: {endpoint, projectId, bucket}');
    return new GcsObjectStore(options.gcs, ttl);
  }
  if (backend === 'azure') {
    if (!options.abs) throw new Error('invalid emulator options: backend "azure" needs abs: {blobEndpoint, accountName, accountKey, container}');
    return new AbsObjectStore(options.abs, ttl, DEFAULT_PRESIGN_TTL_SECONDS);
  }
  if (!options.s3) throw new Error('invalid emulator options: backend "aws" needs s3: {endpoint, region, accessKeyId, secretAccessKey, bucket}');
  return new S3ObjectStore(options.s3, ttl, DEFAULT_PRESIGN_TTL_SECONDS);
}

/**
 * Starts the emulator and resolves once it listens and unfinished jobs from a previous run on the same `dataDir`
 * are queued again.
 */
export async function createEmulator(options: EmulatorOptions): Promise<EmulatorHandle> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new Error(`invalid emulator options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const host = options.host ?? DEFAULT_EMULATOR_HOST;
  mkdirSync(options.dataDir, { recursive: true });
  const tmpDir = join(options.dataDir, 'tmp');
  rmSync(tmpDir, { recursive: true, force: true });
  mkdirSync(tmpDir, { recursive: true });

  const inMemory = (options.store ?? DEFAULT_EMULATOR_STORE) === 'memory';
  let baseUrl = '';
  const objects = createObjectStore(options, () => baseUrl);
  await objects.ensureBucket();
  const state = new DocLog(inMemory ? undefined : join(options.dataDir, 'state.jsonl'));
  let tables: TableStore;
  try {
    tables = await TableStore.open(inMemory ? ':memory:' : join(options.dataDir, 'tables.duckdb'), {
      memoryLimit: options.duckdbMemoryLimit ?? DEFAULT_DUCKDB_MEMORY_LIMIT,
      tempDirectory: join(tmpDir, 'duckdb'),
      compressStrings: options.duckdbCompressStrings ?? DEFAULT_DUCKDB_COMPRESS_STRINGS,
    });
  } catch (error) {
    state.close();
    objects.destroy();
    throw error;
  }
  const tokens = new TokenStore(state, options.tokens, options.projectId ?? DEFAULT_PROJECT_ID);
  const faults = new Faults();
  const requestLog = new RequestLog(options.requestLogLimit ?? DEFAULT_REQUEST_LOG_LIMIT);

  const sequences = new Map<string, number>();
  const nextId = (kind: IdKind): number => {
    let current = sequences.get(kind);
    if (current === undefined) {
      const stored = state.get<number>('seq', kind) ?? 0;
      // The default branch is id 1; created branches start at 2.
      const maxExisting = state.all<{ id: number | string }>(kind).reduce((m, d) => Math.max(m, Number(d.id)), kind === 'branch' ? 1 : 0);
      current = Math.max(stored, maxExisting);
    }
    const next = current + 1;
    sequences.set(kind, next);
    state.put('seq', kind, next);
    return next;
  };

  const ctx = {
    baseUrl: '',
    importUrl: '',
    projectId: options.projectId ?? DEFAULT_PROJECT_ID,
    region: options.region ?? objects.region ?? DEFAULT_STACK_REGION,
    tableBackend: options.tableBackend ?? DEFAULT_TABLE_BACKEND,
    sliceSizeBytes: options.sliceSizeBytes ?? DEFAULT_SLICE_SIZE_BYTES,
    slicedExports: options.slicedExports ?? DEFAULT_SLICED_EXPORTS,
    maxTableColumns: options.maxTableColumns ?? DEFAULT_MAX_TABLE_COLUMNS,
    tmpDir,
    objects,
    state,
    tables,
    faults,
    tokens,
    metadata: new MetadataStore(state, () => nextId('metadata')),
    events: new EventLog(state, () => nextId('event')),
    nextId,
  } as Omit<EmulatorContext, 'jobs'> as EmulatorContext;
  ctx.jobs = new JobRunner(
    state,
    tables,
    faults,
    { waitingMs: options.jobDelays?.waitingMs ?? DEFAULT_JOB_WAITING_MS, processingMs: options.jobDelays?.processingMs ?? DEFAULT_JOB_PROCESSING_MS },
    () => nextId('job'),
  );
  ctx.jobs.register('tableCreate', (job) =>
    (job.operationParams.source as { type?: string } | undefined)?.type === 'snapshot' ? runTableCreateFromSnapshot(ctx, job) : runTableCreate(ctx, job),
  );
  ctx.jobs.register('tableImport', (job) => runTableImport(ctx, job));
  ctx.jobs.register('tableExport', (job) => runTableExport(ctx, job));
  ctx.jobs.register('tableDefinitionCreate', (job) => runTableDefinitionCreate(ctx, job));
  ctx.jobs.register('tableDrop', (job) => runTableDrop(ctx, job));
  ctx.jobs.register('tableUpdate', (job) => runTableUpdate(ctx, job));
  ctx.jobs.register('tableColumnAdd', (job) => runColumnAdd(ctx, job));
  ctx.jobs.register('tableColumnDelete', (job) => runColumnDelete(ctx, job));
  ctx.jobs.register('tableRowsDelete', (job) => runRowsDelete(ctx, job));
  ctx.jobs.register('tablePrimaryKeyAdd', (job) => runPrimaryKeyAdd(ctx, job));
  ctx.jobs.register('tablePrimaryKeyDelete', (job) => runPrimaryKeyDelete(ctx, job));
  ctx.jobs.register('tableDefinitionUpdate', (job) => runDefinitionUpdate(ctx, job));
  ctx.jobs.register('tableColumnDefinitionUpdate', (job) => runColumnDefinitionUpdate(ctx, job));
  ctx.jobs.register('tableSnapshotCreate', (job) => runSnapshotCreate(ctx, job));
  ctx.jobs.register('devBranchTablePull', (job) => runTablePull(ctx, job));
  ctx.jobs.register('devBranchCreate', (job) => runBranchCreate(ctx, job));
  ctx.jobs.register('devBranchDelete', (job) => runBranchDelete(ctx, job));
  ctx.jobs.onFinish((job) => recordJobEvent(ctx, job));
  ctx.jobs.register('bucketDelete', async (job) => {
    const bucketId = String(job.operationParams.bucketId);
    await tables.dropSchema(bucketId);
    state.delete('bucket', bucketId);
    tokens.revokeBucket(bucketId);
    ctx.metadata.deleteObject('bucket', bucketId);
    return [];
  });

  const app = await buildApp(ctx, { adminEnabled: options.adminEnabled ?? true, adminToken: options.adminToken, requestLog });
  try {
    await app.listen({ port: options.port ?? 0, host });
  } catch (error) {
    tables.close();
    state.close();
    objects.destroy();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const listenUrl = `http://${urlHost}:${port}`;
  ctx.baseUrl = (options.publicUrl ?? listenUrl).replace(/\/$/, '');
  baseUrl = ctx.baseUrl;
  ctx.importUrl = `${ctx.baseUrl}${IMPORTER_PREFIX}`;
  ctx.jobs.resume();

  let closed: Promise<void> | undefined;
  return {
    url: ctx.baseUrl,
    listenUrl,
    importUrl: ctx.importUrl,
    token: options.tokens[0]!.token,
    tokens: options.tokens.map((t) => t.token),
    faults,
    requests: requestLog.entries,
    readTable: (tableId) => tables.read(tableId),
    idle: () => ctx.jobs.idle(),
    close: () => {
      closed ??= (async () => {
        await app.close();
        await ctx.jobs.close();
        tables.close();
        state.close();
        objects.destroy();
      })();
      return closed;
    },
  };
}
