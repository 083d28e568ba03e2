import { Context } from '@temporalio/activity';
import { uploadSlices as uploadSlicesTo, type SlicedUploadState } from '../object-storage/sliced-upload';
import { SapiInvalidInputError } from '../errors';
import type { ActivityDeps } from './deps';
import { asActivity, lastHeartbeat, progressReporter } from './context';
import type { PreparedUpload } from './prepare-file';
import { openUploadSource, targetStore, type UploadFileResult } from './upload-file';

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
      const store = targetStore(deps, input);
      try {
        const report = progressReporter();
        const result = await uploadSlicesTo(store, {
          keyPrefix: input.target.key,
          slices: await openSlices(deps, input),
          partSizeBytes: deps.settings.transfer.partSizeBytes,
          concurrency: deps.settings.transfer.concurrency,
          gzip: input.gzip,
          resume: lastHeartbeat<SlicedUploadState>(),
          onProgress: (state) => report(state, slicedProgress(state)),
          signal: Context.current().cancellationSignal,
        });
        return slicedResult(result);
      } finally {
        store.close();
      }
    });
}

/** The slices' sources, through the worker's input policy (`slices[i]` in messages). */
function openSlices(deps: ActivityDeps, input: UploadSlicesInput) {
  return Promise.all(input.sources.map((source, i) => openUploadSource(deps, { source, target: input.target }, `slices[${i}]`)));
}

/** The progress of a sliced upload: bytes of the finished slices, slices done of all. */
function slicedProgress(state: { finished: ReadonlyArray<{ bytes: number }>; slices: number }) {
  return { bytes: state.finished.reduce((sum, slice) => sum + slice.bytes, 0), slicesDone: state.finished.length, slices: state.slices };
}

/** The activity's result from a sliced upload's. */
function slicedResult(result: { bytes: number; slices: readonly unknown[]; slicesUploaded: number }): UploadFileResult {
  return {
    bytes: result.bytes,
    sourceBytes: result.bytes,
    parts: result.slices.length,
    partsUploaded: result.slicesUploaded,
    resumed: result.slicesUploaded < result.slices.length,
  };
}
