/**
 * The one place that knows which {@link ObjectStore} adapter serves a file: from a prepared upload (`files/prepare`
 * answers `uploadParams`, `absUploadParams` or `gcsUploadParams`) or from a file detail read with
 * `federationToken=1` (`s3Path`, `absPath` or `gcsPath` with their credentials). The activities choose the store
 * once, here; nothing else branches on the provider.
 */
import { type Dispatcher } from 'undici';
import { type Deadline } from '../http/deadline';
import { type AbsUploadParams, type GcsUploadParams, type UploadParams } from '../storage-api/schemas';
import { absStore } from './abs-store';
import { type AbsCredentials } from './abs-client';
import { gcsCredentialsOf, type GcsCredentials } from './gcs-client';
import { gcsStore } from './gcs-store';
import { type ObjectStore, type StateSealer, type StoreProvider } from './object-store';
import { DEFAULT_REGION, type TemporaryCredentials } from './s3-client';
import { s3Store } from './s3-store';

/** Where a prepared file goes and the credentials to write it, whatever the backend. */
interface UploadTarget {
  provider: StoreProvider;
  /** S3 or GCS bucket, or Azure container. */
  bucket: string;
  /** Object key (Azure: blob name), or its prefix for a sliced file. */
  key: string;
  /** Azure storage account: sliced manifests name it. */
  accountName?: string;
  region: string;
  acl?: string;
  serverSideEncryption?: string;
  /** ISO 8601. */
  expiration: string;
  /** The backend's credentials (seal them before they go to history). */
  credentials: TemporaryCredentials | AbsCredentials | GcsCredentials;
}

/** The upload target of a `files/prepare` answer (one of the three parameter sets is present). */
export function uploadTargetOf(
  file: { region?: string | null; uploadParams?: UploadParams | null; absUploadParams?: AbsUploadParams | null; gcsUploadParams?: GcsUploadParams | null },
  defaultRegion?: string,
): UploadTarget {
  const gcs = file.gcsUploadParams;
  if (gcs) {
    const credentials = gcsCredentialsOf(gcs);
    return { provider: 'gcp', bucket: gcs.bucket, key: gcs.key, region: file.region ?? '', expiration: credentials.expiration, credentials };
  }
  const abs = file.absUploadParams;
  if (abs) {
    const credentials: AbsCredentials = abs.absCredentials;
    return {
      provider: 'azure',
      bucket: abs.container,
      key: abs.blobName,
      accountName: abs.accountName,
      region: file.region ?? '',
      expiration: credentials.expiration,
      credentials,
    };
  }
  const params = file.uploadParams as UploadParams; // the schema requires one of the three
  const credentials: TemporaryCredentials = params.credentials;
  return {
    provider: 'aws',
    bucket: params.bucket,
    key: params.key,
    region: file.region ?? defaultRegion ?? DEFAULT_REGION,
    acl: params.acl ?? undefined,
    serverSideEncryption: params['x-amz-server-side-encryption'] ?? undefined,
    expiration: credentials.Expiration,
    credentials,
  };
}

/** What the adapters need from the worker besides the file's own fields. */
interface StoreEnvironment {
  /** S3 endpoint (MinIO, a local stack); default `AWS_ENDPOINT_URL_S3`. */
  s3Endpoint?: string;
  /** GCS JSON API root (an emulator's). */
  gcsEndpoint?: string;
  /** HTTP pool of GCS requests and presigned URLs. */
  dispatcher?: Dispatcher;
  /** Seals the secrets of resume points (GCS session URIs) before they are heartbeated. */
  sealer?: StateSealer;
  credentialsMarginMs?: number;
  /** The end of the time each call has, retries included (the activity attempt's, see `retryFits`). */
  deadline?: Deadline;
}

/** The store of a prepared upload target (`provider` absent: `aws`), with its opened credentials. */
export function storeOfTarget(
  target: { provider?: StoreProvider; bucket: string; accountName?: string; region?: string; serverSideEncryption?: string },
  credentials: unknown,
  env: StoreEnvironment,
): ObjectStore {
  const margin = env.credentialsMarginMs;
  switch (target.provider ?? 'aws') {
    case 'azure':
      return absStore({
        containerName: target.bucket,
        credentials: credentials as AbsCredentials,
        accountName: target.accountName,
        credentialsMarginMs: margin,
        deadline: env.deadline,
      });
    case 'gcp':
      return gcsStore({
        bucket: target.bucket,
        credentials: credentials as GcsCredentials,
        endpoint: env.gcsEndpoint,
        dispatcher: env.dispatcher,
        sealer: env.sealer,
        credentialsMarginMs: margin,
      });
    case 'aws':
      return s3Store({
        bucket: target.bucket,
        credentials: credentials as TemporaryCredentials,
        region: target.region,
        endpoint: env.s3Endpoint,
        serverSideEncryption: target.serverSideEncryption,
        credentialsMarginMs: margin,
        deadline: env.deadline,
        dispatcher: env.dispatcher,
      });
  }
}

/** The fields of a file detail (`GET files/{id}?federationToken=1`) that say where it is stored and how to read it. */
export interface StoredFileLocation {
  region?: string;
  s3Path?: { bucket: string; key: string };
  credentials?: TemporaryCredentials;
  absPath?: { container: string; name: string };
  absCredentials?: AbsCredentials;
  gcsPath?: { bucket: string; key: string };
  /** The read token as the service answers it (`expires_in` seconds, counted from now). */
  gcsCredentials?: { access_token: string; expires_in: number; projectId: string };
}

/**
 * The store of a file detail and the file's key in it (a prefix when sliced); undefined when the detail has no
 * credentials (then only its presigned `url` reads it).
 */
export function storeOfFile(file: StoredFileLocation, env: StoreEnvironment): { store: ObjectStore; key: string } | undefined {
  if (file.absPath && file.absCredentials) {
    return { store: absStore({ containerName: file.absPath.container, credentials: file.absCredentials, deadline: env.deadline }), key: file.absPath.name };
  }
  if (file.gcsPath && file.gcsCredentials) {
    const credentials = gcsCredentialsOf(file.gcsCredentials);
    return { store: gcsStore({ bucket: file.gcsPath.bucket, credentials, endpoint: env.gcsEndpoint, dispatcher: env.dispatcher }), key: file.gcsPath.key };
  }
  if (file.s3Path && file.credentials) {
    return {
      store: s3Store({ bucket: file.s3Path.bucket, credentials: file.credentials, region: file.region, endpoint: env.s3Endpoint, deadline: env.deadline }),
      key: file.s3Path.key,
    };
  }
  return undefined;
}
