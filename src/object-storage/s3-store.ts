/**
 * The S3 adapter of {@link ObjectStore}: the service's temporary credentials (`uploadParams.credentials`, or a
 * file detail's read `credentials`) or the worker's own client (staging), multipart uploads ({@link uploadMultipart}:
 * parts with CRC32, resumed from the heartbeated `{uploadId, parts}`), ranged GetObject, presigned GETs for the
 * download threads, ListObjectsV2 and DeleteObjects.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { type Dispatcher } from 'undici';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  type ServerSideEncryption,
} from '@aws-sdk/client-s3';
import { excerptOf, SapiCredentialsExpiredError, SapiErrorCode, SapiInvalidInputError, SapiTransferError, type SapiError } from '../errors';
import { type Deadline } from '../http/deadline';
import { crc32Base64, resolvePartSize, uploadMultipart, type MultipartUploadState } from './multipart-upload';
import { type ObjectReader, type ObjectStore, type StoredObject, type StoreUploadOptions } from './object-store';
import { runPartPipeline } from './part-pipeline';
import { signedPutObject } from './s3-put';
import { keyInside, totalFromContentRange } from './store-helpers';
import {
  assertCredentialsFresh,
  createS3Client,
  DEFAULT_CREDENTIALS_MARGIN_MS,
  mapS3Error,
  parseS3Uri,
  presignGetObject,
  s3ErrorCodeOf,
  s3ErrorInfo,
  type TemporaryCredentials,
} from './s3-client';

interface S3StoreOptions {
  bucket: string;
  /** Client to use (not destroyed by `close`); otherwise one is made from `credentials`, `region` and `endpoint`. */
  s3?: S3Client;
  /** Temporary credentials: checked for expiry before each part and slice. */
  credentials?: TemporaryCredentials;
  region?: string;
  /** Default `AWS_ENDPOINT_URL_S3`. */
  endpoint?: string;
  /** `AES256` or `aws:kms` (the service's `uploadParams['x-amz-server-side-encryption']`). */
  serverSideEncryption?: string;
  /** Canned ACL of uploads (`uploadParams.acl`). Not sent by default. */
  acl?: string;
  /** Credentials expiring within this margin count as expired (uploads). */
  credentialsMarginMs?: number;
  /** The end of the time each call has, the SDK's retries included (a client made here); default: none. */
  deadline?: Deadline;
  /** Every key lives under this prefix (no leading or trailing `/`): `urlOf`, `keyOf` and `list` speak of the rest. */
  prefix?: string;
  /** Create the bucket when it is missing, before the first write or list (a staging bucket of the worker's own). */
  createBucket?: boolean;
  /**
   * The pool the PUTs of an upload with temporary `credentials` and a `region` go through, signed here: a source smaller
   * than one part is sent with one PutObject ({@link signedPutObject}), no SDK client made; a larger one's parts as
   * UploadPart requests (the SDK client creates and completes the upload). Absent: through the SDK client.
   */
  dispatcher?: Dispatcher;
}

