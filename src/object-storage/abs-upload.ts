/**
 * Resumable upload to Azure Blob Storage with the service's SAS credentials: a block blob built from staged blocks,
 * with the same durability as the S3 multipart path.
 *
 * - The source is read once, sequentially, cut into blocks of `partSizeBytes`; at most `concurrency` blocks are in
 *   flight (memory ≈ (concurrency + 1) × partSizeBytes, whatever the file size). Each block carries its MD5
 *   (`Content-MD5`), which the store verifies.
 * - Block ids are deterministic: block `n` of a blob is always `base64("sapi-block-" + n padded to 6)`, so a retry
 *   (another worker, after a crash) knows which blocks are already staged: it lists the blob's blocks
 *   (`Get Block List`, uncommitted and committed) and does not send again a block staged with the same size and,
 *   when the heartbeat recorded it, the same MD5. Blocks staged after the last heartbeat count too.
 * - `Put Block List` commits the ids in order; a blob with no bytes is one empty commit.
 * - `gzip` compresses on the fly: the compressed stream is not guaranteed to be byte-identical on a second run, so a
 *   gzip upload never skips a block (it stages every block again under the same ids, replacing the old ones).
 */
import { createHash } from 'node:crypto';
import { type BlockBlobClient, type ContainerClient } from '@azure/storage-blob';
import { SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { absErrorInfo, assertAbsCredentialsFresh, createContainerClient, mapAbsError, type AbsCredentials } from './abs-client';
import { DEFAULT_PART_SIZE_BYTES, DEFAULT_UPLOAD_CONCURRENCY } from './multipart-upload';
import { type StoredObject } from './object-store';
import { assertSourceUnchanged, runPartPipeline } from './part-pipeline';
import { DEFAULT_CREDENTIALS_MARGIN_MS, throwIfAborted } from './s3-client';
import { openSource, type ByteSource } from './sources';

/** Most blocks in one block blob. */
export const MAX_BLOCKS = 50_000;
/** Largest block Azure accepts: 4000 MiB. */
const MAX_BLOCK_SIZE_BYTES = 4000 * 1024 * 1024;

/** One staged block, as recorded in heartbeats. */
interface StagedBlock {
  /** 1-based position in the blob. */
  index: number;
  size: number;
  /** Base64 MD5 of the block. */
  md5: string;
}

/** Progress of a block blob upload: what a retry needs to resume (JSON, no secrets). */
export interface AbsUploadState {
  container: string;
  blobName: string;
  partSizeBytes: number;
  /** Staged blocks, sorted by index. */
  blocks: StagedBlock[];
  /** Bytes in staged blocks. */
  bytesSent: number;
}

interface UploadBlockBlobOptions {
  /** Container client to use; otherwise one is made from `credentials`. */
  container?: ContainerClient;
  credentials?: AbsCredentials;
  containerName: string;
  blobName: string;
  /** A local path or URI, or a {@link ByteSource}. */
  source: string | ByteSource;
  /** Default {@link DEFAULT_PART_SIZE_BYTES}; grown when needed to stay ≤ {@link MAX_BLOCKS}. */
  partSizeBytes?: number;
  /** Blocks in flight. Default {@link DEFAULT_UPLOAD_CONCURRENCY}. */
  concurrency?: number;
  /** State of an earlier attempt (its recorded MD5s are checked against the source). */
  resume?: AbsUploadState;
  /** Called after each staged block. Keep it cheap (heartbeat). */
  onProgress?: (state: AbsUploadState) => void;
  contentType?: string;
  gzip?: boolean;
  credentialsMarginMs?: number;
  signal?: AbortSignal;
}

/** What {@link uploadBlockBlob} stored: `parts` are blocks; `resumed` when blocks of an earlier attempt were found (heartbeat or block list). */
interface UploadBlockBlobResult extends StoredObject {
  container: string;
  blobName: string;
  sha256: string;
  /** Block buffers this call allocated: at most concurrency + 1. */
  partBuffers: number;
}

/** The id of block `index` (1-based): same length for every block of a blob, as Azure requires. */
export function blockId(index: number): string {
  return Buffer.from(`sapi-block-${String(index).padStart(6, '0')}`).toString('base64');
}

/** Index of one of our block ids, or undefined for a foreign one. */
export function blockIndexOf(id: string): number | undefined {
  const m = /^sapi-block-(\d{6})$/.exec(Buffer.from(id, 'base64').toString('latin1'));
  return m ? Number(m[1]) : undefined;
}

/** The block size actually used: the wish, grown so that a known size fits in {@link MAX_BLOCKS}. */
export function resolveBlockSize(wish: number | undefined, sizeBytes: number | undefined): number {
  const size = wish ?? DEFAULT_PART_SIZE_BYTES;
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_BLOCK_SIZE_BYTES) {
    throw new SapiInvalidInputError(`partSizeBytes must be between 1 and ${MAX_BLOCK_SIZE_BYTES} (4000 MiB) for Azure blocks, got ${size}`);
  }
  if (sizeBytes === undefined || sizeBytes <= size * MAX_BLOCKS) return size;
  const mib = 1024 * 1024;
  return Math.ceil(sizeBytes / MAX_BLOCKS / mib) * mib;
}

