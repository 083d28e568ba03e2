/**
 * Resumable multipart upload to object storage with the service's temporary credentials.
 *
 * - The source is read once, sequentially, and cut into parts; at most `concurrency` parts are buffered
 *   (memory ≈ (concurrency + 1) × partSizeBytes, whatever the file size).
 * - Every part carries a checksum the store verifies: CRC32 by default (`x-amz-checksum-crc32`, computed with
 *   zlib's native crc32, ~7× cheaper than MD5, and echoed back by the store), or Content-MD5 (then the ETag is also
 *   compared with the MD5 when the store returns MD5 ETags, i.e. without KMS encryption).
 * - After each finished part `onProgress` receives `{uploadId, parts, bytesSent}`: the activity heartbeats it and
 *   passes it back as `resume` on retry; finished parts are then only read (for the sha256) and not sent again.
 * - The service's upload credentials can neither ListParts nor AbortMultipartUpload: we never call them. An
 *   abandoned upload expires through the bucket's lifecycle rules.
 * - Sources smaller than one part go up with one PutObject.
 * - With `signedParts` (the service's credentials and the worker's pool), each part is an UploadPart request signed
 *   here and sent with undici (`s3-put.ts`): through the SDK client each 8 MiB part cost ~1.5 ms more CPU.
 * - `gzip` compresses on the fly; part boundaries are then on the compressed stream, which is not guaranteed to be
 *   byte-identical on a second run, so a gzip upload never resumes: it restarts with a new upload id.
 */
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { type Dispatcher } from 'undici';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type ChecksumAlgorithm,
  type ObjectCannedACL,
  type S3Client,
  type ServerSideEncryption,
} from '@aws-sdk/client-s3';
import { SapiError, SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { type Deadline } from '../http/deadline';
import {
  assertCredentialsFresh,
  createS3Client,
  DEFAULT_CREDENTIALS_MARGIN_MS,
  mapS3Error,
  s3ErrorInfo,
  throwIfAborted,
  type TemporaryCredentials,
} from './s3-client';
import { type StoredObject } from './object-store';
import { assertSourceUnchanged, runPartPipeline } from './part-pipeline';
import { signedPartSender, type SignedPartSender } from './s3-put';

export { chunkParts, PartBufferPool } from './part-pipeline';
import { openSource, type ByteSource } from './sources';

/** Default part size: 8 MiB (as the AWS CLI): with 4 parts in flight an upload holds 40 MiB of buffers. */
export const DEFAULT_PART_SIZE_BYTES = 8 * 1024 * 1024;
/** Smallest part S3 accepts (except the last): 5 MiB. */
export const MIN_PART_SIZE_BYTES = 5 * 1024 * 1024;
/** Largest part S3 accepts: 5 GiB. */
const MAX_PART_SIZE_BYTES = 5 * 1024 * 1024 * 1024;
/** Most parts in one upload. */
const MAX_PARTS = 10_000;
/** Parts uploaded in parallel by default: 4. */
export const DEFAULT_UPLOAD_CONCURRENCY = 4;

/** How parts are checksummed. `CRC32` is fixed at CreateMultipartUpload and must be repeated at completion. */
type PartChecksum = 'CRC32' | 'MD5';

/** Default part checksum: CRC32 (native zlib, cheap); MD5 on runtimes without `zlib.crc32`. */
const DEFAULT_PART_CHECKSUM: PartChecksum = typeof crc32 === 'function' ? 'CRC32' : 'MD5';

/** One finished part, as recorded in heartbeats. */
interface UploadedPart {
  PartNumber: number;
  ETag: string;
  /** Bytes of the part. */
  size: number;
  /** Base64 CRC32 of the part (CRC32 uploads): needed to complete and to check a resumed source. */
  ChecksumCRC32?: string;
}

/** Progress of a multipart upload: what a retry needs to resume (JSON, no secrets). */
export interface MultipartUploadState {
  bucket: string;
  key: string;
  uploadId: string;
  partSizeBytes: number;
  checksum: PartChecksum;
  /** Finished parts, sorted by number. */
  parts: UploadedPart[];
  /** Bytes in finished parts. */
  bytesSent: number;
}

/** What a retry passes back. `partSizeBytes` must match the first run (it is taken from here when present). */
interface MultipartResume {
  uploadId: string;
  parts: readonly UploadedPart[];
  partSizeBytes?: number;
  /** The checksum the upload was created with. Default: CRC32 when the parts carry `ChecksumCRC32`, else MD5. */
  checksum?: PartChecksum;
}

interface UploadMultipartOptions {
  /** S3 client to use; otherwise one is made from `credentials` (+ `region`, `endpoint`). */
  s3?: S3Client;
  /** Temporary credentials of the destination: checked for expiry before each part. */
  credentials?: TemporaryCredentials;
  region?: string;
  /** Default `AWS_ENDPOINT_URL_S3`. */
  endpoint?: string;
  bucket: string;
  key: string;
  /** A local path or URI (`s3://`, `http(s)://`), or a {@link ByteSource}. */
  source: string | ByteSource;
  /** Default {@link DEFAULT_PART_SIZE_BYTES}; at least {@link MIN_PART_SIZE_BYTES}; grown when needed to stay ≤ 10 000 parts. */
  partSizeBytes?: number;
  /** Parts in flight. Default {@link DEFAULT_UPLOAD_CONCURRENCY}. */
  concurrency?: number;
  resume?: MultipartResume;
  /** Called after the upload is created and after each finished part. Keep it cheap (heartbeat). */
  onProgress?: (state: MultipartUploadState) => void;
  /** `AES256` or `aws:kms` (the service's `uploadParams['x-amz-server-side-encryption']`). */
  serverSideEncryption?: string;
  /** Canned ACL (the service's `uploadParams.acl`, e.g. `private`). Not sent by default. */
  acl?: string;
  contentType?: string;
  /** Compress on the fly (never resumes: see module doc). */
  gzip?: boolean;
  /** Part checksum of a new upload. Default {@link DEFAULT_PART_CHECKSUM}. */
  checksum?: PartChecksum;
  /** Compute the sha256 of the source bytes. Default true; false lets a resume skip reading finished parts. */
  sha256?: boolean;
  /** Credentials expiring within this margin count as expired. Default 5 min. */
  credentialsMarginMs?: number;
  /**
   * With `credentials`: the parts go up as UploadPart requests signed here and sent through this pool
   * ({@link signedPartSender}), not through the SDK client (which still creates and completes the upload).
   */
  signedParts?: { dispatcher: Dispatcher; region: string; endpoint?: string; deadline?: Deadline };
  signal?: AbortSignal;
}

/** What {@link uploadMultipart} stored (`parts` is 1 for PutObject; `sha256` absent with `sha256: false` when a resume skipped reading). */
interface UploadMultipartResult extends StoredObject {
  bucket: string;
  key: string;
  /** False when the source fit in one part and went up with PutObject. */
  multipart: boolean;
  uploadId?: string;
  /** ETag of the stored object. */
  etag?: string;
  /** True when a `resume` state had to be dropped (gzip, or the upload no longer exists) and the upload restarted. */
  restarted: boolean;
  /** Part buffers this call allocated: at most concurrency + 1, whatever the file size (its memory, in parts). */
  partBuffers: number;
}

/** Uploads a source to `s3://bucket/key`, resumably. See the module doc. */
export async function uploadMultipart(options: UploadMultipartOptions): Promise<UploadMultipartResult> {
  if (!options.bucket || !options.key)
    throw new SapiInvalidInputError(`uploadMultipart needs bucket and key (got bucket=${options.bucket}, key=${options.key})`);
  const concurrency = options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new SapiInvalidInputError(`concurrency must be a positive integer (got ${concurrency})`);
  const where = `upload [bucket=${options.bucket}, key=${options.key}]`;
  assertCredentialsFresh(options.credentials, where, options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS);
  const s3 = options.s3 ?? createS3Client({ credentials: options.credentials, region: options.region, endpoint: options.endpoint });
  const source = typeof options.source === 'string' ? await openSource(options.source, { signal: options.signal }) : options.source;
  try {
    let resume = options.resume;
    let restarted = false;
    if (resume && options.gzip) {
      resume = undefined;
      restarted = true;
    }
    try {
      return { ...(await runUpload(s3, source, options, concurrency, resume)), restarted };
    } catch (err) {
      // The upload id is gone (expired, or completed by an attempt that crashed before recording it): start over.
      const name = err instanceof SapiError ? err.serviceCode : s3ErrorInfo(err).name;
      if (resume && name === 'NoSuchUpload' && !options.signal?.aborted) {
        return { ...(await runUpload(s3, source, options, concurrency, undefined)), restarted: true };
      }
      throw err;
    }
  } finally {
    if (!options.s3) s3.destroy();
  }
}

/** The part size actually used: the wish, grown so that a known size fits in {@link MAX_PARTS}. */
export function resolvePartSize(wish: number | undefined, sizeBytes: number | undefined): number {
  const partSize = wish ?? DEFAULT_PART_SIZE_BYTES;
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART_SIZE_BYTES || partSize > MAX_PART_SIZE_BYTES) {
    throw new SapiInvalidInputError(`partSizeBytes must be between ${MIN_PART_SIZE_BYTES} (5 MiB) and ${MAX_PART_SIZE_BYTES} (5 GiB), got ${partSize}`);
  }
  if (sizeBytes === undefined || sizeBytes <= partSize * MAX_PARTS) return partSize;
  const mib = 1024 * 1024;
  return Math.ceil(sizeBytes / MAX_PARTS / mib) * mib;
}

