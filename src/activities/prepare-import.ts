import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { toApplicationFailure } from '../errors';
import type { CreatedBeforeFailure, CsvDialect } from '../contracts/transfer';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';
import { checkTarget } from './check-import-target';
import { inspect } from './inspect-source';
import { ensureBucketExists } from './ensure-bucket';
import { prepare, type PreparedUpload } from './prepare-file';

/**
 * Largest source (bytes) an import takes the short path for: one upload request (below the smallest part size a
 * worker can be configured with, 5 MiB, so never a multipart upload), the job started in the same activity.
 */
export const SMALL_IMPORT_MAX_BYTES = 5 * 1024 * 1024;

export interface PrepareImportInput {
  connection?: string;
  bucketId: string;
  table: string;
  mode: 'create' | 'load';
  /** The bucket is created when missing. */
  createBucket: boolean;
  /** Local path, `http(s)://` URL or `s3://` object (never a sliced upload). */
  source: string;
  csv?: CsvDialect;
  /** Columns of a headerless source. */
  columns?: string[];
  /** The worker's grant for a staged file it built (an extraction's load). */
  sourceGrant?: string;
  /** Name of the stored file (not `name`: an operator's summary of the call reads `name` as the table's). */
  fileName: string;
  tags?: string[];
  gzip?: boolean;
}

export interface PrepareImportResult {
  /** The existing table is typed. */
  typed: boolean;
  /** Bytes of the source, when known. */
  bytes?: number;
  /** This activity created the bucket (removed again if the run fails). */
  createdBucket: boolean;
  /** The prepared file (credentials sealed). */
  target: PreparedUpload;
  /** The source is at most {@link SMALL_IMPORT_MAX_BYTES}: the workflow uploads it and starts its job in one activity. */
  small: boolean;
}

/**
 * The first step of a direct import, as one short activity: the checks of `checkImportTarget` and `inspectSource`
 * (nothing is created when they fail), then the bucket (`ensureBucket`, with `createBucket`) and the file resource
 * (`prepareFile`). A retry redoes the checks, counts a bucket created since the activity was scheduled as its own and
 * removes a file an earlier attempt prepared, as those activities do. A failure after the bucket was created carries
 * {@link CreatedBeforeFailure} in its details, so the workflow removes the bucket. Runs where the source is readable
 * (the transfer task queue).
 */
export function prepareImport(deps: ActivityDeps) {
  return (input: PrepareImportInput): Promise<PrepareImportResult> =>
    asActivity(async () => {
      let createdBucket = false;
      try {
        const target = await checkTarget(deps, {
          connection: input.connection,
          bucketId: input.bucketId,
          table: input.table,
          mode: input.mode,
          createBucket: input.createBucket,
        });
        const inspected = await inspect(deps, { sources: [input.source], csv: input.csv, columns: input.columns, sourceGrant: input.sourceGrant });
        // the check has just seen the bucket: no second look (one request less per import into an existing bucket),
        // but on a retry a bucket that exists may be the one an earlier attempt created (ensureBucket tells by its marker)
        const retry = Context.current().info.attempt > 1;
        if (input.createBucket && (!target.bucketExists || retry))
          createdBucket = (await ensureBucketExists(deps, { connection: input.connection, bucketId: input.bucketId })).created;
        const prepared = await prepare(deps, { connection: input.connection, name: input.fileName, tags: input.tags, isSliced: false, gzip: input.gzip });
        const bytes = inspected.bytes;
        return { typed: target.typed ?? false, bytes, createdBucket, target: prepared, small: bytes !== undefined && bytes <= SMALL_IMPORT_MAX_BYTES };
      } catch (err) {
        if (!createdBucket) throw err;
        const failure = toApplicationFailure(err);
        const created: CreatedBeforeFailure = { sapiCreated: { bucketId: input.bucketId } };
        throw ApplicationFailure.create({
          message: failure.message,
          type: failure.type ?? undefined,
          nonRetryable: failure.nonRetryable ?? false,
          details: [...(failure.details ?? []), created],
          nextRetryDelay: failure.nextRetryDelay ?? undefined,
          cause: failure.cause,
        });
      }
    });
}
