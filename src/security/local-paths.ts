/**
 * Local paths an input names, confined to the worker's roots (`SAPI_LOCAL_ROOTS`): resolved with `realpath`
 * (symlinks and `..` cannot leave a root), regular files only, never under `/proc`, `/sys` or `/dev`. NOT
 * workflow-safe (node:fs).
 */
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { SapiInputForbiddenError, SapiInvalidInputError } from '../errors';
import type { InputPolicy } from './policy';
import { realPathOrParent } from './local-files';

/** Pseudo file systems never read or written, whatever the roots say. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** How long a root's real path is reused before it is resolved again (ms): a root moved meanwhile is seen after this. */
const ROOT_REALPATH_TTL_MS = 60_000;

/** Real paths of roots, resolved at `at` (a root that did not exist is not kept: it is looked for again next time). */
const rootRealpaths = new Map<string, { real: Promise<string | undefined>; at: number }>();

/** The real path of a root, resolved at most once per {@link ROOT_REALPATH_TTL_MS} unless `fresh`. */
function realRoot(root: string, fresh: boolean): Promise<string | undefined> {
  const now = Date.now();
  const kept = rootRealpaths.get(root);
  if (kept && !fresh && now - kept.at < ROOT_REALPATH_TTL_MS) return kept.real;
  const real = realpath(root).catch(() => undefined);
  const entry = { real, at: now };
  rootRealpaths.set(root, entry);
  void real.then((resolved) => {
    if (resolved === undefined && rootRealpaths.get(root) === entry) rootRealpaths.delete(root);
  });
  return real;
}

/**
 * The roots as real paths (a root that does not exist allows nothing). Kept between calls (each check resolved every
 * root again: one `realpath` per root per file); `fresh` resolves them now, as a refusal does before it is final.
 */
async function realRoots(policy: InputPolicy, fresh: boolean): Promise<string[]> {
  const roots = await Promise.all(policy.localRoots.map((root) => realRoot(root, fresh)));
  return roots.filter((root): root is string => root !== undefined);
}

/**
 * Runs a check with the kept real paths of the roots and, when it refuses the path, once more with the roots resolved
 * again: a root whose real path changed (a symlink moved, a volume remounted) is not refused on a stale answer.
 */
async function withRoots<T>(check: (fresh: boolean) => Promise<T>): Promise<T> {
  try {
    return await check(false);
  } catch (err) {
    if (!(err instanceof SapiInputForbiddenError)) throw err;
    return check(true);
  }
}

function assertConfined(policy: InputPolicy, roots: string[], field: string, real: string): void {
  if (SYSTEM_TREES.some((tree) => within(real, tree))) throw new SapiInputForbiddenError(field, 'paths under /proc, /sys and /dev are never read or written');
  if (!roots.some((root) => within(real, root))) {
    throw new SapiInputForbiddenError(
      field,
      policy.localRoots.length === 0
        ? 'local paths are not allowed on this worker (SAPI_LOCAL_ROOTS is empty): use an http(s):// or an allowed s3:// source'
        : "the local path is outside the worker's allowed roots (SAPI_LOCAL_ROOTS)",
    );
  }
}

function absolute(field: string, path: string): string {
  if (!isAbsolute(path)) throw new SapiInputForbiddenError(field, 'a local path must be absolute (the CLI makes it so)');
  return resolve(path);
}

/**
 * The real path of a local source, once it is known to be a regular file under a root. A path that does not exist
 * under a root is `SAPI_INVALID_INPUT`; outside the roots it is `SAPI_INPUT_FORBIDDEN` whether it exists or not (the
 * refusal says nothing about the worker's files).
 */
export function confineLocalSource(policy: InputPolicy, field: string, path: string): Promise<string> {
  return withRoots((fresh) => confineSource(policy, field, path, fresh));
}

async function confineSource(policy: InputPolicy, field: string, path: string, fresh: boolean): Promise<string> {
  const { given, roots, real } = await resolved(policy, field, path, fresh);
  if (real === undefined) {
    // does not exist: only say so when it would be allowed
    assertConfined(policy, roots, field, await realParent(given));
    throw new SapiInvalidInputError(`${field}: ${path} does not exist on the worker's host`);
  }
  assertConfined(policy, roots, field, real);
  const st = await lstat(real);
  if (!st.isFile()) throw new SapiInputForbiddenError(field, 'a local source must be a regular file');
  return real;
}

/**
 * The real path to write a local destination at: its folder (the nearest existing one, resolved) under a root, the
 * file itself a regular file when it exists, and then only with `overwrite`.
 */
export function confineLocalDestination(policy: InputPolicy, field: string, path: string, overwrite: boolean): Promise<string> {
  return withRoots((fresh) => confineDestination(policy, field, path, overwrite, fresh));
}

async function confineDestination(policy: InputPolicy, field: string, path: string, overwrite: boolean, fresh: boolean): Promise<string> {
  const { given, roots, real } = await resolved(policy, field, path, fresh);
  if (real === undefined) {
    const fresh = join(await realParent(given), basename(given));
    assertConfined(policy, roots, field, fresh);
    return fresh;
  }
  assertConfined(policy, roots, field, real);
  const st = await lstat(real);
  if (!st.isFile()) throw new SapiInputForbiddenError(field, 'a local destination must be a regular file');
  if (!overwrite) throw new SapiInputForbiddenError(field, 'the destination exists: pass overwrite (CLI --overwrite) to replace it');
  return real;
}

/** The absolute path given, the real roots, and the real path when it exists. */
async function resolved(policy: InputPolicy, field: string, path: string, fresh: boolean): Promise<{ given: string; roots: string[]; real?: string }> {
  const given = absolute(field, path);
  const [roots, real] = await Promise.all([realRoots(policy, fresh), realpath(given).catch(() => undefined)]);
  return { given, roots, real };
}

/** The real path of the nearest existing ancestor of `path`'s folder, with the rest of that folder joined back on. */
function realParent(path: string): Promise<string> {
  return realPathOrParent(dirname(path));
}