async function runUpload(
  s3: S3Client,
  source: ByteSource,
  options: UploadMultipartOptions,
  concurrency: number,
  resume: MultipartResume | undefined,
): Promise<Omit<UploadMultipartResult, 'restarted'>> {
  const { bucket, key, signal } = options;
  const margin = options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS;
  const partSize = resume?.partSizeBytes ?? resolvePartSize(options.partSizeBytes, options.gzip ? undefined : source.size);
  const wantSha = options.sha256 ?? true;
  const checksum: PartChecksum = resume
    ? (resume.checksum ?? (resume.parts.some((p) => p.ChecksumCRC32) ? 'CRC32' : 'MD5'))
    : (options.checksum ?? DEFAULT_PART_CHECKSUM);
  const done = new Map<number, UploadedPart>();
  for (const p of resume?.parts ?? []) {
    // A CRC32 upload cannot be completed without each part's checksum: such a part is sent again.
    if (checksum === 'CRC32' && !p.ChecksumCRC32) continue;
    done.set(p.PartNumber, { ...p });
  }
  let uploadId = resume?.uploadId;
  const verifyEtag = options.serverSideEncryption !== 'aws:kms';
  const common = {
    ServerSideEncryption: options.serverSideEncryption as ServerSideEncryption | undefined,
  };

  // Without a hash to compute, a resume whose parts 1..k are finished starts reading at part k+1.
  let firstPart = 1;
  if (resume && !wantSha) {
    while (done.get(firstPart)?.size === partSize) firstPart++;
  }
  const skipped = firstPart - 1;

  const report = (): void => {
    if (!options.onProgress || !uploadId) return;
    const parts = [...done.values()].sort((a, b) => a.PartNumber - b.PartNumber);
    options.onProgress({ bucket, key, uploadId, partSizeBytes: partSize, checksum, parts, bytesSent: parts.reduce((n, p) => n + p.size, 0) });
  };

  let single: { etag?: string } | undefined;

  // the parts' signed requests (with `signedParts`), made once the upload id is known
  let signedSender: Promise<SignedPartSender> | undefined;
  const signedParts = options.credentials && options.signedParts;
  const sendSigned = async (partNumber: number, data: Buffer, sum: PartSum): Promise<{ ETag?: string; ChecksumCRC32?: string }> => {
    const sp = signedParts as NonNullable<typeof signedParts>;
    signedSender ??= signedPartSender({ ...sp, credentials: options.credentials!, bucket, key, uploadId: uploadId!, signal });
    const headers: Record<string, string> = sum.crc32 ? { 'x-amz-checksum-crc32': sum.crc32 } : { 'content-md5': sum.headers.ContentMD5! };
    const out = await (await signedSender)(partNumber, data, headers);
    return { ETag: out.etag, ChecksumCRC32: out.checksumCrc32 };
  };

  const sendPart = async (partNumber: number, data: Buffer, crc?: string): Promise<void> => {
    const sum = partChecksum(checksum, data, crc);
    const ctx = { bucket, key, part: partNumber };
    let out: { ETag?: string; ChecksumCRC32?: string };
    try {
      out = signedParts
        ? await sendSigned(partNumber, data, sum)
        : await s3.send(
            new UploadPartCommand({
              Bucket: bucket,
              Key: key,
              UploadId: uploadId,
              PartNumber: partNumber,
              Body: data,
              ContentLength: data.length,
              ...sum.headers,
            }),
            { abortSignal: signal },
          );
    } catch (err) {
      throw mapS3Error(err, 'upload', ctx, signal);
    }
    const etag = verifyStored(out, sum, verifyEtag, ctx);
    done.set(partNumber, { PartNumber: partNumber, ETag: etag, size: data.length, ...(sum.crc32 ? { ChecksumCRC32: sum.crc32 } : {}) });
  };

  const read = await runPartPipeline({
    source,
    partSize,
    concurrency,
    gzip: options.gzip,
    startOffset: skipped * partSize,
    sha256: wantSha,
    crc32: checksum === 'CRC32',
    context: { bucket, key },
    signal,
    onSent: report,
    async part(index, data, _final, partCrc) {
      const partNumber = skipped + index;
      if (partNumber > MAX_PARTS) {
        throw new SapiInvalidInputError(`upload needs more than ${MAX_PARTS} parts of ${partSize} bytes: raise partSizeBytes [bucket=${bucket}, key=${key}]`);
      }
      if (partNumber === 1 && data.length < partSize && !uploadId) {
        single = await putSingle(s3, { bucket, key, data, options, verifyEtag, common, checksum });
        return undefined;
      }
      if (!uploadId) {
        uploadId = await createUpload(s3, { bucket, key, options, common, checksum });
        report();
      }
      const prev = done.get(partNumber);
      const crc = partCrc === undefined ? undefined : crc32ToBase64(partCrc);
      if (prev && prev.size === data.length) {
        // Finished by an earlier attempt. With CRC32 we can also tell whether the source still has the same bytes.
        if (!prev.ChecksumCRC32 || crc === prev.ChecksumCRC32) return undefined;
        done.delete(partNumber);
      }
      assertCredentialsFresh(options.credentials, `upload [bucket=${bucket}, key=${key}, part=${partNumber}]`, margin);
      return () => sendPart(partNumber, data, crc);
    },
  });
  const { sourceBytes, storedBytes, sha256 } = read;
  const lastPart = skipped + read.lastPart;

  if (single) {
    return {
      bucket,
      key,
      multipart: false,
      etag: single.etag,
      parts: 1,
      partsUploaded: 1,
      bytes: storedBytes,
      sourceBytes,
      sha256,
      resumed: false,
      partBuffers: read.partBuffers,
    };
  }
  if (!uploadId) throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'nothing was uploaded', context: { bucket, key } });
  assertSourceUnchanged(source, sourceBytes, options.gzip, { bucket, key });
  const parts: UploadedPart[] = [];
  for (let n = 1; n <= lastPart; n++) {
    const p = done.get(n);
    if (!p)
      throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: `part ${n} is missing before completion`, context: { bucket, key, uploadId } });
    parts.push(p);
  }
  throwIfAborted(signal);
  assertCredentialsFresh(options.credentials, `upload [bucket=${bucket}, key=${key}, complete]`, 0);
  let etag: string | undefined;
  try {
    const out = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: {
          Parts: parts.map((p) => ({ PartNumber: p.PartNumber, ETag: p.ETag, ...(p.ChecksumCRC32 ? { ChecksumCRC32: p.ChecksumCRC32 } : {}) })),
        },
      }),
      { abortSignal: signal },
    );
    etag = out.ETag;
  } catch (err) {
    throw mapS3Error(err, 'upload', { bucket, key, uploadId, step: 'complete' }, signal);
  }
  return {
    bucket,
    key,
    multipart: true,
    uploadId,
    etag,
    parts: parts.length,
    partsUploaded: read.partsSent,
    bytes: parts.reduce((n, p) => n + p.size, 0),
    sourceBytes,
    sha256,
    resumed: resume !== undefined,
    partBuffers: read.partBuffers,
  };
}

