/**
 * The local-folder adapter of {@link ObjectStore} (extraction staging on one host, `SAPI_STAGING_URL=/some/folder`):
 * keys are `/`-separated paths under the folder. Every write is atomic: a temporary file in the same folder, then
 * `rename` (atomic on POSIX), so a reader sees an object whole or not at all. It can append (`openLog`).
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { type ObjectReader, type ObjectStore } from './object-store';

/** A folder behind the {@link ObjectStore} interface (created as needed). */
export function localStore(folder: string): ObjectStore {
  const root = resolve(folder);
  const pathOf = (key: string): string => {
    if (key === '' || key.startsWith('/') || key.split('/').some((part) => part === '..' || part === '.')) {
      throw new SapiInvalidInputError(`invalid key ${JSON.stringify(key)} [folder=${root}]`);
    }
    return join(root, ...key.split('/'));
  };
  const fail = (op: 'read' | 'list' | 'write' | 'delete', key: string, err: unknown): SapiTransferError => localError(op, root, key, err);
  const tmpOf = (path: string): string => `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  // the folder's creation in flight, shared by the writes that start together: a page-checkpoint group writes its
  // table(s) and its marker into a new folder at once, and each recursive mkdir is a trip through libuv's thread pool
  // (on a busy 2-core machine the biggest cost of staging a page). Only while in flight, so the map stays small and a
  // folder deleted since is made again.
  const making = new Map<string, Promise<unknown>>();
  const ensureFolder = (path: string): Promise<unknown> => {
    let made = making.get(path);
    if (!made) {
      made = mkdir(path, { recursive: true }).finally(() => making.delete(path));
      making.set(path, made);
    }
    return made;
  };
  /** Writes `key` through a temporary file renamed over it. */
  const atomically = async (key: string, write: (tmp: string) => Promise<void>): Promise<void> => {
    const path = pathOf(key);
    const tmp = tmpOf(path);
    try {
      await ensureFolder(dirname(path));
      await write(tmp);
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined); // (none where the folder could not be made)
      throw fail('write', key, err);
    }
  };
  const reader = (key: string): ObjectReader => {
    const path = pathOf(key);
    const size = async (): Promise<number> => {
      try {
        return (await stat(path)).size;
      } catch (err) {
        throw fail('read', key, err);
      }
    };
    return {
      label: path,
      gz: /\.gz$/i.test(key),
      async get(start) {
        const total = await size();
        if (start >= total && start > 0) return { body: Readable.from([]), total: start, fromStart: true };
        const body = createReadStream(path, { start });
        await new Promise<void>((ok, reject) => {
          body.once('open', () => ok());
          body.once('error', (err) => reject(fail('read', key, err)));
        });
        return { body, total, fromStart: true };
      },
      size,
      plainGet: () =>
        Promise.reject(new SapiInvalidInputError(`a local folder has no URL to GET [folder=${root}, key=${key}]: download it with reader().get()`)),
    };
  };
  return {
    provider: 'local',
    container: root,
    urlOf(key) {
      const path = pathOf(key);
      if (!path.startsWith(root + sep)) throw new SapiInvalidInputError(`invalid key ${JSON.stringify(key)} [folder=${root}]`);
      return path;
    },
    keyOf(url) {
      const path = resolve(url);
      if (!path.startsWith(root + sep)) throw new SapiInvalidInputError(`${url} is outside the folder ${root}`);
      return path
        .slice(root.length + 1)
        .split(sep)
        .join('/');
    },
    reader,
    put: (key, body) => atomically(key, (tmp) => writeFile(tmp, body)),
    async upload(o) {
      const hash = createHash('sha256');
      let sourceBytes = 0;
      let bytes = 0;
      const count = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          sourceBytes += chunk.length;
          done(null, chunk);
        },
      });
      const stored = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done(null, chunk);
        },
      });
      await atomically(o.key, async (tmp) => {
        const source = await o.source.open(0, o.signal);
        const stages = o.gzip ? [source, count, createGzip(), stored] : [source, count, stored];
        await pipeline([...stages, createWriteStream(tmp)], { signal: o.signal });
      });
      o.onProgress?.(undefined, bytes);
      return { parts: 1, partsUploaded: 1, bytes, sourceBytes, sha256: hash.digest('hex'), resumed: false };
    },
    async list(prefix) {
      // walk from the deepest folder the prefix names fully
      const slash = prefix.lastIndexOf('/');
      const base = slash === -1 ? '' : prefix.slice(0, slash);
      const keys: string[] = [];
      const walk = async (dirKey: string): Promise<void> => {
        let entries;
        try {
          entries = await readdir(dirKey === '' ? root : pathOf(dirKey), { withFileTypes: true });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
          throw fail('list', prefix, err);
        }
        for (const entry of entries) {
          const key = dirKey === '' ? entry.name : `${dirKey}/${entry.name}`;
          if (entry.isDirectory()) {
            if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(key);
          } else if (key.startsWith(prefix) && !entry.name.endsWith('.tmp')) {
            keys.push(key);
          }
        }
      };
      await walk(base);
      return keys.sort();
    },
    async delete(keys) {
      const folders = new Set<string>();
      for (const key of keys) {
        try {
          await rm(pathOf(key), { force: true });
        } catch (err) {
          throw fail('delete', key, err);
        }
        for (let at = dirname(pathOf(key)); at.startsWith(root + sep); at = dirname(at)) folders.add(at);
      }
      // the folders the keys leave empty go too (deepest first), as on S3 where a prefix exists only through its keys
      for (const at of [...folders].sort((a, b) => b.length - a.length)) await rmdir(at).catch(() => undefined);
    },
    async openLog(key) {
      const path = pathOf(key);
      let fd: number;
      try {
        await ensureFolder(dirname(path));
        fd = openSync(path, 'w');
      } catch (err) {
        throw fail('write', key, err);
      }
      let closed = false;
      return {
        // a synchronous write: ~15 µs for a page's rows where an awaited one took ~80 µs, and no other write of this
        // log can interleave with it
        async append(text) {
          try {
            const bytes = Buffer.from(text);
            for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
          } catch (err) {
            throw fail('write', key, err);
          }
        },
        async close() {
          if (closed) return;
          closed = true;
          closeSync(fd);
        },
      };
    },
    assertFresh: () => undefined, // no credentials
    close: () => undefined,
  };
}

/** A file-system failure in the registry: retryable unless the folder refuses (no access, no such file). */
function localError(op: 'read' | 'list' | 'write' | 'delete', root: string, key: string, err: unknown): SapiTransferError {
  const fsCode = (err as NodeJS.ErrnoException | undefined)?.code;
  return new SapiTransferError({
    code: op === 'read' || op === 'list' ? SapiErrorCode.DOWNLOAD_FAILED : SapiErrorCode.UPLOAD_FAILED,
    message: `${op} failed`,
    context: { folder: root, key },
    retryable: fsCode !== 'EACCES' && fsCode !== 'ENOENT',
    serviceCode: fsCode,
    cause: err,
  });
}
