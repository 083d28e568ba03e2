import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  continueAsNew,
  proxyActivities,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { PreparedUpload, SapiActivities } from '../activities';
import { DEFAULT_JOB_DEADLINE_MS, endedWell, waitForJob, type AwaitJob } from './polling';
import { SHORT_PATH_JOB_WAIT_MS } from '../contracts/poll-schedule';
import { activityOptions, awaitJobOptions, outageBudget, pollOptions, shortTransferOptions, transferOptions } from './options';
import { runTransfer, type TransferControl } from './transfer-run';
import type { RunView } from './run-view';
import {
  BUCKET_ID_PATTERN,
  DEFAULT_METADATA_PROVIDER,
  TABLE_NAME_PATTERN,
  type CreatedBeforeFailure,
  type ImportTableInput,
  type ImportTableResult,
  type JobSummary,
  type TransferProgress,
} from '../contracts/transfer';
import { SapiErrorCode } from '../errors';
import { importAttributes } from '../contracts/search-attributes';
import { defaultFairnessKey } from '../contracts/priority';
import { prioritized, runPriority } from './priority';
import { ownContinuation } from './continued';
import { receiptOf, receiptRequestOf, receiptStepAfter, standingReceipt } from './receipt';
import type { ReceiptOutcome } from '../contracts/receipts';
import { receiptsOptionProblems } from '../contracts/receipts';

/** How many times a prepare + upload is redone when the temporary credentials expire mid-transfer. */
export const MAX_CREDENTIAL_REFRESHES = 3;

/** State carried over a continue-as-new while polling a long job (internal). */
interface ImportResume {
  fileId: number;
  bytes: number;
  sha256?: string;
  job: JobSummary;
  /** When polling began (workflow time, ms), so the deadline spans every run. */
  pollingSince: number;
  /** This run created the bucket (removed again if the job fails). */
  createdBucket?: boolean;
  /** This run created the (typed) table the job loads into (removed again if the job fails). */
  createdTable?: boolean;
  /** The table is typed. */
  typed?: boolean;
}

/**
 * Imports a CSV into a Storage table: check the target (table present for `load`, absent for `create`, bucket) and
 * the source (readable, not empty, a header the service accepts) → (create the bucket) → prepare + upload (direct
 * S3 multipart, resumable, or the importer) → `tables-async` / `import-async` (reconciled after a lost response) →
 * poll the job with durable timers. A run that fails before its job started, or whose job failed, removes what it
 * created (the file resource, the bucket while empty). The Storage token never enters history: the workflow names
 * a connection the worker resolves.
 *
 * Not `async`: it hands on runTransfer's promise (an async wrapper adds promises, each a stack trace the SDK takes).
 */
