import { Context } from '@temporalio/activity';
import { uploadMultipart, type MultipartUploadState } from '../object-storage/multipart-upload';
import type { TemporaryCredentials } from '../object-storage/s3-client';
import type { AbsCredentials } from '../object-storage/abs-client';
import { uploadBlockBlob, type AbsUploadState } from '../object-storage/abs-upload';
import type { GcsCredentials } from '../object-storage/gcs-client';
import { uploadGcsObject, type GcsUploadState } from '../object-storage/gcs-upload';
import type { Sealer } from './sealing';
import type { ActivityDeps } from './deps';
import { asActivity, lastHeartbeat, progressReporter } from './context';
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
 * Uploads the source straight to object storage with the prepared file's temporary credentials: S3 multipart in
 * bounded parts, each finished part heartbeated as `{uploadId, parts}` so a retry (new worker, crash) resumes
 * instead of starting again; on Azure a block blob whose staged blocks a retry finds (block list + heartbeat) and
 * does not send again; on GCS a resumable session whose URI (sealed) and persisted offset are heartbeated, a retry
 * asking the session where to continue. Credentials that expire (or are about to) fail with `SAPI_CREDENTIALS_EXPIRED`,
 * which the workflow answers with a fresh prepare.
 */
export function uploadFile(deps: ActivityDeps) {
  return (input: UploadFileInput): Promise<UploadFileResult> =>
    asActivity(async () => {
      if (input.target.provider === 'azure') return uploadToAzure(deps, input);
      if (input.target.provider === 'gcp') return uploadToGcs(deps, input);
      const credentials = deps.sealer(input.connection).open<TemporaryCredentials>(input.target.sealedCredentials);
      const previous = lastHeartbeat<MultipartUploadState>();
      const resume = previous && previous.key === input.target.key && previous.uploadId ? previous : undefined;
      const report = progressReporter();
      const result = await uploadMultipart({
        credentials,
        region: input.target.region,
        endpoint: deps.settings.s3.endpoint,
        bucket: input.target.bucket,
        key: input.target.key,
        source: await openUploadSource(deps, input),
        partSizeBytes: deps.settings.transfer.partSizeBytes,
        concurrency: deps.settings.transfer.concurrency,
        serverSideEncryption: input.target.serverSideEncryption,
        gzip: input.gzip,
        resume,
        onProgress: (state) => report(state, { bytes: state.bytesSent }),
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
    });
}

async function uploadToAzure(deps: ActivityDeps, input: UploadFileInput): Promise<UploadFileResult> {
  const credentials = deps.sealer(input.connection).open<AbsCredentials>(input.target.sealedCredentials);
  const report = progressReporter();
  const result = await uploadBlockBlob({
    credentials,
    containerName: input.target.bucket,
    blobName: input.target.key,
    source: await openUploadSource(deps, input),
    partSizeBytes: deps.settings.transfer.partSizeBytes,
    concurrency: deps.settings.transfer.concurrency,
    gzip: input.gzip,
    resume: lastHeartbeat<AbsUploadState>(),
    onProgress: (state) => report(state, { bytes: state.bytesSent }),
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
}

async function uploadToGcs(deps: ActivityDeps, input: UploadFileInput): Promise<UploadFileResult> {
  const sealer = deps.sealer(input.connection);
  const credentials = sealer.open<GcsCredentials>(input.target.sealedCredentials);
  const report = progressReporter();
  const previous = lastHeartbeat<GcsUploadState>();
  const result = await uploadGcsObject({
    credentials,
    endpoint: deps.settings.gcs.endpoint,
    dispatcher: deps.http.transfers,
    bucket: input.target.bucket,
    key: input.target.key,
    source: await openUploadSource(deps, input),
    partSizeBytes: deps.settings.transfer.partSizeBytes,
    gzip: input.gzip,
    resume: previous && openGcsState(sealer, previous),
    onProgress: (state) => report(sealGcsState(sealer, state), { bytes: state.bytesSent }),
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
}

/**
 * The source of an upload, through the worker's input policy; never an object of the bucket the file goes to (the
 * Storage service's own).
 */
export function openUploadSource(deps: ActivityDeps, input: { source: string; target: PreparedUpload; sourceGrant?: string }, field = 'source') {
  deps.confinement.noteStorageBucket(input.target.bucket);
  return deps.confinement.openSource(input.source, field, { signal: Context.current().cancellationSignal, grant: input.sourceGrant });
}

/** The state with its session URI sealed: the URI lets anyone upload to the object, so history never holds it in clear. */
export function sealGcsState(sealer: Sealer, state: GcsUploadState): GcsUploadState {
  return { ...state, sessionUri: sealer.seal(state.sessionUri) };
}

/**
 * The state of a heartbeat with its session URI opened again; undefined when it cannot be opened (sealed with another
 * token: the connection's token changed between attempts), so the upload opens a new session instead of failing.
 */
export function openGcsState(sealer: Sealer, state: GcsUploadState): GcsUploadState | undefined {
  try {
    return { ...state, sessionUri: sealer.open<string>(state.sessionUri) };
  } catch {
    return undefined;
  }
}
