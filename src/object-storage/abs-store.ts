/**
 * The Azure Blob Storage adapter of {@link ObjectStore}: the service's SAS (`absUploadParams.absCredentials`, or a
 * file detail's read `absCredentials`), block blobs ({@link uploadBlockBlob}: deterministic block ids, a retry
 * finds staged blocks in the block list and the heartbeat), ranged downloads, SAS URLs for the download threads,
 * flat listing and deletes.
 */
import { Readable } from 'node:stream';
import { type ContainerClient } from '@azure/storage-blob';
import { excerptOf, SapiErrorCode, SapiInvalidInputError, SapiTransferError, type SapiError } from '../errors';
import { type Deadline } from '../http/deadline';
import {
  absErrorInfo,
  absUrl,
  assertAbsCredentialsFresh,
  attemptSignal,
  createContainerClient,
  mapAbsError,
  parseAbsUrl,
  withAttemptSignal,
  type AbsCredentials,
} from './abs-client';
import { uploadBlockBlob, type AbsUploadState } from './abs-upload';
import { type ObjectReader, type ObjectStore } from './object-store';
import { keyInside, totalFromContentRange } from './store-helpers';

interface AbsStoreOptions {
  containerName: string;
  /** Container client to use; otherwise one is made from `credentials`. */
  container?: ContainerClient;
  credentials?: AbsCredentials;
  /** `absUploadParams.accountName`: manifests name it (`azure://<account>.blob.core.windows.net/…`). */
  accountName?: string;
  /** Credentials expiring within this margin count as expired (uploads). */
  credentialsMarginMs?: number;
  /** The end of the time each call has, the SDK's own retries included (the activity attempt's; see `attemptSignal`). */
  deadline?: Deadline;
}

/** An Azure container behind the {@link ObjectStore} interface. */
export function absStore(options: AbsStoreOptions): ObjectStore {
  const { containerName, credentials } = options;
  if (!options.container && !credentials)
    throw new SapiInvalidInputError(`Azure store [container=${containerName}]: needs a container client or absCredentials`);
  const container = options.container ?? createContainerClient(credentials as AbsCredentials, containerName);
  // one timer per store (a store serves one activity attempt): every call ends by the attempt's deadline
  const attempt = attemptSignal(options.deadline);
  const bound = (signal: AbortSignal | undefined) => withAttemptSignal(signal, attempt);
  return {
    provider: 'azure',
    container: containerName,
    expiration: credentials?.expiration,
    urlOf(key) {
      if (!options.accountName) throw new SapiInvalidInputError(`Azure store [container=${containerName}]: a manifest needs absUploadParams.accountName`);
      return absUrl(options.accountName, containerName, key);
    },
    keyOf(url) {
      const parsed = parseAbsUrl(url);
      return keyInside({ container: parsed.container, key: parsed.blobName }, containerName, url, 'container');
    },
    reader: (key) => absReader(container, key, bound),
    async put(key, content, contentType = 'application/octet-stream', callerSignal) {
      const signal = bound(callerSignal);
      const body = typeof content === 'string' ? Buffer.from(content) : content;
      try {
        await container.getBlockBlobClient(key).upload(body, body.length, { blobHTTPHeaders: { blobContentType: contentType }, abortSignal: signal });
      } catch (err) {
        throw mapAbsError(err, 'upload', { container: containerName, blob: key }, signal);
      }
    },
    upload: (o) =>
      uploadBlockBlob({
        container,
        credentials,
        containerName,
        blobName: o.key,
        source: o.source,
        partSizeBytes: o.partSizeBytes,
        concurrency: o.concurrency,
        contentType: o.contentType,
        gzip: o.gzip,
        resume: o.resume as AbsUploadState | undefined, // checked against the container and blob there
        onProgress: (state) => o.onProgress?.(state, state.bytesSent),
        credentialsMarginMs: options.credentialsMarginMs,
        signal: bound(o.signal),
      }),
    async list(prefix, callerSignal) {
      const signal = bound(callerSignal);
      const keys: string[] = [];
      try {
        for await (const blob of container.listBlobsFlat({ prefix, abortSignal: signal })) keys.push(blob.name);
      } catch (err) {
        throw mapAbsError(err, 'download', { container: containerName, prefix, step: 'list' }, signal);
      }
      return keys.sort();
    },
    async delete(keys, callerSignal) {
      const signal = bound(callerSignal);
      for (const key of keys) {
        try {
          await container.getBlobClient(key).deleteIfExists({ abortSignal: signal });
        } catch (err) {
          throw mapAbsError(err, 'upload', { container: containerName, blob: key, step: 'delete' }, signal);
        }
      }
    },
    assertFresh: (where, marginMs) => assertAbsCredentialsFresh(credentials, where, marginMs),
    close: () => undefined, // the SDK's clients hold no sockets of their own
  };
}

/** One blob: ranged downloads, its properties, its SAS URL. */
function absReader(container: ContainerClient, blobName: string, bound: (signal: AbortSignal | undefined) => AbortSignal | undefined): ObjectReader {
  const blob = container.getBlobClient(blobName);
  const context = { container: container.containerName, blob: blobName };
  return {
    label: `azure container=${container.containerName}, blob=${blobName}`,
    gz: /\.gz$/i.test(blobName),
    async get(start, callerSignal) {
      const signal = bound(callerSignal);
      try {
        const out = await blob.download(start, undefined, { abortSignal: signal });
        if (!out.readableStreamBody)
          throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'the store answered without a body', context });
        const total = start > 0 ? totalFromContentRange(out.contentRange) : out.contentLength;
        return { body: out.readableStreamBody as Readable, total, fromStart: start > 0 && out.contentRange !== undefined };
      } catch (err) {
        if (start > 0 && absErrorInfo(err).status === 416) return { body: Readable.from([]), total: start, fromStart: true };
        throw mapAbsError(err, 'download', { ...context, offset: start || undefined }, signal);
      }
    },
    async size(callerSignal) {
      const signal = bound(callerSignal);
      try {
        return (await blob.getProperties({ abortSignal: signal })).contentLength;
      } catch (err) {
        throw mapAbsError(err, 'download', { ...context, step: 'properties' }, signal);
      }
    },
    // the container client is made from the SAS connection string: the blob's URL carries the SAS
    plainGet: () =>
      Promise.resolve({
        url: blob.url,
        headers: {},
        failure: (status, body, errorCode) => mapAbsError({ statusCode: status, code: errorCode, message: excerptOf(body) }, 'download', context) as SapiError,
      }),
  };
}