/** An S3 bucket (or a prefix of it) behind the {@link ObjectStore} interface. */
export function s3Store(options: S3StoreOptions): ObjectStore {
  const { bucket, credentials } = options;
  // made at the first call that needs it: a small upload with temporary credentials and a pool needs none
  let made: S3Client | undefined;
  const s3 = (): S3Client =>
    options.s3 ?? (made ??= createS3Client({ credentials, region: options.region, endpoint: options.endpoint, deadline: options.deadline }));
  const prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
  const full = (key: string): string => (prefix === '' ? key : `${prefix}/${key}`);
  // the worker's own keys refused are a configuration to fix, not credentials of the service to prepare again
  const fail = (err: unknown, op: 'upload' | 'download', context: Record<string, string | number | undefined>, signal?: AbortSignal): unknown => {
    const mapped = mapS3Error(err, op, context, signal);
    if (credentials || !(mapped instanceof SapiCredentialsExpiredError)) return mapped;
    const { name, status } = s3ErrorInfo(err);
    return new SapiTransferError({
      code: op === 'upload' ? SapiErrorCode.UPLOAD_FAILED : SapiErrorCode.DOWNLOAD_FAILED,
      message: `${op} refused (${name ?? mapped.serviceCode}${status ? ` ${status}` : ''}): check the worker's S3 keys`,
      context,
      retryable: false,
      serviceCode: name,
      status,
      cause: err,
    });
  };
  let ready: Promise<void> | undefined;
  const ensureBucket = (): Promise<void> | undefined => {
    if (!options.createBucket) return undefined;
    ready ??= (async () => {
      try {
        await s3().send(new HeadBucketCommand({ Bucket: bucket }));
        return;
      } catch (err) {
        const { name, status } = s3ErrorInfo(err);
        if (status !== 404 && name !== 'NotFound' && name !== 'NoSuchBucket') throw fail(err, 'download', { bucket, step: 'head bucket' });
      }
      try {
        await s3().send(new CreateBucketCommand({ Bucket: bucket }));
      } catch (err) {
        const { name } = s3ErrorInfo(err);
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw fail(err, 'upload', { bucket, step: 'create bucket' });
      }
    })().catch((err: unknown) => {
      ready = undefined; // try again on the next call
      throw err;
    });
    return ready;
  };
  return {
    provider: 'aws',
    container: bucket,
    expiration: credentials?.Expiration,
    urlOf: (key) => `s3://${bucket}/${full(key)}`,
    keyOf(url) {
      const parsed = parseS3Uri(url);
      const key = keyInside({ container: parsed.bucket, key: parsed.key }, bucket, url);
      if (prefix === '') return key;
      if (!key.startsWith(`${prefix}/`)) throw new SapiInvalidInputError(`${url} is outside s3://${bucket}/${prefix}/`);
      return key.slice(prefix.length + 1);
    },
    reader: (key) => s3Reader(s3(), bucket, full(key)),
    async put(key, content, contentType = 'application/octet-stream', signal) {
      await ensureBucket();
      const body = typeof content === 'string' ? Buffer.from(content) : content;
      try {
        await s3().send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: full(key),
            Body: body,
            ContentLength: body.length,
            ContentType: contentType,
            ContentMD5: createHash('md5').update(body).digest('base64'),
            ServerSideEncryption: options.serverSideEncryption as ServerSideEncryption | undefined,
          }),
          { abortSignal: signal },
        );
      } catch (err) {
        throw fail(err, 'upload', { bucket, key: full(key) }, signal);
      }
    },
    async upload(o) {
      await ensureBucket();
      const key = full(o.key);
      const previous = o.resume as MultipartUploadState | undefined;
      try {
        if (
          credentials &&
          options.dispatcher &&
          options.region &&
          !o.gzip &&
          o.source.size !== undefined &&
          o.source.size < resolvePartSize(o.partSizeBytes, o.source.size)
        ) {
          return await putSmall({ ...options, credentials, dispatcher: options.dispatcher, region: options.region }, key, o);
        }
        return await uploadMultipart({
          s3: s3(),
          credentials,
          bucket,
          key,
          source: o.source,
          partSizeBytes: o.partSizeBytes,
          concurrency: o.concurrency,
          contentType: o.contentType,
          gzip: o.gzip,
          serverSideEncryption: options.serverSideEncryption,
          acl: options.acl,
          credentialsMarginMs: options.credentialsMarginMs,
          // the service's credentials and the worker's pool: parts signed here, no SDK middleware per part
          signedParts:
            credentials && options.dispatcher && options.region
              ? { dispatcher: options.dispatcher, region: options.region, endpoint: options.endpoint, deadline: options.deadline }
              : undefined,
          resume:
            previous?.key === key && previous.uploadId
              ? { uploadId: previous.uploadId, parts: previous.parts, partSizeBytes: previous.partSizeBytes, checksum: previous.checksum }
              : undefined,
          onProgress: (state) => o.onProgress?.(state, state.bytesSent),
          signal: o.signal,
        });
      } catch (err) {
        throw fail(err, 'upload', { bucket, key }, o.signal);
      }
    },
    async list(listPrefix, signal) {
      await ensureBucket();
      const strip = prefix === '' ? 0 : prefix.length + 1;
      const keys: string[] = [];
      let token: string | undefined;
      try {
        do {
          const page = await s3().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: full(listPrefix), ContinuationToken: token }), {
            abortSignal: signal,
          });
          for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(strip));
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      } catch (err) {
        throw fail(err, 'download', { bucket, prefix: full(listPrefix), step: 'list' }, signal);
      }
      return keys.sort();
    },
    async delete(keys, signal) {
      if (keys.length === 0) return;
      await ensureBucket();
      for (let i = 0; i < keys.length; i += 1000) {
        const objects = keys.slice(i, i + 1000).map((k) => ({ Key: full(k) }));
        try {
          await s3().send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }), { abortSignal: signal });
        } catch (err) {
          throw fail(err, 'upload', { bucket, key: `${objects[0]!.Key}…`, step: 'delete' }, signal);
        }
      }
    },
    assertFresh: (where, marginMs) => assertCredentialsFresh(credentials, where, marginMs),
    close() {
      made?.destroy();
    },
  };
}