export function importTableWorkflow(input: ImportTableInput & { resume?: ImportResume }): Promise<ImportTableResult> {
  ownContinuation(input.resume, 'importTableWorkflow');
  const tableId = `${input.bucketId}.${input.table}`;
  const progress: TransferProgress = { phase: 'starting', bytes: 0, tableId };
  const connection = input.connection;
  const attributes = typeof input.bucketId === 'string' && typeof input.table === 'string' ? importAttributes(input) : {};
  const totals = (r: ImportTableResult) => ({ SapiRows: r.importedRowsCount, SapiBytes: r.bytes, SapiReceipt: r.receipt?.status });
  // the first activity does the checks: a fresh run opens in that phase (no upsert for 'starting')
  if (!input.resume) progress.phase = 'checking';
  // a run started without a fairness key shares the queue fairly by its Storage connection
  const priority = runPriority(defaultFairnessKey({ operation: 'import', connection }));
  return runTransfer(
    `import into ${tableId}`,
    progress,
    async (view, control) => {
      const budget = outageBudget(input.outageBudgetMs);
      const acts = view.activities(proxyActivities<SapiActivities>(prioritized(activityOptions(budget), priority)), describeCall(progress));
      const transfer = view.activities(
        proxyActivities<SapiActivities>(prioritized(transferOptions(input.transferTaskQueue, 'upload', budget), priority)),
        describeCall(progress),
      );
      const { getJob, awaitJob } = jobPoller(view, progress, priority, budget, connection);
      const onStatus = (current: JobSummary) => {
        progress.jobStatus = current.status;
        view.refresh();
      };
      let fileId: number;
      let bytes: number;
      let sha256: string | undefined;
      let job: JobSummary;
      /** What this run created, removed again when it fails before its job ends well. */
      const created: { fileId?: number; bucket?: boolean; table?: boolean } = { bucket: input.resume?.createdBucket, table: input.resume?.createdTable };
      let jobStarted = input.resume !== undefined;
      /** When this run began polling its job (the short path starts it inside an activity). */
      let pollingBegan: number | undefined;
      let typed = input.resume?.typed ?? false;
      /** The load ended well (what fails after it is the metadata). */
      let loaded = false;
      let loadEndedAt = 0;
      let loadResult: ImportTableResult | undefined;
      /** The receipt the short path's last activity wrote itself (its job ended well within that call). */
      let receiptWritten: ReceiptOutcome | undefined;
      /**
       * The receipt of the load that ended well (written once: after the metadata, or when the metadata failed), unless
       * the short path's activity wrote it already.
       */
      const receipt = (r: ImportTableResult) =>
        receiptStepAfter(acts, input, receiptWritten, () => receiptOf(input, r, workflowInfo().startTime.getTime(), loadEndedAt));
      try {
        if (input.resume) {
          ({ fileId, bytes, sha256, job } = input.resume);
          created.fileId = fileId;
          Object.assign(progress, { phase: 'importing', fileId, bytes, jobId: job.id, jobStatus: job.status });
        } else {
          validate(input);
          const mode = input.mode ?? 'create';
          const typedCreate = mode === 'create' && input.typedColumns !== undefined;
          const typedNames = input.typedColumns?.map((c) => c.name);
          // a headerless typed source takes the typed columns' names
          const columns = input.columns ?? (typedCreate && input.slices ? typedNames : undefined);
          const direct = (input.via ?? 'direct') === 'direct' && !input.slices && !typedCreate;
          if (direct) {
            const run = await shortPath(input, progress, acts, transfer, view, priority, created, control);
            ({ fileId, bytes, sha256, job, typed } = run);
            pollingBegan = run.pollingBegan;
            receiptWritten = run.receipt;
          } else {
            progress.phase = 'checking';
            const target = await acts.checkImportTarget({
              connection,
              bucketId: input.bucketId,
              table: input.table,
              mode,
              createBucket: input.createBucket ?? false,
            });
            typed = typedCreate || (target.typed ?? false);
            await view.activities(proxyActivities<SapiActivities>(prioritized(shortTransferOptions(input.transferTaskQueue, budget), priority))).inspectSource({
              sources: input.slices ?? [input.source],
              csv: input.csv,
              columns,
              ...(typedCreate ? { expectColumns: typedNames } : {}),
              ...grantOf(input),
            });
            if (input.createBucket) {
              progress.phase = 'bucket';
              created.bucket = (await acts.ensureBucket({ connection, bucketId: input.bucketId })).created;
            }
            const uploaded = await upload(input, progress, acts, transfer, (id) => (created.fileId = id));
            ({ fileId, bytes, sha256 } = uploaded);
            progress.phase = 'importing';
            const csv = input.csv ?? {};
            if (typedCreate) {
              // the service's way to a typed table: create it empty from its definition, then load the file into it
              progress.phase = 'defining';
              const definitionJob = await acts.createTableDefinition({
                connection,
                bucketId: input.bucketId,
                name: input.table,
                columns: input.typedColumns!,
                primaryKey: input.primaryKey,
              });
              created.table = true;
              progress.jobId = definitionJob.id;
              const definedSince = Date.now();
              control.pollingFrom(definedSince);
              await waitForJob(definitionJob, getJob, control.polling, onStatus, definedSince, awaitJob);
              progress.phase = 'importing';
              job = await acts.loadTableAsync({ connection, tableId, fileId, incremental: false, csv, columns });
            } else {
              job =
                mode === 'create'
                  ? await acts.createTableAsync({
                      connection,
                      bucketId: input.bucketId,
                      name: input.table,
                      fileId,
                      csv,
                      primaryKey: input.primaryKey,
                      columns: input.columns,
                    })
                  : await acts.loadTableAsync({ connection, tableId, fileId, incremental: input.incremental ?? false, csv, columns: input.columns });
            }
          }
          jobStarted = true;
        }
        progress.jobId = job.id;
        const pollingSince = input.resume?.pollingSince ?? pollingBegan ?? Date.now();
        let polls = 0;
        control.pollingFrom(pollingSince);
        /** One poll of the job; past the first, a run the service suggests continuing as new continues with it. */
        const poll = async (jobId: number): Promise<JobSummary> => {
          if (++polls > 1 && workflowInfo().continueAsNewSuggested) {
            // a very long job: keep history bounded and carry on polling in a fresh run
            const resume: ImportResume = {
              fileId,
              bytes,
              sha256,
              job: { ...job, id: jobId },
              pollingSince,
              createdBucket: created.bucket,
              createdTable: created.table,
              typed,
            };
            await continueAsNew<typeof importTableWorkflow>({ ...input, polling: control.polling, resume });
          }
          return getJob(jobId);
        };
        // a job the short path saw end well needs no polling call (its promises cost the SDK a stack trace each)
        const done = endedWell(job, onStatus) ?? (await waitForJob(job, poll, control.polling, onStatus, pollingSince, awaitJob));
        delete progress.deadlineAt;
        loaded = true;
        loadEndedAt = Date.now();
        const result: ImportTableResult = {
          tableId: done.tableId ?? tableId,
          fileId,
          jobId: done.id,
          importedRowsCount: done.results?.importedRowsCount ?? 0,
          bytes,
          sha256,
          typed,
        };
        loadResult = result;
        if (input.description !== undefined || Object.keys(input.metadata ?? {}).length) {
          // after the load: a table whose load failed never gets metadata
          progress.phase = 'metadata';
          const set = await acts.setTableMetadata({
            connection,
            tableId: result.tableId,
            provider: input.metadataProvider ?? DEFAULT_METADATA_PROVIDER,
            description: input.description,
            metadata: input.metadata,
          });
          result.metadataSet = set.entries;
        }
        result.receipt = standingReceipt(receiptWritten) ?? (await receipt(result));
        progress.phase = 'done';
        return result;
      } catch (err) {
        // a job that may still run (deadline, cancel while polling) keeps its file, bucket and table: it may yet succeed;
        // metadata refused after the load: a table this run created goes again (no half-made table)
        // a step that failed after creating the bucket says so in its failure
        if (createdBucketIn(err)) created.bucket = true;
        const undo = !jobStarted || failureType(err) === SapiErrorCode.JOB_FAILED || (loaded && created.table === true);
        if (undo && (created.fileId !== undefined || created.bucket || created.table)) {
          await CancellationScope.nonCancellable(() =>
            acts.cleanUpImport({
              connection,
              fileId: created.fileId,
              bucketId: created.bucket ? input.bucketId : undefined,
              ...(created.table ? { tableId } : {}),
            }),
          ).catch(() => undefined); // the failure that matters is the import's; the clean-up's own is in history
        }
        if (loaded && !created.table) {
          // the rows are in: say so, or a user would run the load again; and they get their receipt
          if (loadResult) await receipt(loadResult);
          const cause = err instanceof ActivityFailure ? err.cause : err;
          throw ApplicationFailure.create({
            message: `the rows were loaded into ${tableId}, but its metadata was not set: ${cause instanceof Error ? cause.message : String(cause)}`,
            type: failureType(err) ?? SapiErrorCode.INVALID_INPUT,
            nonRetryable: true,
            cause: cause instanceof Error ? cause : undefined,
          });
        }
        throw err;
      }
    },
    { attributes, totals, polling: input.polling },
  );
}

