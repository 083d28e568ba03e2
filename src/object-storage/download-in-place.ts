/**
 * Sliced download without a second pass or a work folder (uncompressed slices to a local path): each slice is
 * written at its offset in `<destination>.partial` as it streams, by the worker threads of `in-place-thread.ts`,
 * over plain GETs each {@link ObjectReader} signs for them (presigned S3 URLs, Azure SAS URLs, GCS media URLs with
 * the bearer token).
 */
import { rm } from 'node:fs/promises';
import { type FileHandle } from 'node:fs/promises';
import { SapiCredentialsExpiredError, SapiErrorCode, SapiTransferError } from '../errors';
import { createFileExclusive, descriptorPath, openOwnFile, renameChecked, type OpenedFolder } from '../security/local-files';
import { type DownloadFileResult, type DownloadState } from './download-state';
import { type InPlaceJob, inPlaceRunner, type InPlaceRunner, SliceFailure } from './in-place-thread';
import { type ObjectReader, type PlainGet } from './object-store';

/** What {@link downloadInPlace} needs. */
export interface InPlaceDownload {
  objects: readonly ObjectReader[];
  /** The destination's real path (for the result). */
  destination: string;
  /** Its folder, opened and checked (everything is written in it), and its name there. */
  folder: OpenedFolder;
  name: string;
  headerBytes: Buffer | undefined;
  concurrency: number;
  /** The work folder of the other paths, as its opened parent reaches it: removed when left over. */
  workDir: string;
  resume: DownloadState | undefined;
  /** The file detail's size, when it says it (a small download runs without threads: see `inPlaceRunner`). */
  sizeBytes?: number;
  /** Identity of the stored file (see `identityOf`). */
  source: string;
  /** When the read credentials expire (ISO 8601), if known: no slice starts after it. */
  expiration: string | undefined;
  /** `download [file=…]`, for errors. */
  where: string;
  onProgress?: (state: DownloadState) => void;
  signal?: AbortSignal;
}

/**
 * Sliced download without a second pass: the slices are requested in manifest order (bounded), each answer's
 * `Content-Length` is its slice's size, and each slice is written at its offset in `<destination>.partial` (after
 * the header: the sizes of the slices before it) as it streams; then the file is renamed into place. No size
 * requests come first. The sha256 follows in manifest order: each slice is read back (from the page cache) and
 * hashed as soon as it and every slice before it are written, while later slices are still downloading. The
 * fetching and hashing run in worker threads of their own (`in-place-thread.ts`: plain GETs of presigned/SAS/token
 * URLs), away from the Temporal worker's main thread. A retry keeps the finished slices of `resume` (see
 * {@link keptSlices}); an unfinished slice is fetched again whole.
 */
export async function downloadInPlace(d: InPlaceDownload): Promise<DownloadFileResult> {
  const runner = inPlaceRunner(d.sizeBytes); // its threads (if any) load meanwhile
  try {
    return await downloadInPlaceWith(runner, d);
  } finally {
    await runner.close();
  }
}