async function createUpload(
  s3: S3Client,
  args: { bucket: string; key: string; options: UploadMultipartOptions; common: { ServerSideEncryption?: ServerSideEncryption }; checksum: PartChecksum },
): Promise<string> {
  try {
    const out = await s3.send(
      new CreateMultipartUploadCommand({
        Bucket: args.bucket,
        Key: args.key,
        ContentType: args.options.contentType,
        ACL: args.options.acl as ObjectCannedACL | undefined,
        ChecksumAlgorithm: args.checksum === 'CRC32' ? ('CRC32' as ChecksumAlgorithm) : undefined,
        ...args.common,
      }),
      { abortSignal: args.options.signal },
    );
    if (!out.UploadId)
      throw new SapiTransferError({
        code: SapiErrorCode.UPLOAD_FAILED,
        message: 'CreateMultipartUpload returned no UploadId',
        context: { bucket: args.bucket, key: args.key },
      });
    return out.UploadId;
  } catch (err) {
    throw mapS3Error(err, 'upload', { bucket: args.bucket, key: args.key, step: 'create' }, args.options.signal);
  }
}

async function putSingle(
  s3: S3Client,
  args: {
    bucket: string;
    key: string;
    data: Buffer;
    options: UploadMultipartOptions;
    verifyEtag: boolean;
    common: { ServerSideEncryption?: ServerSideEncryption };
    checksum: PartChecksum;
  },
): Promise<{ etag?: string }> {
  const sum = partChecksum(args.checksum, args.data);
  const ctx = { bucket: args.bucket, key: args.key };
  let out: { ETag?: string; ChecksumCRC32?: string };
  try {
    out = await s3.send(
      new PutObjectCommand({
        Bucket: args.bucket,
        Key: args.key,
        Body: args.data,
        ContentLength: args.data.length,
        ContentType: args.options.contentType,
        ACL: args.options.acl as ObjectCannedACL | undefined,
        ...sum.headers,
        ...args.common,
      }),
      { abortSignal: args.options.signal },
    );
  } catch (err) {
    throw mapS3Error(err, 'upload', ctx, args.options.signal);
  }
  return { etag: verifyStored(out, sum, args.verifyEtag, ctx) };
}

