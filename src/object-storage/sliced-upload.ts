/**
 * Sliced upload, over any {@link ObjectStore}: several sources become the slices of one sliced file (`prepare` with
 * `isSliced`), stored at `keyPrefix + "part_00000"`, `…00001`, … (+ `.gz`) with the manifest at
 * `keyPrefix + "manifest"`: `{"entries":[{"url":"s3://bucket/key","mandatory":true}, …]}` in slice order, each URL
 * in the store's own scheme (`s3://`, `azure://`, `gs://`).
 *
 * - Resumable: finished slices are skipped and a slice's upload resumes from the store's resume point (multipart
 *   parts, staged blocks, a session's persisted offset), all heartbeated in one {@link SlicedUploadState}.
 * - Bounded: at most `concurrency` parts in flight across slices: small slices go up in parallel, one big slice gets
 *   them all; memory ≈ (concurrency + slices in flight) × part size.
 */
import { SapiInvalidInputError } from '../errors';
import { forEachBounded } from './concurrency';
import { DEFAULT_UPLOAD_CONCURRENCY, type MultipartUploadState } from './multipart-upload';
import { type ObjectStore } from './object-store';
import { type TemporaryCredentials, DEFAULT_CREDENTIALS_MARGIN_MS, throwIfAborted } from './s3-client';
import { s3Store } from './s3-store';
import { openSource, type ByteSource } from './sources';
import type { S3Client } from '@aws-sdk/client-s3';

/** One stored slice. */
interface UploadedSlice {
  index: number;
  key: string;
  /** Stored bytes (compressed with gzip). */
  bytes: number;
  /** Hex sha256 of the slice's source bytes. */
  sha256?: string;
}

/** Progress of a sliced upload: what a retry needs to resume (JSON; secrets sealed by the store). */
export interface SlicedUploadState<U = unknown> {
  finished: UploadedSlice[];
  /** The store's resume points of slices not finished yet. */
  inProgress: { index: number; upload: U }[];
  /** Slices in total. */
  slices: number;
}

interface UploadSlicesOptions {
  /** `uploadParams.key` (Azure: `blobName`, GCS: `key`) of a sliced prepare: a prefix. */
  keyPrefix: string;
  /** Sources in slice order (local paths, URIs or {@link ByteSource}s). */
  slices: readonly (string | ByteSource)[];
  partSizeBytes?: number;
  /** Total parts in flight across slices. Default {@link DEFAULT_UPLOAD_CONCURRENCY}. */
  concurrency?: number;
  /** Compress each slice (keys get a `.gz` suffix). */
  gzip?: boolean;
  resume?: SlicedUploadState;
  /** Called after each finished part and slice. */
  onProgress?: (state: SlicedUploadState) => void;
  /** Key of slice `index`. Default `keyPrefix + "part_" + 5-digit index` (+ `.gz`). */
  sliceKey?: (index: number) => string;
  /** Credentials expiring within this margin count as expired. Default 5 min. */
  credentialsMarginMs?: number;
  signal?: AbortSignal;
}

interface UploadSlicesResult {
  keyPrefix: string;
  manifestKey: string;
  manifest: { entries: { url: string; mandatory: boolean }[] };
  slices: UploadedSlice[];
  /** Stored bytes of all slices. */
  bytes: number;
  /** Slices sent by this call. */
  slicesUploaded: number;
}

