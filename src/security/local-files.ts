/**
 * Local files opened once and checked on the opened descriptor, not by name: a path checked against the roots and
 * then opened again by name can be swapped in between (a folder flipped to a symbolic link to elsewhere), and a
 * temporary file whose name an attacker could plant beforehand (`<dest>.partial` as a link) is written through.
 * NOT workflow-safe (node:fs).
 *
 * - A folder is opened, and the opened descriptor's real path (`/proc/self/fd/N`) must be the folder that was
 *   checked; everything under it is then reached through `/proc/self/fd/N/<name>`, which resolves to that very folder
 *   whatever happens to its path since (an `openat` in Node's terms). Missing folders are created one at a time,
 *   each through its opened parent, never through a link.
 * - A file is opened with `O_NOFOLLOW` (its last component is never a link), and its descriptor's real path is checked;
 *   later reads reopen `/proc/self/fd/N` or compare the device and inode.
 * - A temporary file is created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`): whatever held its name (a link, a
 *   file) is removed first, never written through. An earlier attempt's temporary file is kept only when it is a
 *   regular file with one name (not a link, not a hard link to something else).
 *
 * Off Linux (no `/proc/self/fd`), paths are used as they are and descriptors are compared by device and inode with
 * the path's real path: a narrower check, for development machines.
 */
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SapiInputForbiddenError } from '../errors';

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;

/** Where the process's descriptors can be named (Linux). */
const PROC_FD = '/proc/self/fd';
let procFd: boolean | undefined;
const hasProcFd = (): boolean => (procFd ??= existsSync(PROC_FD));

/** The path that reaches descriptor `fd` itself (Linux), whatever its name has become. */
export function descriptorPath(fd: number): string | undefined {
  return hasProcFd() ? `${PROC_FD}/${fd}` : undefined;
}

/** The real path of an open descriptor (undefined off Linux). */
async function realPathOf(handle: FileHandle): Promise<string | undefined> {
  return hasProcFd() ? readlink(`${PROC_FD}/${handle.fd}`) : undefined;
}

const isErrno = (err: unknown, ...codes: string[]) => codes.includes((err as NodeJS.ErrnoException)?.code ?? '');

/** A refusal: the path changed between its check and its use (a link appeared). */
function swapped(field: string, what: string): SapiInputForbiddenError {
  return new SapiInputForbiddenError(
    field,
    `${what} changed after it was checked (a symbolic link or another file took its place); nothing was read or written there`,
  );
}

/** A folder opened and checked: reach what is in it with {@link OpenedFolder.path}. */
export interface OpenedFolder {
  /** Its real path when it was opened (for messages and results). */
  readonly real: string;
  /** A path reaching `name` in this very folder (one component, no `/`). */
  path(name: string): string;
  /** Opens the sub-folder `name` (created when missing), never through a link: a link or file there is removed first. */
  sub(name: string): Promise<OpenedFolder>;
  close(): Promise<void>;
}

