import { Context } from '@temporalio/activity';
import { storeOfTarget } from '../object-storage/stores';
import type { ObjectStore } from '../object-storage/object-store';
import type { ActivityDeps } from './deps';
import { activityDeadline, asActivity, lastHeartbeat, progressReporter } from './context';
import type { PreparedUpload } from './prepare-file';

export interface UploadFileInput {
  connection?: string;
  /** Local path on this worker's host, `http(s)://` URL or `s3://bucket/key`. */
  source: string;
  /** From `prepareFile`. */
  target: PreparedUpload;
  gzip?: boolean;
  /** The worker's grant for a staged file it built (an extraction's load). */
  sourceGrant?: string;
}

export interface UploadFileResult {
  /** Bytes stored (compressed size with gzip). */
  bytes: number;
  /** Bytes read from the source. */
  sourceBytes: number;
  sha256?: string;
  parts: number;
  /** Parts sent by the attempt that finished (the rest were finished by earlier attempts). */
  partsUploaded: number;
  resumed: boolean;
}

/**
 * Uploads the source straight to object storage with the prepared file's temporary credentials, through the store of
 * its provider (`object-storage/stores.ts`), in bounded parts; the store's resume point is heartbeated after each part
 * so a retry (new worker, crash) resumes instead of starting again: S3 `{uploadId, parts}`, Azure's staged blocks
 * (found again in the block list), a GCS session's URI (sealed) and persisted offset. Credentials that expire (or are about to) fail with `SAPI_CREDENTIALS_EXPIRED`,
 * which the workflow answers with a fresh prepare.
 */
export function uploadFile(deps: ActivityDeps) {
  return (input: UploadFileInput): Promise<UploadFileResult> => asActivity(() => uploadToTarget(deps, input));
}

/** The body of {@link uploadFile}: resumes from the activity's last heartbeat. */
export async function uploadToTarget(deps: ActivityDeps, input: UploadFileInput): Promise<UploadFileResult> {
  const store = targetStore(deps, input);
  try {
    const report = progressReporter();
    const result = await store.upload({
      key: input.target.key,
      source: await openUploadSource(deps, input),
      partSizeBytes: deps.settings.transfer.partSizeBytes,
      concurrency: deps.settings.transfer.concurrency,
      gzip: input.gzip,
      resume: lastHeartbeat(),
      onProgress: (state, bytesSent) => report(state, { bytes: bytesSent }),
      signal: Context.current().cancellationSignal,
    });
    return {
      bytes: result.bytes,
      sourceBytes: result.sourceBytes,
      sha256: result.sha256,
      parts: result.parts,
      partsUploaded: result.partsUploaded,
      resumed: result.resumed,
    };
  } finally {
    store.close();
  }
}

/** The object store of a prepared target (the adapter of its provider), with its credentials opened. */
export function targetStore(deps: ActivityDeps, input: { connection?: string; target: PreparedUpload }): ObjectStore {
  const sealer = deps.sealer(input.connection);
  return storeOfTarget(input.target, sealer.open<unknown>(input.target.sealedCredentials), {
    s3Endpoint: deps.settings.s3.endpoint,
    gcsEndpoint: deps.settings.gcs.endpoint,
    dispatcher: deps.http.transfers,
    sealer,
    deadline: activityDeadline,
  });
}

/**
 * The source of an upload, through the worker's input policy; never an object of the bucket the file goes to (the
 * Storage service's own).
 */
export function openUploadSource(deps: ActivityDeps, input: { source: string; target: PreparedUpload; sourceGrant?: string }, field = 'source') {
  deps.confinement.noteStorageBucket(input.target.bucket);
  return deps.confinement.openSource(input.source, field, { signal: Context.current().cancellationSignal, grant: input.sourceGrant });
}
