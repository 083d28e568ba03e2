/**
 * The S3 adapter of {@link ObjectStore}: the service's temporary credentials (`uploadParams.credentials`, or a
 * file detail's read `credentials`), multipart uploads ({@link uploadMultipart}: parts with CRC32, resumed from the
 * heartbeated `{uploadId, parts}`), ranged GetObject, presigned GETs for the download threads.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client, type ServerSideEncryption } from '@aws-sdk/client-s3';
import { excerptOf, type SapiError } from '../errors';
import { uploadMultipart, type MultipartUploadState } from './multipart-upload';
import { type ObjectReader, type ObjectStore } from './object-store';
import { keyInside, totalFromContentRange } from './store-helpers';
import { assertCredentialsFresh, createS3Client, mapS3Error, parseS3Uri, presignGetObject, s3ErrorCodeOf, s3ErrorInfo, type TemporaryCredentials } from './s3-client';

export interface S3StoreOptions {
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
}

/** An S3 bucket behind the {@link ObjectStore} interface. */
export function s3Store(options: S3StoreOptions): ObjectStore {
  const { bucket, credentials } = options;
  const s3 = options.s3 ?? createS3Client({ credentials, region: options.region, endpoint: options.endpoint });
  return {
    provider: 'aws',
    container: bucket,
    expiration: credentials?.Expiration,
    urlOf: (key) => `s3://${bucket}/${key}`,
    keyOf(url) {
      const parsed = parseS3Uri(url);
      return keyInside({ container: parsed.bucket, key: parsed.key }, bucket, url);
    },
    reader: (key) => s3Reader(s3, bucket, key),
    async put(key, body, contentType, signal) {
      try {
        await s3.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: body,
            ContentLength: body.length,
            ContentType: contentType,
            ContentMD5: createHash('md5').update(body).digest('base64'),
            ServerSideEncryption: options.serverSideEncryption as ServerSideEncryption | undefined,
          }),
          { abortSignal: signal },
        );
      } catch (err) {
        throw mapS3Error(err, 'upload', { bucket, key }, signal);
      }
    },
    async upload(o) {
      const previous = o.resume as MultipartUploadState | undefined;
      const result = await uploadMultipart({
        s3,
        credentials,
        bucket,
        key: o.key,
        source: o.source,
        partSizeBytes: o.partSizeBytes,
        concurrency: o.concurrency,
        contentType: o.contentType,
        gzip: o.gzip,
        serverSideEncryption: options.serverSideEncryption,
        acl: options.acl,
        credentialsMarginMs: options.credentialsMarginMs,
        resume:
          previous?.key === o.key && previous.uploadId
            ? { uploadId: previous.uploadId, parts: previous.parts, partSizeBytes: previous.partSizeBytes, checksum: previous.checksum }
            : undefined,
        onProgress: (state) => o.onProgress?.(state, state.bytesSent),
        signal: o.signal,
      });
      return result;
    },
    assertFresh: (where, marginMs) => assertCredentialsFresh(credentials, where, marginMs),
    close() {
      if (!options.s3) s3.destroy();
    },
  };
}

/** One S3 object: ranged GetObject, HeadObject, a presigned GET. */
export function s3Reader(s3: S3Client, bucket: string, key: string): ObjectReader {
  return {
    label: `s3://${bucket}/${key}`,
    gz: /\.gz$/i.test(key),
    async get(start, signal) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: start > 0 ? `bytes=${start}-` : undefined }), { abortSignal: signal });
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
        failure: (status, body) => mapS3Error({ Code: s3ErrorCodeOf(body), $metadata: { httpStatusCode: status }, message: excerptOf(body) }, 'download', { bucket, key }) as SapiError,
      };
    },
  };
}