/**
 * How a started job is polled: `getJob` (one poll) and `awaitJob` (the polls of a long job in one activity), each
 * retried through an outage for the run's budget or until the job's deadline (`progress.deadlineAt`), whichever is
 * later, so a job running on the service is never given up for an outage.
 */
export function jobPoller(
  view: RunView,
  progress: TransferProgress,
  priority: ReturnType<typeof runPriority>,
  budgetMs: number,
  connection: string | undefined,
): { getJob: (jobId: number) => Promise<JobSummary>; awaitJob: AwaitJob } {
  const untilDeadline = () => (progress.deadlineAt ?? 0) - Date.now();
  const acts = (options: ActivityOptions) => view.activities(proxyActivities<SapiActivities>(prioritized(options, priority)), describeCall(progress));
  return {
    getJob: (jobId) => acts(pollOptions(budgetMs, untilDeadline())).getJob({ connection, jobId }),
    awaitJob: (request) => acts(awaitJobOptions(budgetMs, request.deadlineAt - Date.now())).awaitJob({ connection, ...request }),
  };
}

/** Summaries of an import's activity calls: a poll names its job and the status last seen. */
export function describeCall(progress: { jobStatus?: string }): (name: string, input: Record<string, unknown>) => string | undefined {
  return (name, input) => (name === 'getJob' ? `job ${String(input.jobId)} ${progress.jobStatus ?? ''}`.trim() : undefined);
}

