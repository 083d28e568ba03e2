import { Context } from '@temporalio/activity';
import { uploadSliced, type SlicedUploadState } from '../object-storage/sliced-upload';
import type { TemporaryCredentials } from '../object-storage/s3-client';
import type { AbsCredentials } from '../object-storage/abs-client';
import { uploadAbsSliced, type AbsSlicedUploadState } from '../object-storage/abs-upload';
import type { GcsCredentials } from '../object-storage/gcs-client';
import { uploadGcsSliced, type GcsSlicedUploadState } from '../object-storage/gcs-upload';
import { SapiInvalidInputError } from '../errors';
import type { ActivityDeps } from './deps';
import { asActivity, lastHeartbeat, progressReporter } from './context';
import type { PreparedUpload } from './prepare-file';
import { openGcsState, openUploadSource, sealGcsState, type UploadFileResult } from './upload-file';

export interface UploadSlicesInput {
  connection?: string;
  /** Sources in slice order (headerless CSV parts of one table). */
  sources: string[];
  /** From `prepareFile` with `isSliced`. */
  target: PreparedUpload;
  gzip?: boolean;
}

/** Uploads several sources as the slices of one sliced file (S3 objects, Azure block blobs or GCS objects), then its manifest; resumes finished slices. */
export function uploadSlices(deps: ActivityDeps) {
  return (input: UploadSlicesInput): Promise<UploadFileResult> =>
    asActivity(async () => {
      if (!input.target.isSliced) throw new SapiInvalidInputError(`file ${input.target.fileId} was not prepared as sliced`);
      if (input.target.provider === 'azure') return uploadSlicesToAzure(deps, input);
      if (input.target.provider === 'gcp') return uploadSlicesToGcs(deps, input);
      const credentials = deps.sealer(input.connection).open<TemporaryCredentials>(input.target.sealedCredentials);
      const report = progressReporter();
      const result = await uploadSliced({
        credentials,
        region: input.target.region,
        endpoint: deps.settings.s3.endpoint,
        bucket: input.target.bucket,
        keyPrefix: input.target.key,
        slices: await openSlices(deps, input),
        partSizeBytes: deps.settings.transfer.partSizeBytes,
        concurrency: deps.settings.transfer.concurrency,
        gzip: input.gzip,
        serverSideEncryption: input.target.serverSideEncryption,
        resume: lastHeartbeat<SlicedUploadState>(),
        onProgress: (state) => report(state, slicedProgress(state)),
        signal: Context.current().cancellationSignal,
      });
      return slicedResult(result);
    });
}

async function uploadSlicesToAzure(deps: ActivityDeps, input: UploadSlicesInput): Promise<UploadFileResult> {
  if (!input.target.accountName) throw new SapiInvalidInputError(`file ${input.target.fileId}: an Azure target needs absUploadParams.accountName for its manifest`);
  const credentials = deps.sealer(input.connection).open<AbsCredentials>(input.target.sealedCredentials);
  const report = progressReporter();
  const result = await uploadAbsSliced({
    credentials,
    containerName: input.target.bucket,
    accountName: input.target.accountName,
    blobPrefix: input.target.key,
    slices: await openSlices(deps, input),
    partSizeBytes: deps.settings.transfer.partSizeBytes,
    concurrency: deps.settings.transfer.concurrency,
    gzip: input.gzip,
    resume: lastHeartbeat<AbsSlicedUploadState>(),
    onProgress: (state) => report(state, slicedProgress(state)),
    signal: Context.current().cancellationSignal,
  });
  return slicedResult(result);
}

async function uploadSlicesToGcs(deps: ActivityDeps, input: UploadSlicesInput): Promise<UploadFileResult> {
  const sealer = deps.sealer(input.connection);
  const credentials = sealer.open<GcsCredentials>(input.target.sealedCredentials);
  const report = progressReporter();
  const previous = lastHeartbeat<GcsSlicedUploadState>();
  const result = await uploadGcsSliced({
    credentials,
    endpoint: deps.settings.gcs.endpoint,
    dispatcher: deps.http.transfers,
    bucket: input.target.bucket,
    keyPrefix: input.target.key,
    slices: await openSlices(deps, input),
    partSizeBytes: deps.settings.transfer.partSizeBytes,
    concurrency: deps.settings.transfer.concurrency,
    gzip: input.gzip,
    resume: previous && {
      ...previous,
      inProgress: previous.inProgress.flatMap((p) => {
        const upload = openGcsState(sealer, p.upload);
        return upload ? [{ index: p.index, upload }] : [];
      }),
    },
    onProgress: (state) =>
      report({ ...state, inProgress: state.inProgress.map((p) => ({ index: p.index, upload: sealGcsState(sealer, p.upload) })) }, slicedProgress(state)),
    signal: Context.current().cancellationSignal,
  });
  return slicedResult(result);
}

/** The slices' sources, through the worker's input policy (`slices[i]` in messages). */
function openSlices(deps: ActivityDeps, input: UploadSlicesInput) {
  return Promise.all(input.sources.map((source, i) => openUploadSource(deps, { source, target: input.target }, `slices[${i}]`)));
}

/** The progress of a sliced upload (any store): bytes of the finished slices, slices done of all. */
function slicedProgress(state: { finished: ReadonlyArray<{ bytes: number }>; slices: number }) {
  return { bytes: state.finished.reduce((sum, slice) => sum + slice.bytes, 0), slicesDone: state.finished.length, slices: state.slices };
}

/** The activity's result from a sliced upload's (any store). */
function slicedResult(result: { bytes: number; slices: readonly unknown[]; slicesUploaded: number }): UploadFileResult {
  return {
    bytes: result.bytes,
    sourceBytes: result.bytes,
    parts: result.slices.length,
    partsUploaded: result.slicesUploaded,
    resumed: result.slicesUploaded < result.slices.length,
  };
}