/** Uploads a source to one block blob, resumably. See the module doc. */
export async function uploadBlockBlob(options: UploadBlockBlobOptions): Promise<UploadBlockBlobResult> {
  const { containerName, blobName, signal } = options;
  if (!containerName || !blobName)
    throw new SapiInvalidInputError(`uploadBlockBlob needs a container and a blob name (got container=${containerName}, blob=${blobName})`);
  const concurrency = options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new SapiInvalidInputError(`concurrency must be a positive integer (got ${concurrency})`);
  const margin = options.credentialsMarginMs ?? DEFAULT_CREDENTIALS_MARGIN_MS;
  const where = (extra = ''): string => `upload [container=${containerName}, blob=${blobName}${extra}]`;
  assertAbsCredentialsFresh(options.credentials, where(), margin);
  if (!options.container && !options.credentials) throw new SapiInvalidInputError(`${where()}: needs a container client or absCredentials`);
  const container = options.container ?? createContainerClient(options.credentials as AbsCredentials, containerName);
  const blob = container.getBlockBlobClient(blobName);
  const source = typeof options.source === 'string' ? await openSource(options.source, { signal }) : options.source;
  const resume = options.resume && options.resume.container === containerName && options.resume.blobName === blobName ? options.resume : undefined;
  const partSize = resume?.partSizeBytes ?? resolveBlockSize(options.partSizeBytes, options.gzip ? undefined : source.size);

  // What is already staged: the heartbeat's blocks (with MD5) and the store's own list (sizes only).
  const known = new Map<number, StagedBlock>();
  for (const b of resume?.blocks ?? []) known.set(b.index, b);
  // undefined: the SAS may not list blocks; the heartbeat's blocks are then trusted (their MD5 is checked)
  const listed = options.gzip ? new Map<number, number>() : await stagedBlocks(blob, { container: containerName, blob: blobName }, signal);
  const done = new Map<number, StagedBlock>();
  const report = (): void => {
    if (!options.onProgress) return;
    const blocks = [...done.values()].sort((a, b) => a.index - b.index);
    options.onProgress({ container: containerName, blobName, partSizeBytes: partSize, blocks, bytesSent: blocks.reduce((n, b) => n + b.size, 0) });
  };

  let reused = 0;

  const stage = async (index: number, data: Buffer, md5: string): Promise<void> => {
    try {
      await blob.stageBlock(blockId(index), data, data.length, { transactionalContentMD5: Buffer.from(md5, 'base64'), abortSignal: signal });
    } catch (err) {
      throw mapAbsError(err, 'upload', { container: containerName, blob: blobName, block: index }, signal);
    }
    done.set(index, { index, size: data.length, md5 });
  };

  const read = await runPartPipeline({
    source,
    partSize,
    concurrency,
    gzip: options.gzip,
    context: { container: containerName, blob: blobName },
    signal,
    onSent: report,
    part(index, data) {
      if (index > MAX_BLOCKS) throw new SapiInvalidInputError(`${where()}: needs more than ${MAX_BLOCKS} blocks of ${partSize} bytes: raise partSizeBytes`);
      if (data.length === 0) return undefined; // an empty source: an empty commit below
      const md5 = createHash('md5').update(data).digest('base64');
      const recorded = known.get(index);
      const stagedSize = listed ? listed.get(index) : recorded?.size;
      if (stagedSize === data.length && (recorded === undefined || recorded.md5 === md5)) {
        // staged by an earlier attempt with these bytes: not sent again
        done.set(index, recorded ?? { index, size: data.length, md5 });
        reused++;
        return undefined;
      }
      assertAbsCredentialsFresh(options.credentials, where(`, block=${index}`), margin);
      return () => stage(index, data, md5);
    },
  });
  const { sourceBytes, storedBytes, lastPart: lastIndex } = read;
  assertSourceUnchanged(source, sourceBytes, options.gzip, { container: containerName, blob: blobName });
  const ids: string[] = [];
  for (let i = 1; i <= lastIndex && done.has(i); i++) ids.push(blockId(i));
  if (ids.length !== done.size) {
    throw new SapiTransferError({
      code: SapiErrorCode.UPLOAD_FAILED,
      message: `block ${ids.length + 1} is missing before the commit`,
      context: { container: containerName, blob: blobName },
    });
  }
  throwIfAborted(signal);
  assertAbsCredentialsFresh(options.credentials, where(', commit'), 0);
  try {
    await blob.commitBlockList(ids, { blobHTTPHeaders: { blobContentType: options.contentType ?? 'application/octet-stream' }, abortSignal: signal });
  } catch (err) {
    throw mapAbsError(err, 'upload', { container: containerName, blob: blobName, step: 'commit' }, signal);
  }
  return {
    container: containerName,
    blobName,
    parts: ids.length,
    partsUploaded: read.partsSent,
    bytes: storedBytes,
    sourceBytes,
    sha256: read.sha256 as string,
    resumed: reused > 0 || resume !== undefined,
    partBuffers: read.partBuffers,
  };
}

/**
 * Our blocks the store holds for a blob (index → size), uncommitted and committed (a commit may have happened
 * before a crash; a new commit may reuse committed blocks). A blob never touched (404) has none; a SAS that may not
 * read (403) gives undefined.
 */
async function stagedBlocks(blob: BlockBlobClient, context: Record<string, string>, signal?: AbortSignal): Promise<Map<number, number> | undefined> {
  const blocks = new Map<number, number>();
  try {
    const list = await blob.getBlockList('all', { abortSignal: signal });
    for (const b of [...(list.committedBlocks ?? []), ...(list.uncommittedBlocks ?? [])]) {
      const index = blockIndexOf(b.name);
      if (index !== undefined) blocks.set(index, b.size);
    }
  } catch (err) {
    const { status } = absErrorInfo(err);
    if (status === 404) return blocks;
    if (status === 403) return undefined;
    throw mapAbsError(err, 'upload', { ...context, step: 'list blocks' }, signal);
  }
  return blocks;
}