type Acts = ReturnType<typeof proxyActivities<SapiActivities>>;

/** What the short path hands on to the polling: the file, its bytes and the job (maybe already ended). */
interface ShortPathRun {
  fileId: number;
  bytes: number;
  sha256?: string;
  job: JobSummary;
  typed: boolean;
  /** When the job's wait began (workflow time): before the activity that started it. */
  pollingBegan?: number;
  /** The receipt `uploadAndStartJob` wrote (or tried to) when it saw the job end well. */
  receipt?: ReceiptOutcome;
}

/**
 * The short path of a direct import: `prepareImport` (checks, bucket, prepare) then, for a
 * small source, `uploadAndStartJob` (one upload request, the job, its first polls and, when the job ended well within
 * them, the load's receipt); a larger source goes on with
 * `uploadFile` and `createTableAsync` / `loadTableAsync` from the prepared file. Both short activities run to their
 * end even when the run is cancelled meanwhile (they last about a second): the run then knows what they created and
 * whether a job started, and the cancel acts right after (removing what was created, or leaving a started job to
 * the service, as a cancel while polling does).
 */
async function shortPath(
  input: ImportTableInput,
  progress: TransferProgress,
  acts: Acts,
  transfer: Acts,
  view: RunView,
  priority: ReturnType<typeof runPriority>,
  created: { fileId?: number; bucket?: boolean },
  control: TransferControl,
): Promise<ShortPathRun> {
  const connection = input.connection;
  const mode = input.mode ?? 'create';
  const budget = outageBudget(input.outageBudgetMs);
  const nearSources = view.activities(proxyActivities<SapiActivities>(prioritized(shortTransferOptions(input.transferTaskQueue, budget), priority)));
  // one small upload and a job's start: a short call (its outage budget counts from minutes, not from a transfer's
  // 12-hour attempt), whose expired credentials come back to this workflow (a fresh file) instead of being retried
  const smallUpload = view.activities(
    proxyActivities<SapiActivities>(prioritized(shortTransferOptions(input.transferTaskQueue, budget, [SapiErrorCode.CREDENTIALS_EXPIRED]), priority)),
    describeCall(progress),
  );
  progress.phase = 'checking';
  // the body's scope (a cancel of the run cancels it), and one scope both short activities run to their end in
  const body = CancellationScope.current();
  const shielded = new CancellationScope({ cancellable: false });
  const begun = await shielded.run(() =>
    nearSources.prepareImport({
      connection,
      bucketId: input.bucketId,
      table: input.table,
      mode,
      createBucket: input.createBucket ?? false,
      source: input.source,
      csv: input.csv,
      columns: input.columns,
      ...grantOf(input),
      fileName: input.fileName ?? baseName(input.source),
      tags: input.tags,
      gzip: input.gzip,
    }),
  );
  created.bucket = begun.createdBucket;
  created.fileId = begun.target.fileId;
  progress.fileId = begun.target.fileId;
  const job = {
    connection,
    bucketId: input.bucketId,
    name: input.table,
    mode,
    incremental: input.incremental,
    csv: input.csv,
    primaryKey: input.primaryKey,
    columns: input.columns,
  };
  // a cancel that came while prepareImport ran acts now, before anything is uploaded or started (the scope of the
  // next activity would not be cancelled: it runs to its end)
  if (body.consideredCancelled) throw new CancelledFailure('cancelled before the upload');
  if (begun.small) {
    // one phase for upload + job: the upload of a small file is over in a moment, the job is what is waited for
    progress.phase = 'importing';
    const pollingBegan = Date.now();
    control.pollingFrom(pollingBegan);
    try {
      // its wait for the job ends by the job's deadline (the polling that follows fails the run at it)
      const waitMs = Math.min(SHORT_PATH_JOB_WAIT_MS, control.polling.deadlineMs ?? DEFAULT_JOB_DEADLINE_MS);
      // a job that ends well within the call gets its receipt there: no third activity for a small import
      const receipt = receiptRequestOf(input, begun.target.fileId, workflowInfo().startTime.getTime());
      const started = await shielded.run(() =>
        smallUpload.uploadAndStartJob({
          source: input.source,
          target: begun.target,
          gzip: input.gzip,
          ...grantOf(input),
          ...job,
          waitMs,
          ...(receipt ? { receipt } : {}),
        }),
      );
      progress.bytes = started.bytes;
      return {
        fileId: begun.target.fileId,
        bytes: started.bytes,
        sha256: started.sha256,
        job: started.job,
        typed: begun.typed,
        pollingBegan,
        ...(started.receipt ? { receipt: started.receipt } : {}),
      };
    } catch (err) {
      if (failureType(err) !== SapiErrorCode.CREDENTIALS_EXPIRED) throw err;
      // the prepared file's credentials expired before its upload: remove it, then the long way with a fresh one
      await acts.cleanUpImport({ connection, fileId: begun.target.fileId });
      created.fileId = undefined;
    }
  }
  // a larger source goes to the prepared file; after an expiry, to fresh ones
  const expired = created.fileId === undefined;
  const uploaded = await upload(
    input,
    progress,
    acts,
    transfer,
    (id) => (created.fileId = id),
    expired ? { refreshesUsed: 1 } : { preparedFirst: begun.target },
  );
  progress.phase = 'importing';
  const fileId = uploaded.fileId;
  const started =
    mode === 'create'
      ? await acts.createTableAsync({
          connection,
          bucketId: input.bucketId,
          name: input.table,
          fileId,
          csv: input.csv ?? {},
          primaryKey: input.primaryKey,
          columns: input.columns,
        })
      : await acts.loadTableAsync({
          connection,
          tableId: `${input.bucketId}.${input.table}`,
          fileId,
          incremental: input.incremental ?? false,
          csv: input.csv ?? {},
          columns: input.columns,
        });
  return { ...uploaded, job: started, typed: begun.typed };
}