async function opened(handle: FileHandle, real: string, field: string): Promise<OpenedFolder> {
  const at = descriptorPath(handle.fd) ?? real;
  const folder: OpenedFolder = {
    real,
    path: (name) => `${at}/${name}`,
    async sub(name) {
      for (let attempt = 0; ; attempt++) {
        await mkdir(folder.path(name)).catch((err: unknown) => {
          if (!isErrno(err, 'EEXIST')) throw err;
        });
        try {
          const child = await open(folder.path(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          return await checked(child, join(real, name), field);
        } catch (err) {
          // a link (ELOOP) or a file (ENOTDIR) holds the name: remove it (never follow it), make the folder
          if (attempt > 0 || !isErrno(err, 'ELOOP', 'ENOTDIR')) throw err;
          await unlink(folder.path(name));
        }
      }
    },
    close: () => handle.close(),
  };
  return folder;
}

/** The folder descriptor, once its real path is `real` (else closed and refused). */
async function checked(handle: FileHandle, real: string, field: string): Promise<OpenedFolder> {
  try {
    const actual = await realPathOf(handle);
    if (actual !== undefined ? actual !== real : !(await sameFile(handle, real))) throw swapped(field, `the folder ${real}`);
    return await opened(handle, real, field);
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** Whether `handle` is the file at `path` now (device and inode). */
async function sameFile(handle: FileHandle, path: string): Promise<boolean> {
  const [a, b] = await Promise.all([handle.stat(), lstat(path).catch(() => undefined)]);
  return b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Opens the folder at `real` (an absolute path its caller checked and resolved: no links in it), creating the
 * missing ones one at a time through their opened parent; fails with `SAPI_INPUT_FORBIDDEN` naming `field` when the
 * opened folder is not `real` (a component was swapped for a link since the check).
 */
export async function openFolder(real: string, field: string): Promise<OpenedFolder> {
  const missing: string[] = [];
  let existing = real;
  let handle: FileHandle | undefined;
  while (handle === undefined) {
    try {
      handle = await open(existing, O_RDONLY | O_DIRECTORY);
    } catch (err) {
      if (!isErrno(err, 'ENOENT') || dirname(existing) === existing) throw err;
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  let folder = await checked(handle, existing, field);
  for (const name of missing) {
    const child = await folder.sub(name).finally(() => folder.close());
    folder = child;
  }
  return folder;
}

/**
 * Opens a local file to read, checked on its descriptor: not a link (`O_NOFOLLOW`), a regular file, and (Linux) its
 * descriptor's real path `real` (the path that was checked against the roots). `O_NONBLOCK`: a FIFO put in its place
 * cannot hang the open.
 */
async function openFileChecked(real: string, field: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if (isErrno(err, 'ELOOP')) throw swapped(field, 'the local path');
    throw err;
  }
  try {
    const actual = await realPathOf(handle);
    if (actual !== undefined ? actual !== real : !(await sameFile(handle, real))) throw swapped(field, 'the local path');
    if (!(await handle.stat()).isFile()) throw new SapiInputForbiddenError(field, 'a local source must be a regular file');
    return handle;
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** A local file checked once and opened again, checked, on every read (see {@link checkedFile}). */
interface CheckedFile {
  /** Its size when it was checked. */
  size: number;
  /** Opens it again: checked as the first time, and refused unless it is the same file (device and inode). */
  reopen(): Promise<FileHandle>;
}

/**
 * The local file at `real` (checked against the roots by its caller): opened with {@link openFileChecked} now, and
 * every later open checked the same way and to be the same file (device and inode) — a path swapped for a link, or
 * another file put at the name, is refused with `SAPI_INPUT_FORBIDDEN` instead of read.
 */
export async function checkedFile(real: string, field: string): Promise<CheckedFile> {
  const first = await openFileChecked(real, field);
  const identity = await first.stat().finally(() => first.close());
  const reopen = async (): Promise<FileHandle> => {
    const handle = await openFileChecked(real, field);
    const st = await handle.stat();
    if (st.dev !== identity.dev || st.ino !== identity.ino) {
      await handle.close();
      throw swapped(field, 'the local path');
    }
    return handle;
  };
  return { size: identity.size, reopen };
}

/**
 * Opens an earlier attempt's temporary file `name` in `folder` to continue it: only a regular file with one name
 * (not a link, not a hard link to another file); anything else there is removed (never followed) and undefined is
 * returned, as when nothing is there.
 */
export async function openOwnFile(folder: OpenedFolder, name: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(folder.path(name), O_RDWR | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    if (!isErrno(err, 'ELOOP', 'EISDIR', 'ENXIO')) throw err;
    await unlink(folder.path(name)).catch(() => undefined);
    return undefined;
  }
  const st = await handle.stat();
  if (st.isFile() && st.nlink === 1) return handle;
  await handle.close();
  await unlink(folder.path(name)).catch(() => undefined);
  return undefined;
}

/** Creates `name` in `folder` exclusively (`O_EXCL | O_NOFOLLOW`): whatever held the name is removed first, never written through. */
export async function createFileExclusive(folder: OpenedFolder, name: string): Promise<FileHandle> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await open(folder.path(name), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    } catch (err) {
      if (attempt > 0 || !isErrno(err, 'EEXIST')) throw err;
      await unlink(folder.path(name)).catch(() => undefined);
    }
  }
}

/**
 * Renames `from` to `to` in `folder` (or into `into`, a folder on the same device) and checks that what now has
 * the name is the file `handle` has open: a name swapped for a link meanwhile is refused (`SAPI_INPUT_FORBIDDEN`).
 */
export async function renameChecked(handle: FileHandle, folder: OpenedFolder, from: string, into: OpenedFolder, to: string, field: string): Promise<void> {
  const before = await handle.stat();
  await rename(folder.path(from), into.path(to));
  const after = await lstat(into.path(to));
  if (!after.isFile() || after.dev !== before.dev || after.ino !== before.ino) throw swapped(field, join(into.real, to));
}

/**
 * Moves `from` (a file this download wrote, in `folder`) to `to` in `into`: opened without following a link first,
 * then {@link renameChecked}. `handle`: the file when the caller has it open.
 */
export async function moveChecked(
  handle: FileHandle | undefined,
  folder: OpenedFolder,
  from: string,
  into: OpenedFolder,
  to: string,
  field: string,
): Promise<void> {
  if (handle) return renameChecked(handle, folder, from, into, to, field);
  let own: FileHandle;
  try {
    own = await open(folder.path(from), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if (isErrno(err, 'ELOOP')) throw swapped(field, join(folder.real, from));
    throw err;
  }
  try {
    await renameChecked(own, folder, from, into, to, field);
  } finally {
    await own.close();
  }
}

/** The size of `name` in `folder` when it is a regular file with one name; anything else there is removed. */
export async function ownFileSize(folder: OpenedFolder, name: string): Promise<number | undefined> {
  const handle = await openOwnFile(folder, name);
  if (!handle) return undefined;
  try {
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

/** The real path of `path` when it exists, else of its nearest existing ancestor with the rest joined back on. */
export async function realPathOrParent(path: string): Promise<string> {
  const rest: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(await realpath(current), ...rest.reverse());
    } catch {
      if (dirname(current) === current) return path;
      rest.push(basename(current));
      current = dirname(current);
    }
  }
}
