import type { StoreProvider } from '../object-storage/object-store';
import { uploadTargetOf } from '../object-storage/stores';
import type { ActivityDeps } from './deps';
import { Context } from '@temporalio/activity';
import { isSapiError } from '../errors';
import { DEFAULT_RECONCILE_DELAYS_MS, findFilesOfRun } from '../storage-api';
import { activityMarker, asActivity } from './context';

export interface PrepareFileInput {
  connection?: string;
  name: string;
  sizeBytes?: number;
  tags?: string[];
  isSliced?: boolean;
  isEncrypted?: boolean;
  /** The content will be gzipped on upload: the stored name gets `.gz`. */
  gzip?: boolean;
}

/** A prepared upload target. The credentials are sealed (see sealing.ts): history never holds them in clear. */
export interface PreparedUpload {
  fileId: number;
  /**
   * Object-storage backend of the file, the service's `provider`: `aws` (S3, `uploadParams`), `azure` (Blob
   * Storage, `absUploadParams`) or `gcp` (Cloud Storage, `gcsUploadParams`). Absent in histories written before
   * Azure support: `aws`.
   */
  provider?: StoreProvider;
  /** S3 or GCS bucket, or Azure container. */
  bucket: string;
  /** Object key (Azure: blob name), or its prefix for a sliced file. */
  key: string;
  /** Azure storage account (`absUploadParams.accountName`): sliced manifests name it. */
  accountName?: string;
  region: string;
  isSliced: boolean;
  acl?: string;
  serverSideEncryption?: string;
  /** Expiration of the credentials (ISO), for messages. */
  expiration: string;
  sealedCredentials: string;
}

/**
 * `files/prepare` with `federationToken`: a file resource and temporary upload credentials, sealed. A retry first
 * deletes the file resources an earlier attempt of this activity prepared (found by the marker it sent as
 * `X-KBC-RunId`), so a lost answer leaves no orphan.
 */
export function prepareFile(deps: ActivityDeps) {
  return (input: PrepareFileInput): Promise<PreparedUpload> => asActivity(() => prepare(deps, input));
}

/** The body of {@link prepareFile} (the activity's marker and attempt decide which orphans are its own). */
export async function prepare(deps: ActivityDeps, input: PrepareFileInput): Promise<PreparedUpload> {
  const name = input.gzip && !input.name.endsWith('.gz') ? `${input.name}.gz` : input.name;
  const storage = deps.storage(input.connection);
  const runId = activityMarker();
  // a file an earlier attempt prepared (answer lost, or the worker died) is never used: remove it
  const removeOrphans = async (delaysMs?: readonly number[]) => {
    for (const orphan of await findFilesOfRun(storage, runId, { delaysMs })) await storage.deleteFile({ fileId: Number(orphan.id) });
  };
  if (Context.current().info.attempt > 1) await removeOrphans();
  let file;
  try {
    file = await storage.prepareFile({
      runId,
      name,
      sizeBytes: input.sizeBytes,
      tags: input.tags,
      isSliced: input.isSliced,
      isEncrypted: input.isEncrypted,
      federationToken: true,
    });
  } catch (err) {
    // the prepare may still be running on the service: wait for its file and remove it, then let the retry prepare
    if (isSapiError(err) && err.mayHaveReachedService) await removeOrphans(DEFAULT_RECONCILE_DELAYS_MS);
    throw err;
  }
  const { credentials, ...target } = uploadTargetOf(file, deps.settings.s3.region);
  return {
    fileId: Number(file.id),
    ...target,
    isSliced: file.isSliced ?? input.isSliced ?? false,
    sealedCredentials: deps.sealer(input.connection).seal(credentials),
  };
}