/** A step failed after it created the bucket (its failure says so: {@link CreatedBeforeFailure}). */
function createdBucketIn(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  const details = cause instanceof ApplicationFailure ? (cause.details ?? []) : [];
  return details.some((d) => typeof d === 'object' && d !== null && typeof (d as Partial<CreatedBeforeFailure>).sapiCreated?.bucketId === 'string');
}

/**
 * Prepare + upload (direct) or the importer; a credentials expiry during a direct upload leads to a fresh prepare
 * and the removal of the expired file resource.
 */
async function upload(
  input: ImportTableInput,
  progress: TransferProgress,
  acts: Acts,
  transfer: Acts,
  onFile: (fileId: number) => void,
  /**
   * `preparedFirst`: a file already prepared (the short path's `prepareImport`), the first upload goes there;
   * `refreshesUsed`: prepares whose credentials already expired (they count against {@link MAX_CREDENTIAL_REFRESHES}).
   */
  from: { preparedFirst?: PreparedUpload; refreshesUsed?: number } = {},
): Promise<{ fileId: number; bytes: number; sha256?: string }> {
  const connection = input.connection;
  if ((input.via ?? 'direct') === 'importer') {
    progress.phase = 'uploading';
    const uploaded = await transfer.uploadViaImporter({ connection, source: input.source, name: input.fileName, tags: input.tags, ...grantOf(input) });
    onFile(uploaded.fileId);
    Object.assign(progress, { fileId: uploaded.fileId, bytes: uploaded.bytes });
    return uploaded;
  }
  for (let refresh = from.refreshesUsed ?? 0; ; refresh++) {
    progress.phase = 'preparing';
    const prepared =
      refresh === 0 && from.preparedFirst
        ? from.preparedFirst
        : await acts.prepareFile({
            connection,
            name: input.fileName ?? baseName(input.source),
            tags: input.tags,
            isSliced: input.slices !== undefined,
            gzip: input.gzip,
          });
    progress.fileId = prepared.fileId;
    onFile(prepared.fileId);
    progress.phase = 'uploading';
    try {
      const uploaded = input.slices
        ? await transfer.uploadSlices({ connection, sources: input.slices, target: prepared, gzip: input.gzip })
        : await transfer.uploadFile({ connection, source: input.source, target: prepared, gzip: input.gzip, ...grantOf(input) });
      progress.bytes = uploaded.bytes;
      return { fileId: prepared.fileId, bytes: uploaded.bytes, sha256: uploaded.sha256 };
    } catch (err) {
      if (refresh + 1 < MAX_CREDENTIAL_REFRESHES && failureType(err) === SapiErrorCode.CREDENTIALS_EXPIRED) {
        // the expired file resource is never used: remove it before preparing a fresh one
        await acts.cleanUpImport({ connection, fileId: prepared.fileId });
        continue;
      }
      throw err;
    }
  }
}

