/**
 * Sliced upload: several sources become the slices of one sliced file (`prepare` with `isSliced`), stored at
 * `keyPrefix + "part_00000"`, `…00001`, … with the manifest at `keyPrefix + "manifest"`:
 * `{"entries":[{"url":"s3://bucket/key","mandatory":true}, …]}` in slice order.
 * Resumable: finished slices are skipped and a slice's multipart upload resumes from its finished parts.
 */
import { PutObjectCommand, type S3Client, type ServerSideEncryption } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { SapiInvalidInputError } from '../errors';
import { forEachBounded } from './concurrency';
import { DEFAULT_UPLOAD_CONCURRENCY, uploadMultipart, type MultipartUploadState } from './multipart-upload';
import { assertCredentialsFresh, createS3Client, DEFAULT_CREDENTIALS_MARGIN_MS, mapS3Error, throwIfAborted, type TemporaryCredentials } from './s3-client';
import { type ByteSource } from './sources';

/** One stored slice. */
export interface UploadedSlice {
  index: number;
  key: string;
  /** Stored bytes (compressed with gzip). */
  bytes: number;
  /** Hex sha256 of the slice's source bytes. */
  sha256?: string;
}

/** Progress of a sliced upload: what a retry needs to resume (JSON, no secrets). */
export interface SlicedUploadState {
  finished: UploadedSlice[];
  /** Multipart uploads of slices not finished yet. */
  inProgress: { index: number; upload: MultipartUploadState }[];
  /** Slices in total. */
  slices: number;
}

export interface UploadSlicedOptions {
  s3?: S3Client;
  credentials?: TemporaryCredentials;
  region?: string;
  endpoint?: string;
  bucket: string;
  /** `uploadParams.key` of a sliced prepare: a prefix. */
  keyPrefix: string;
  /** Sources in slice order (local paths, URIs or {@link ByteSource}s). */
  slices: readonly (string | ByteSource)[];
  partSizeBytes?: number;
  /** Total parts in flight across slices. Default 4. Small slices go up in parallel; one big slice gets them all. */
  concurrency?: number;
  /** Compress each slice (keys get a `.gz` suffix). */
  gzip?: boolean;
  serverSideEncryption?: string;
  acl?: string;
  resume?: SlicedUploadState;
  /** Called after each finished part and slice. */
  onProgress?: (state: SlicedUploadState) => void;
  /** Key of slice `index`. Default `keyPrefix + "part_" + 5-digit index` (+ `.gz`). */
  sliceKey?: (index: number) => string;
  credentialsMarginMs?: number;
  signal?: AbortSignal;
}

export interface UploadSlicedResult {
  bucket: string;
  keyPrefix: string;
  manifestKey: string;
  manifest: { entries: { url: string; mandatory: boolean }[] };
  slices: UploadedSlice[];
  /** Stored bytes of all slices. */
  bytes: number;
  /** Slices sent by this call. */
  slicesUploaded: number;
}

/** Uploads slices and the manifest. See the module doc. */
export async function uploadSliced(options: UploadSlicedOptions): Promise<UploadSlicedResult> {
  const { bucket, keyPrefix, signal } = options;
  if (options.slices.length === 0) throw new SapiInvalidInputError('uploadSliced needs at least one slice');
  const concurrency = options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY;
  const margin = options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS;
  assertCredentialsFresh(options.credentials, `sliced upload [bucket=${bucket}, prefix=${keyPrefix}]`, margin);
  const s3 = options.s3 ?? createS3Client({ credentials: options.credentials, region: options.region, endpoint: options.endpoint });
  const sliceKey = options.sliceKey ?? ((i: number) => `${keyPrefix}part_${String(i).padStart(5, '0')}${options.gzip ? '.gz' : ''}`);

  const finished = new Map<number, UploadedSlice>();
  for (const s of options.resume?.finished ?? []) if (s.index < options.slices.length && s.key === sliceKey(s.index)) finished.set(s.index, s);
  const inProgress = new Map<number, MultipartUploadState>();
  for (const p of options.resume?.inProgress ?? []) if (!finished.has(p.index)) inProgress.set(p.index, p.upload);

  const report = (): void =>
    options.onProgress?.({
      finished: [...finished.values()].sort((a, b) => a.index - b.index),
      inProgress: [...inProgress.entries()].sort(([a], [b]) => a - b).map(([index, upload]) => ({ index, upload })),
      slices: options.slices.length,
    });

  const todo = options.slices.map((_, i) => i).filter((i) => !finished.has(i));
  const perSlice = Math.max(1, Math.floor(concurrency / Math.max(1, Math.min(concurrency, todo.length))));
  let slicesUploaded = 0;
  try {
    await forEachBounded(todo, Math.min(concurrency, todo.length), async (index) => {
      throwIfAborted(signal);
      const key = sliceKey(index);
      const previous = inProgress.get(index);
      const result = await uploadMultipart({
        s3,
        credentials: options.credentials,
        bucket,
        key,
        source: options.slices[index] as string | ByteSource,
        partSizeBytes: options.partSizeBytes,
        concurrency: perSlice,
        resume: previous && previous.key === key ? { uploadId: previous.uploadId, parts: previous.parts, partSizeBytes: previous.partSizeBytes, checksum: previous.checksum } : undefined,
        gzip: options.gzip,
        serverSideEncryption: options.serverSideEncryption,
        acl: options.acl,
        credentialsMarginMs: margin,
        signal,
        onProgress: (state) => {
          inProgress.set(index, state);
          report();
        },
      });
      inProgress.delete(index);
      finished.set(index, { index, key, bytes: result.bytes, sha256: result.sha256 });
      slicesUploaded++;
      report();
    });

    const manifest = { entries: options.slices.map((_, i) => ({ url: `s3://${bucket}/${sliceKey(i)}`, mandatory: true })) };
    const manifestKey = `${keyPrefix}manifest`;
    const body = Buffer.from(JSON.stringify(manifest));
    throwIfAborted(signal);
    assertCredentialsFresh(options.credentials, `sliced upload [bucket=${bucket}, key=${manifestKey}]`, 0);
    try {
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: manifestKey,
          Body: body,
          ContentLength: body.length,
          ContentType: 'application/json',
          ContentMD5: createHash('md5').update(body).digest('base64'),
          ServerSideEncryption: options.serverSideEncryption as ServerSideEncryption | undefined,
        }),
        { abortSignal: signal },
      );
    } catch (err) {
      throw mapS3Error(err, 'upload', { bucket, key: manifestKey }, signal);
    }
    const slices = [...finished.values()].sort((a, b) => a.index - b.index);
    return { bucket, keyPrefix, manifestKey, manifest, slices, bytes: slices.reduce((n, s) => n + s.bytes, 0), slicesUploaded };
  } finally {
    if (!options.s3) s3.destroy();
  }
}