async function downloadInPlaceWith(runner: InPlaceRunner, d: InPlaceDownload): Promise<DownloadFileResult> {
  const { objects, destination, folder, headerBytes, signal } = d;
  // `<name>.partial`: an earlier attempt's own file (a regular file, one name) is continued; anything else at the
  // name (a planted link) is removed, never written through, and the file is created exclusively
  const partialName = `${d.name}.partial`;
  const start = headerBytes?.length ?? 0;
  let handle: FileHandle | undefined = await openOwnFile(folder, partialName);
  try {
    const kept = keptSlices(d.resume, d.source, objects.length, start, handle ? (await handle.stat()).size : undefined);
    const sizes = kept.sizes;
    const finished = new Set(kept.finished);
    await rm(d.workDir, { recursive: true, force: true });
    if (finished.size === 0 || !handle) {
      await handle?.close();
      handle = undefined;
      handle = await createFileExclusive(folder, partialName);
      await handle.write(headerBytes ?? Buffer.alloc(0), 0, headerBytes?.length ?? 0, 0);
    }
    const notAfterMs = d.expiration === undefined || Number.isNaN(Date.parse(d.expiration)) ? undefined : Date.parse(d.expiration);
    const validSeconds = notAfterMs === undefined ? DEFAULT_PRESIGN_SECONDS : (notAfterMs - Date.now()) / 1000;
    const gets = await Promise.all(objects.map((obj, index) => (finished.has(index) ? undefined : obj.plainGet(validSeconds))));

    let slicesDownloaded = 0;
    let bytesDownloaded = kept.finished.reduce((n, i) => n + sizes[i]!, 0);
    const job: InPlaceJob = {
      // the threads reopen this very file (Linux: its descriptor's path), not whatever has its name by then
      partial: descriptorPath(handle.fd) ?? folder.path(partialName),
      start,
      slices: gets.map((get) => ({ url: get?.url ?? '', headers: get?.headers ?? {} })),
      sizes,
      finished: [...finished],
      concurrency: d.concurrency,
      notAfterMs,
    };
    let sha256: string;
    try {
      sha256 = await runner.run(
        job,
        headerBytes,
        {
          size: (index, size) => {
            sizes[index] = size;
          },
          slice: (index, place) => {
            finished.add(index);
            slicesDownloaded++;
            bytesDownloaded += place.size;
            d.onProgress?.({
              slices: objects.length,
              finishedSlices: [...finished].sort((a, b) => a - b),
              bytesDownloaded,
              inPlace: { source: d.source, sizes: [...sizes] },
            });
          },
        },
        signal,
      );
    } catch (err) {
      throw inPlaceError(err, d, gets, signal);
    }
    const total = start + sizes.reduce<number>((n, size) => n + (size ?? 0), 0);
    if ((await handle.stat()).size !== total) await handle.truncate(total); // an earlier attempt's file may be longer
    await renameChecked(handle, folder, partialName, folder, d.name, 'destination');
    return { path: destination, bytes: total, sha256, slices: objects.length, sliced: true, slicesDownloaded };
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * What a retry keeps of an earlier attempt's in-place download (`resume`): its finished slices and the sizes it
 * learned, when it downloaded the same stored file (`source`) and `<destination>.partial` (`partialSize` bytes,
 * undefined: missing) still reaches the end of every finished slice; otherwise nothing (start over).
 */
export function keptSlices(
  resume: DownloadState | undefined,
  source: string,
  count: number,
  start: number,
  partialSize: number | undefined,
): { finished: number[]; sizes: Array<number | null> } {
  const nothing = { finished: [], sizes: Array<number | null>(count).fill(null) };
  const previous = resume?.inPlace;
  if (previous?.source !== source || !Array.isArray(previous.sizes) || previous.sizes.length !== count || partialSize === undefined) return nothing;
  const sizes = previous.sizes.map((size) => (Number.isSafeInteger(size) && (size as number) >= 0 ? (size as number) : null));
  const finished = [...new Set(resume?.finishedSlices ?? [])].filter((i) => Number.isInteger(i) && i >= 0 && i < count).sort((a, b) => a - b);
  if (finished.length === 0) return nothing;
  let end = start;
  let known = 0; // sizes[0..known) are all known
  for (const index of finished) {
    for (; known <= index; known++) {
      if (sizes[known] === null) return nothing;
      end += sizes[known]!;
    }
  }
  return partialSize >= end ? { finished, sizes } : nothing;
}

/** Validity of a presigned slice URL when the credentials do not say when they expire: 1 h. */
const DEFAULT_PRESIGN_SECONDS = 3600;

/** The `SapiError` of a failure of the download thread. */
function inPlaceError(err: unknown, d: InPlaceDownload, gets: ReadonlyArray<PlainGet | undefined>, signal?: AbortSignal): unknown {
  if (!(err instanceof SliceFailure)) return err;
  const f = err.failure;
  switch (f.kind) {
    case 'aborted':
      return signal?.reason ?? new Error('aborted');
    case 'expired':
      return new SapiCredentialsExpiredError({ where: `${d.where.slice(0, -1)}, slice=${f.index}]`, expiration: d.expiration });
    case 'http': // only slices with a GET are fetched
      return gets[f.index]!.failure(f.status, f.body, f.errorCode);
    case 'network':
      return new SapiTransferError({
        code: SapiErrorCode.DOWNLOAD_FAILED,
        message: f.message,
        context: { object: d.objects[f.index]!.label, offset: f.written },
      });
    case 'size':
      return new SapiTransferError({
        code: SapiErrorCode.DOWNLOAD_FAILED,
        message: f.message,
        context: { object: d.objects[f.index]!.label },
        retryable: f.retryable,
      });
    case 'internal':
      return new SapiTransferError({
        code: SapiErrorCode.DOWNLOAD_FAILED,
        message: `the download thread failed: ${f.message}`,
        context: { destination: d.destination },
      });
  }
}