/**
 * A source smaller than one part, as `uploadMultipart` sends it (one PutObject, its CRC32 — or Content-MD5 — checked
 * by the store and compared with what it echoes, the source's sha256 computed while it is read), but signed here and
 * sent through the worker's pool: no SDK client is made for it.
 */
async function putSmall(
  options: S3StoreOptions & { credentials: TemporaryCredentials; dispatcher: Dispatcher; region: string },
  key: string,
  o: StoreUploadOptions,
): Promise<StoredObject> {
  const { bucket, credentials } = options;
  const context = { bucket, key };
  assertCredentialsFresh(credentials, `upload [bucket=${bucket}, key=${key}]`, options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS);
  const partSize = resolvePartSize(o.partSizeBytes, o.source.size);
  let sent = false;
  const read = await runPartPipeline({
    source: o.source,
    partSize,
    concurrency: 1,
    context,
    signal: o.signal,
    part(index, data) {
      // the source grew past the size it announced while it was read: an attempt that reads it again decides
      if (index > 1 || data.length >= partSize) {
        throw new SapiTransferError({
          code: SapiErrorCode.UPLOAD_FAILED,
          message: `source changed during the upload: more than the ${o.source.size} bytes it announced`,
          context: { ...context, source: o.source.description },
        });
      }
      return async () => {
        const md5 = typeof crc32 === 'function' ? undefined : createHash('md5').update(data).digest();
        const crc = md5 ? undefined : crc32Base64(data);
        let out: { etag?: string; checksumCrc32?: string };
        try {
          out = await signedPutObject({
            credentials,
            region: options.region,
            endpoint: options.endpoint,
            bucket,
            key,
            body: data,
            contentType: o.contentType,
            acl: options.acl,
            serverSideEncryption: options.serverSideEncryption,
            checksumHeaders: md5 ? { 'content-md5': md5.toString('base64') } : { 'x-amz-checksum-crc32': crc! },
            dispatcher: options.dispatcher,
            deadline: options.deadline,
            signal: o.signal,
          });
        } catch (err) {
          // the pipeline wraps what is not ours: S3's code and status are mapped here
          throw mapS3Error(err, 'upload', context, o.signal);
        }
        if (!out.etag) throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'the store returned no ETag', context });
        const etag = out.etag.replace(/"/g, '').toLowerCase();
        const differs = crc
          ? out.checksumCrc32 !== undefined && out.checksumCrc32 !== crc
          : options.serverSideEncryption !== 'aws:kms' && /^[0-9a-f]{32}$/.test(etag) && etag !== md5!.toString('hex');
        if (differs) {
          throw new SapiTransferError({
            code: SapiErrorCode.CHECKSUM_MISMATCH,
            message: `stored object differs from what was sent: ${crc ? `CRC32 ${out.checksumCrc32}, sent ${crc}` : `ETag ${etag}, MD5 ${md5!.toString('hex')}`}`,
            context,
          });
        }
        sent = true;
      };
    },
  });
  if (!sent) throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'nothing was uploaded', context });
  return { parts: 1, partsUploaded: 1, bytes: read.storedBytes, sourceBytes: read.sourceBytes, sha256: read.sha256, resumed: false };
}

/** One S3 object: ranged GetObject, HeadObject, a presigned GET. */
function s3Reader(s3: S3Client, bucket: string, key: string): ObjectReader {
  return {
    label: `s3://${bucket}/${key}`,
    gz: /\.gz$/i.test(key),
    async get(start, signal) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: start > 0 ? `bytes=${start}-` : undefined }), {
          abortSignal: signal,
        });
        const total = start > 0 ? totalFromContentRange(out.ContentRange) : out.ContentLength;
        // A store that ignores Range answers the whole object: then we restart the file.
        const fromStart = start > 0 && out.ContentRange !== undefined;
        return { body: out.Body as Readable, total, fromStart };
      } catch (err) {
        if (start > 0 && s3ErrorInfo(err).name === 'InvalidRange') return { body: Readable.from([]), total: start, fromStart: true };
        throw mapS3Error(err, 'download', { bucket, key, offset: start || undefined }, signal);
      }
    },
    async size(signal) {
      try {
        return (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal: signal })).ContentLength;
      } catch (err) {
        throw mapS3Error(err, 'download', { bucket, key, step: 'head' }, signal);
      }
    },
    async plainGet(validSeconds) {
      return {
        url: await presignGetObject(s3, bucket, key, validSeconds),
        headers: {},
        failure: (status, body) =>
          mapS3Error({ Code: s3ErrorCodeOf(body), $metadata: { httpStatusCode: status }, message: excerptOf(body) }, 'download', { bucket, key }) as SapiError,
      };
    },
  };
}
