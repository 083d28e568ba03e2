/**
 * The local-file side of downloads: an object fetched to a file (continuing a partial one with a range request),
 * slice files concatenated in manifest order (gunzipped when asked), the work folder that belongs to one stored
 * file, sizes and hashes of files on disk. Knows {@link ObjectReader}s only, never a backend.
 */
import { createHash } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { rm, stat, unlink, writeFile } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { SapiError, SapiErrorCode, SapiTransferError } from '../errors';
import { createFileExclusive, moveChecked, openOwnFile, ownFileSize, type OpenedFolder } from '../security/local-files';
import { type ObjectReader } from './object-store';

/** Write (and read) buffer of local files: 1 MiB. */
export const WRITE_HIGH_WATER_MARK = 1024 * 1024;

/** Reads never follow a link put in place of a file this download wrote (numeric flags: Node's `open` takes them; the stream options' type says string). */
const READ_NO_LINK = (constants.O_RDONLY | constants.O_NOFOLLOW) as unknown as string;

/**
 * Downloads one object to `name` in `folder` through `<name>.partial` (created exclusively, or an earlier attempt's
 * own partial file continued with a Range request; never written through a link). An existing `name` whose size
 * matches the store is kept. `field` names the input for a refusal.
 */
export async function fetchToFile(
  obj: ObjectReader,
  folder: OpenedFolder,
  name: string,
  signal?: AbortSignal,
  field = 'destination',
): Promise<{ bytes: number; fetched: boolean }> {
  const existing = await ownFileSize(folder, name);
  if (existing !== undefined) {
    const remote = await obj.size(signal);
    if (remote === undefined || remote === existing) return { bytes: existing, fetched: false };
    await unlink(folder.path(name));
  }
  const partialName = `${name}.partial`;
  const kept = await openOwnFile(folder, partialName);
  let start = kept ? (await kept.stat()).size : 0;
  let handle = kept;
  try {
    const got = await obj.get(start, signal);
    if (!got.fromStart) start = 0;
    if (!handle || start === 0) {
      await handle?.close();
      handle = undefined;
      handle = await createFileExclusive(folder, partialName);
    }
    let written = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb: TransformCallback) {
        written += chunk.length;
        cb(null, chunk);
      },
    });
    try {
      await pipeline(
        got.body,
        counter,
        createWriteStream(folder.path(partialName), { fd: handle.fd, autoClose: false, start, highWaterMark: WRITE_HIGH_WATER_MARK }),
        { signal },
      );
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      throw err instanceof SapiError
        ? err
        : new SapiTransferError({
            code: SapiErrorCode.DOWNLOAD_FAILED,
            message: 'download interrupted',
            context: { object: obj.label, offset: start + written },
            cause: err,
          });
    }
    const total = start + written;
    if (got.total !== undefined && total !== got.total) {
      throw new SapiTransferError({
        code: SapiErrorCode.DOWNLOAD_FAILED,
        message: `download ended early: ${total} of ${got.total} bytes`,
        context: { object: obj.label },
      });
    }
    await moveChecked(handle, folder, partialName, folder, name, field);
    return { bytes: total, fetched: true };
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

export async function* concatSlices(workDir: OpenedFolder, count: number, decompress: readonly boolean[], header?: Buffer): AsyncGenerator<Buffer> {
  if (header) yield header;
  for (let i = 0; i < count; i++) {
    const file = createReadStream(workDir.path(String(i)), { flags: READ_NO_LINK, highWaterMark: WRITE_HIGH_WATER_MARK });
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

/**
 * Opens the work folder `name` in `parent` (created when missing, never through a link), wiping it first when it
 * holds slices of another file.
 */
export async function prepareWorkDir(parent: OpenedFolder, name: string, identity: string): Promise<OpenedFolder> {
  let dir = await parent.sub(name);
  const marker = await openOwnFile(dir, IDENTITY_FILE);
  const previous = marker ? await marker.readFile('utf8').finally(() => marker.close()) : undefined;
  if (previous !== identity) {
    await dir.close();
    await rm(parent.path(name), { recursive: true, force: true });
    dir = await parent.sub(name);
    const created = await createFileExclusive(dir, IDENTITY_FILE);
    await writeFile(created, identity).finally(() => created.close());
  }
  return dir;
}

export async function fileSize(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** Size and sha256 of `name` in `folder` (never read through a link). */
export async function hashFile(folder: OpenedFolder, name: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(folder.path(name), { flags: READ_NO_LINK, highWaterMark: WRITE_HIGH_WATER_MARK })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}