interface PartSum {
  headers: { ContentMD5?: string; ChecksumCRC32?: string };
  md5?: Buffer;
  crc32?: string;
}

function partChecksum(kind: PartChecksum, data: Buffer, knownCrc?: string): PartSum {
  if (kind === 'CRC32') {
    const crc = knownCrc ?? crc32Base64(data);
    return { headers: { ChecksumCRC32: crc }, crc32: crc };
  }
  const md5 = createHash('md5').update(data).digest();
  return { headers: { ContentMD5: md5.toString('base64') }, md5 };
}

/** Base64 of the big-endian CRC32, as S3 expects in `x-amz-checksum-crc32`. */
export function crc32Base64(data: Buffer): string {
  return crc32ToBase64(crc32(data));
}

/** A CRC32 value as `x-amz-checksum-crc32` writes it: base64 of its 4 big-endian bytes. */
export function crc32ToBase64(value: number): string {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(value >>> 0);
  return b.toString('base64');
}

/** Checks what the store says it stored against what we sent; returns the ETag. */
function verifyStored(
  out: { ETag?: string; ChecksumCRC32?: string },
  sum: PartSum,
  verifyEtag: boolean,
  context: Record<string, string | number | undefined>,
): string {
  if (sum.md5) checkEtag(out.ETag, sum.md5, verifyEtag, context);
  if (!out.ETag) throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'the store returned no ETag', context });
  if (sum.crc32 && out.ChecksumCRC32 && out.ChecksumCRC32 !== sum.crc32) {
    throw new SapiTransferError({
      code: SapiErrorCode.CHECKSUM_MISMATCH,
      message: `stored part differs from what was sent: CRC32 ${out.ChecksumCRC32}, sent ${sum.crc32}`,
      context,
    });
  }
  return out.ETag;
}

/** Compares an MD5-style ETag with the MD5 we computed. Opaque ETags (KMS, some stores) are not compared. */
function checkEtag(etag: string | undefined, md5: Buffer, verify: boolean, context: Record<string, string | number | undefined>): void {
  if (!etag) throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'the store returned no ETag', context });
  const bare = etag.replace(/"/g, '').toLowerCase();
  if (verify && /^[0-9a-f]{32}$/.test(bare) && bare !== md5.toString('hex')) {
    throw new SapiTransferError({
      code: SapiErrorCode.CHECKSUM_MISMATCH,
      message: `stored part differs from what was sent: ETag ${bare}, MD5 ${md5.toString('hex')}`,
      context,
    });
  }
}
