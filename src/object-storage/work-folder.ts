/**
 * The local-file side of downloads: an object fetched to a file (continuing a partial one with a range request),
 * slice files concatenated in manifest order (gunzipped when asked), the work folder that belongs to one stored
 * file, sizes and hashes of files on disk. Knows {@link ObjectReader}s only, never a backend.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { SapiError, SapiErrorCode, SapiTransferError } from '../errors';
import { type ObjectReader } from './object-store';

/** Write (and read) buffer of local files: 1 MiB. */
export const WRITE_HIGH_WATER_MARK = 1024 * 1024;

/**
 * Downloads one object to `finalPath` through `<finalPath>.partial`, continuing a partial file with a Range
 * request. An existing `finalPath` whose size matches the store is kept.
 */
export async function fetchToFile(obj: ObjectReader, finalPath: string, signal?: AbortSignal): Promise<{ bytes: number; fetched: boolean }> {
  const existing = await fileSize(finalPath);
  if (existing !== undefined) {
    const remote = await obj.size(signal);
    if (remote === undefined || remote === existing) return { bytes: existing, fetched: false };
    await unlink(finalPath);
  }
  const partial = `${finalPath}.partial`;
  let start = (await fileSize(partial)) ?? 0;
  const got = await obj.get(start, signal);
  if (!got.fromStart) start = 0;
  let written = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      written += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    await pipeline(got.body, counter, createWriteStream(partial, { flags: start > 0 ? 'a' : 'w', highWaterMark: WRITE_HIGH_WATER_MARK }), { signal });
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    throw err instanceof SapiError
      ? err
      : new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'download interrupted', context: { object: obj.label, offset: start + written }, cause: err });
  }
  const total = start + written;
  if (got.total !== undefined && total !== got.total) {
    throw new SapiTransferError({
      code: SapiErrorCode.DOWNLOAD_FAILED,
      message: `download ended early: ${total} of ${got.total} bytes`,
      context: { object: obj.label },
    });
  }
  await rename(partial, finalPath);
  return { bytes: total, fetched: true };
}

export async function* concatSlices(workDir: string, count: number, decompress: readonly boolean[], header?: Buffer): AsyncGenerator<Buffer> {
  if (header) yield header;
  for (let i = 0; i < count; i++) {
    const file = createReadStream(join(workDir, String(i)), { highWaterMark: WRITE_HIGH_WATER_MARK });
    if (!decompress[i]) {
      for await (const chunk of file) yield chunk as Buffer;
      continue;
    }
    const gunzip = createGunzip();
    file.on('error', (err) => gunzip.destroy(err));
    file.pipe(gunzip);
    try {
      for await (const chunk of gunzip) yield chunk as Buffer;
    } catch (err) {
      if (isGzipError(err)) {
        throw new SapiTransferError({
          code: SapiErrorCode.DOWNLOAD_FAILED,
          message: 'slice is not valid gzip: pass gunzip: false to keep it compressed',
          context: { slice: i },
          retryable: false,
          cause: err,
        });
      }
      throw err;
    } finally {
      file.destroy();
    }
  }
}

export function isGzipError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

const IDENTITY_FILE = '.source.json';

/** Creates the work folder, wiping it first when it holds slices of another file. */
export async function prepareWorkDir(workDir: string, identity: string): Promise<void> {
  const marker = join(workDir, IDENTITY_FILE);
  const previous = await readFile(marker, 'utf8').catch(() => undefined);
  if (previous !== identity) {
    await rm(workDir, { recursive: true, force: true });
    await mkdir(workDir, { recursive: true });
    await writeFile(marker, identity);
  }
}

export async function fileSize(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

export async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: WRITE_HIGH_WATER_MARK })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}