/** Column names the service accepts. */
const COLUMN_NAME = /^[A-Za-z0-9_]{1,64}$/;
/** Metadata keys the service accepts. */
const METADATA_KEY = /^[A-Za-z0-9_\-:.]{1,255}$/;

/** Problems of the typed-table and metadata inputs. */
function typedProblems(input: ImportTableInput): string[] {
  const problems: string[] = [];
  const columns = input.typedColumns;
  if (columns !== undefined) {
    if ((input.mode ?? 'create') !== 'create') problems.push("typedColumns need mode create (a load uses the existing table's types)");
    if (!Array.isArray(columns) || columns.length === 0) problems.push('typedColumns must list at least one column {name, definition: {type}}');
    const seen = new Set<string>();
    for (const [i, column] of (Array.isArray(columns) ? columns : []).entries()) {
      const name = column?.name;
      const where = `typedColumns[${i}]${typeof name === 'string' ? ` (${name})` : ''}`;
      if (typeof name !== 'string' || !COLUMN_NAME.test(name))
        problems.push(`${where}: name must be 1–64 letters, digits or underscores, got ${JSON.stringify(name)}`);
      else if (seen.has(name.toLowerCase())) problems.push(`${where}: column defined twice`);
      else seen.add(name.toLowerCase());
      const d = column?.definition;
      if (typeof d?.type !== 'string' || !/^[A-Za-z][A-Za-z0-9_ ]*$/.test(d.type))
        problems.push(`${where}: definition.type must be a type name such as VARCHAR, NUMBER or DATE, got ${JSON.stringify(d?.type)}`);
      if (d?.length !== undefined && !/^\s*\d+\s*(,\s*\d+\s*)?$/.test(String(d.length)))
        problems.push(`${where}: definition.length must be "n" or "precision,scale", got ${JSON.stringify(d.length)}`);
      if (d?.nullable !== undefined && typeof d.nullable !== 'boolean') problems.push(`${where}: definition.nullable must be true or false`);
    }
    const unknown = (input.primaryKey ?? []).filter((pk) => !seen.has(pk.toLowerCase()));
    if (unknown.length) problems.push(`primaryKey ${unknown.join(', ')} not among the typedColumns`);
  }
  for (const key of Object.keys(input.metadata ?? {})) {
    if (!METADATA_KEY.test(key)) problems.push(`metadata key ${JSON.stringify(key)} must be 1–255 letters, digits, "_", "-", ":" or "."`);
    if (typeof input.metadata![key] !== 'string') problems.push(`metadata ${key}: the value must be a string`);
  }
  if (input.description !== undefined && typeof input.description !== 'string') problems.push('description must be a string');
  const provider = input.metadataProvider;
  if (provider !== undefined && (typeof provider !== 'string' || provider.trim() === '' || provider === 'storage')) {
    problems.push(`metadataProvider must be a non-empty name other than "storage" (the service's own), got ${JSON.stringify(provider)}`);
  }
  return problems;
}

function validate(input: ImportTableInput): void {
  const problems: string[] = typedProblems(input);
  if (!input.source && !input.slices?.length) problems.push('source is required');
  if (!BUCKET_ID_PATTERN.test(input.bucketId ?? '')) problems.push(`bucketId must look like in.c-name or out.c-name, got ${JSON.stringify(input.bucketId)}`);
  if (!TABLE_NAME_PATTERN.test(input.table ?? '')) problems.push(`table must be 1–96 characters of [A-Za-z0-9_-], got ${JSON.stringify(input.table)}`);
  if (input.mode && input.mode !== 'create' && input.mode !== 'load') problems.push(`mode must be create or load, got ${JSON.stringify(input.mode)}`);
  if (input.via && input.via !== 'direct' && input.via !== 'importer') problems.push(`via must be direct or importer, got ${JSON.stringify(input.via)}`);
  if (input.slices && input.via === 'importer') problems.push('a sliced upload needs via=direct');
  problems.push(...receiptsOptionProblems(input.receipts, 'receipts'));
  if (problems.length) throw ApplicationFailure.nonRetryable(`invalid import input: ${problems.join('; ')}`, SapiErrorCode.INVALID_INPUT);
}

/** The failure type of an activity failure (our error code), if any. */
export function failureType(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** The staged-file grant an extraction passed, for the activities that open the source. */
function grantOf(input: ImportTableInput): { sourceGrant?: string } {
  return input.sourceGrant ? { sourceGrant: input.sourceGrant } : {};
}

function baseName(source: string): string {
  const path = source.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)) || 'data.csv';
}
