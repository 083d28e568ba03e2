import { Context } from '@temporalio/activity';
import { downloadFile as download, type DownloadState } from '../object-storage/download';
import type { ActivityDeps } from './deps';
import { activityDeadline, asActivity, lastHeartbeat, progressReporter } from './context';

export interface FileDetails {
  fileId: number;
  name: string;
  isSliced: boolean;
  sizeBytes?: number;
  tags: string[];
  created?: string;
}

export interface CheckDestinationInput {
  destination: string;
  overwrite?: boolean;
}

/**
 * Checks an export's destination against the worker's input policy before the export starts (nothing is created in
 * Storage for a destination the download would refuse). Runs where the destination is (the transfer task queue).
 */
export function checkDestination(deps: ActivityDeps) {
  return (input: CheckDestinationInput): Promise<void> =>
    asActivity(async () => {
      await deps.confinement.confineDestination(input.destination, 'destination', input.overwrite ?? false);
    });
}

/** `GET files/{id}`: the file resource without its URL or credentials (nothing secret goes to history). */
export function getFileDetails(deps: ActivityDeps) {
  return (input: { connection?: string; fileId: number }): Promise<FileDetails> =>
    asActivity(async () => {
      const file = await deps.storage(input.connection).getFile({ fileId: input.fileId });
      return {
        fileId: Number(file.id),
        name: file.name,
        isSliced: file.isSliced,
        sizeBytes: file.sizeBytes ?? undefined,
        tags: (file.tags ?? []).map(String),
        created: file.created,
      };
    });
}

export interface DownloadFileInput {
  connection?: string;
  fileId: number;
  /** A path on this worker's host, or `s3://bucket/key` (through the worker's input policy). */
  destination: string;
  /** Replace a local destination that exists (a retry of this activity always may: the file can be its own). */
  overwrite?: boolean;
  /** Table the file was exported from: its columns become the header of a headerless sliced export. */
  tableId?: string;
  /** Add the header row to headerless sliced CSV. Default true. */
  header?: boolean;
  /** Columns asked for in the export (the header then lists these, in this order). */
  columns?: string[];
  /** Decompress gzip: true all, false none; default `.gz` slices only (see object-storage/download). */
  gunzip?: boolean;
}

export interface DownloadFileResult {
  path: string;
  bytes: number;
  sha256: string;
  sliced: boolean;
  slices: number;
}

/**
 * Downloads a Storage file with read credentials (`federationToken=1`): unsliced in one stream, sliced as the
 * manifest's slices in parallel (bounded) concatenated in manifest order. Finished slices are heartbeated, so a
 * retry resumes. Credentials are fetched inside the activity and never returned.
 */
export function downloadFile(deps: ActivityDeps) {
  return (input: DownloadFileInput): Promise<DownloadFileResult> =>
    asActivity(async () => {
      const storage = deps.storage(input.connection);
      const file = await storage.getFile({ fileId: input.fileId, federationToken: true });
      // checked (with the file's bucket known: never the service's own) before any byte moves; a retry may replace
      // what its earlier attempt renamed into place
      deps.confinement.noteStorageBucket(file.s3Path?.bucket);
      const firstAttempt = Context.current().info.attempt === 1 && lastHeartbeat() === undefined;
      const destination = await deps.confinement.confineDestination(input.destination, 'destination', (input.overwrite ?? false) || !firstAttempt);
      let headerColumns: string[] | undefined;
      if (file.isSliced && (input.header ?? true) && input.tableId) {
        headerColumns = input.columns?.length ? input.columns : (await storage.getTable({ tableId: input.tableId })).columns;
      }
      const report = progressReporter();
      const result = await download({
        file: { ...file, region: file.region ?? deps.settings.s3.region },
        destination,
        destinationChecked: true,
        endpoint: deps.settings.s3.endpoint,
        gcsEndpoint: deps.settings.gcs.endpoint,
        dispatcher: deps.http.transfers,
        deadline: activityDeadline,
        destinationS3: /^s3:/i.test(destination) ? deps.userS3() : undefined,
        concurrency: deps.settings.transfer.concurrency,
        headerColumns,
        gunzip: input.gunzip,
        resume: lastHeartbeat<DownloadState>(),
        onProgress: (state) => report(state, { bytes: state.bytesDownloaded, slicesDone: state.finishedSlices.length, slices: state.slices }),
        signal: Context.current().cancellationSignal,
      });
      return { path: result.path, bytes: result.bytes, sha256: result.sha256, sliced: result.sliced, slices: result.slices };
    });
}
