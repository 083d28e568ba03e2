/**
 * The Google Cloud Storage adapter of {@link ObjectStore}: the service's access token (`gcsUploadParams`, or a file
 * detail's `gcsCredentials`), resumable upload sessions ({@link uploadGcsObject}: a retry asks the session what it
 * persisted), ranged media downloads, media URLs with the bearer token for the download threads.
 *
 * A session URI is a grant (whoever holds it may write the object): with a `sealer` the resume point is sealed
 * before it is reported, and opened again on a retry (one sealed for another token is dropped: a new session).
 */
import { Readable } from 'node:stream';
import { type Dispatcher } from 'undici';
import { SapiError } from '../errors';
import { defaultHttpPools } from '../http';
import { asGcsTransferError, assertGcsCredentialsFresh, GcsClient, gcsFailure, gsUrl, parseGsUrl, type GcsCredentials } from './gcs-client';
import { uploadGcsObject, type GcsUploadState } from './gcs-upload';
import { type ObjectReader, type ObjectStore, type StateSealer } from './object-store';
import { keyInside, totalFromContentRange } from './store-helpers';

interface GcsStoreOptions {
  bucket: string;
  /** Client to use; otherwise one is made from `credentials`, `endpoint` and `dispatcher`. */
  client?: GcsClient;
  credentials?: GcsCredentials;
  /** JSON API root (an emulator's); default `https://storage.googleapis.com`. */
  endpoint?: string;
  /** Default: `defaultHttpPools().transfers`. */
  dispatcher?: Dispatcher;
  /** Seals the session URI of reported resume points (and opens them on resume). */
  sealer?: StateSealer;
  /** Credentials expiring within this margin count as expired (uploads). */
  credentialsMarginMs?: number;
}

/** A GCS bucket behind the {@link ObjectStore} interface. */
export function gcsStore(options: GcsStoreOptions): ObjectStore {
  const { bucket, credentials, sealer } = options;
  const client =
    options.client ??
    new GcsClient({
      endpoint: options.endpoint,
      credentials: credentials as GcsCredentials,
      bucket,
      dispatcher: options.dispatcher ?? defaultHttpPools().transfers,
    });
  const seal = (state: GcsUploadState): GcsUploadState => (sealer ? { ...state, sessionUri: sealer.seal(state.sessionUri) } : state);
  const open = (state: GcsUploadState | undefined): GcsUploadState | undefined => {
    if (!state || !sealer) return state;
    try {
      return { ...state, sessionUri: sealer.open<string>(state.sessionUri) };
    } catch {
      return undefined; // sealed with another token (the connection's token changed): a new session
    }
  };
  return {
    provider: 'gcp',
    container: bucket,
    expiration: credentials?.expiration,
    urlOf: (key) => gsUrl(bucket, key),
    keyOf(url) {
      const parsed = parseGsUrl(url);
      return keyInside({ container: parsed.bucket, key: parsed.key }, bucket, url);
    },
    reader: (key) => gcsReader(client, key),
    async put(key, content, contentType = 'application/octet-stream', signal) {
      try {
        await client.putObject(key, typeof content === 'string' ? Buffer.from(content) : content, contentType, signal);
      } catch (err) {
        throw err instanceof SapiError ? err : asGcsTransferError(err, 'upload', { bucket, key }, signal);
      }
    },
    upload: (o) =>
      uploadGcsObject({
        client,
        credentials,
        bucket,
        key: o.key,
        source: o.source,
        partSizeBytes: o.partSizeBytes, // one session takes its chunks in order: no concurrency within an object
        contentType: o.contentType,
        gzip: o.gzip,
        resume: open(o.resume as GcsUploadState | undefined),
        onProgress: (state) => o.onProgress?.(seal(state), state.bytesSent),
        credentialsMarginMs: options.credentialsMarginMs,
        signal: o.signal,
      }),
    list: async (prefix, signal) => (await client.list(prefix, signal)).sort(),
    async delete(keys, signal) {
      for (const key of keys) await client.deleteObject(key, signal);
    },
    assertFresh: (where, marginMs) => assertGcsCredentialsFresh(credentials, where, marginMs),
    close: () => undefined, // the dispatcher is the caller's
  };
}

/** One object: ranged media downloads, its size, its media URL with the bearer token. */
function gcsReader(client: GcsClient, key: string): ObjectReader {
  return {
    label: `gs://${client.bucket}/${key}`,
    gz: /\.gz$/i.test(key),
    async get(start, signal) {
      const out = await client.getMedia(key, start, signal);
      if (out.statusCode === 416) {
        await out.body.resume();
        return { body: Readable.from([]), total: start, fromStart: true };
      }
      const total = start > 0 ? totalFromContentRange(out.contentRange) : out.contentLength;
      // a store that ignores Range answers the whole object (200): then we restart the file
      return { body: out.body, total, fromStart: start > 0 && out.statusCode === 206 };
    },
    size: (signal) => client.size(key, signal),
    plainGet: () =>
      Promise.resolve({ ...client.mediaRequest(key), failure: (status, body) => gcsFailure(status, body, 'download', { bucket: client.bucket, key }) }),
  };
}