/** Uploads slices and the manifest to `store`. See the module doc. */
export async function uploadSlices(store: ObjectStore, options: UploadSlicesOptions): Promise<UploadSlicesResult> {
  const { keyPrefix, signal } = options;
  const count = options.slices.length;
  if (count === 0) throw new SapiInvalidInputError(`sliced upload [${store.container}, prefix=${keyPrefix}] needs at least one slice`);
  const concurrency = options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new SapiInvalidInputError(`concurrency must be a positive integer (got ${concurrency})`);
  const margin = options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS;
  const where = (key: string): string => `sliced upload [${store.provider}=${store.container}, ${key}]`;
  store.assertFresh(where(`prefix=${keyPrefix}`), margin);
  const sliceKey = options.sliceKey ?? ((i: number) => `${keyPrefix}part_${String(i).padStart(5, '0')}${options.gzip ? '.gz' : ''}`);
  // built first: a store that cannot name its objects in a manifest fails before any byte moves
  const manifest = { entries: options.slices.map((_, i) => ({ url: store.urlOf(sliceKey(i)), mandatory: true })) };

  const finished = new Map<number, UploadedSlice>();
  for (const s of options.resume?.finished ?? []) {
    const key = s.key ?? (s as { blobName?: string }).blobName; // Azure heartbeats before the common state named it blobName
    if (s.index < count && key === sliceKey(s.index)) finished.set(s.index, { ...s, key });
  }
  const inProgress = new Map<number, unknown>();
  for (const p of options.resume?.inProgress ?? []) if (!finished.has(p.index)) inProgress.set(p.index, p.upload);
  const report = (): void =>
    options.onProgress?.({
      finished: [...finished.values()].sort((a, b) => a.index - b.index),
      inProgress: [...inProgress.entries()].sort(([a], [b]) => a - b).map(([index, upload]) => ({ index, upload })),
      slices: count,
    });

  const todo = options.slices.map((_, i) => i).filter((i) => !finished.has(i));
  const inFlight = Math.max(1, Math.min(concurrency, todo.length));
  const perSlice = Math.max(1, Math.floor(concurrency / inFlight));
  let slicesUploaded = 0;
  await forEachBounded(todo, inFlight, async (index) => {
    throwIfAborted(signal);
    const key = sliceKey(index);
    const given = options.slices[index] as string | ByteSource;
    const stored = await store.upload({
      key,
      source: typeof given === 'string' ? await openSource(given, { signal }) : given,
      partSizeBytes: options.partSizeBytes,
      concurrency: perSlice,
      gzip: options.gzip,
      resume: inProgress.get(index),
      onProgress: (state) => {
        inProgress.set(index, state);
        report();
      },
      signal,
    });
    inProgress.delete(index);
    finished.set(index, { index, key, bytes: stored.bytes, sha256: stored.sha256 });
    slicesUploaded++;
    report();
  });

  const manifestKey = `${keyPrefix}manifest`;
  throwIfAborted(signal);
  store.assertFresh(where(`key=${manifestKey}`), 0);
  await store.put(manifestKey, Buffer.from(JSON.stringify(manifest)), 'application/json', signal);
  const slices = [...finished.values()].sort((a, b) => a.index - b.index);
  return { keyPrefix, manifestKey, manifest, slices, bytes: slices.reduce((n, s) => n + s.bytes, 0), slicesUploaded };
}

interface UploadSlicedOptions extends Omit<UploadSlicesOptions, 'resume' | 'onProgress'> {
  s3?: S3Client;
  credentials?: TemporaryCredentials;
  region?: string;
  endpoint?: string;
  bucket: string;
  serverSideEncryption?: string;
  acl?: string;
  resume?: SlicedUploadState<MultipartUploadState>;
  onProgress?: (state: SlicedUploadState<MultipartUploadState>) => void;
}

interface UploadSlicedResult extends UploadSlicesResult {
  bucket: string;
}

/** {@link uploadSlices} to an S3 bucket (the S3 adapter made from `s3` or `credentials`). */
export async function uploadSliced(options: UploadSlicedOptions): Promise<UploadSlicedResult> {
  const { s3, credentials, region, endpoint, bucket, serverSideEncryption, acl, onProgress, ...rest } = options;
  const store = s3Store({ s3, credentials, region, endpoint, bucket, serverSideEncryption, acl, credentialsMarginMs: options.credentialsMarginMs });
  try {
    const result = await uploadSlices(store, { ...rest, onProgress: onProgress as ((state: SlicedUploadState) => void) | undefined });
    return { bucket, ...result };
  } finally {
    store.close();
  }
}
