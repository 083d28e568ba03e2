/**
 * Where the input policy meets the transfers: every source and destination an activity touches is opened through
 * {@link createConfinement}, so the rule is the same whoever started the run (CLI, plugin API, schedule, another
 * namespace). NOT workflow-safe.
 *
 * - Local paths: under `SAPI_LOCAL_ROOTS` ({@link confineLocalSource}, {@link confineLocalDestination}).
 * - `http(s)://` sources: the allow-list and address rule, on every connection ({@link guardedAgent}).
 * - `s3://` with the worker's own keys: `SAPI_ALLOWED_OBJECT_PREFIXES`, never a bucket the Storage service keeps its
 *   files in (learned from the file resources this worker has seen).
 * - The extraction's staged CSVs (the worker's staging area): only with the grant `buildTableCsv` issued for that
 *   URI (an HMAC with a key derived from the worker's Storage tokens), never by naming them.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Dispatcher } from 'undici';
import { SapiInputForbiddenError, SapiInvalidInputError } from '../errors';
import { fileSource, httpSource, s3Source, type ByteSource } from '../object-storage/sources';
import { redactUrl } from '../http/redact';
import { checkedFile } from '../security/local-files';
import { confineLocalDestination, confineLocalSource } from '../security/local-paths';
import { checkUrl } from '../security/network';
import { checkObjectUri, type InputPolicy } from '../security/policy';

/** Options of {@link createConfinement}. */
interface ConfinementOptions {
  policy: InputPolicy;
  /** The worker's own S3 client (for allowed `s3://` objects and an `s3://` staging area). */
  s3: () => S3Client;
  /** The guarded pool HTTP(S) sources are fetched with. */
  sources: Dispatcher;
  /** `SAPI_STAGING_URL`: staged files are opened only with a grant. */
  stagingUrl: string;
  /** Secret the staging grants are derived from (the worker's Storage tokens); absent: a key of this process only. */
  grantSecret?: string;
}

/** What an activity opens sources and destinations with. */
export interface Confinement {
  /** Opens a source an input names (`field` is the input's name for messages), or refuses it. */
  openSource(uri: string, field: string, options?: { signal?: AbortSignal; grant?: string }): Promise<ByteSource>;
  /** Checks a source without reading it (where a run checks its inputs before it creates anything). */
  checkSource(uri: string, field: string, grant?: string): Promise<void>;
  /** The destination to write (a real local path, or the `s3://` URI), or a refusal. */
  confineDestination(uri: string, field: string, overwrite: boolean): Promise<string>;
  /** A grant for a staged file this worker built (passed on to the import that loads it). */
  grant(uri: string): string;
  /** Notes a bucket the Storage service keeps its files in: never a source or destination of the worker's keys. */
  noteStorageBucket(bucket: string | undefined): void;
}

const isS3 = (uri: string) => /^s3:\/\//i.test(uri);
const isHttp = (uri: string) => /^https?:\/\//i.test(uri);
const localPathOf = (uri: string) => (/^file:\/\//i.test(uri) ? decodeURIComponent(new URL(uri).pathname) : uri);

/** The confinement of a worker (one per activity dependency set). */
export function createConfinement(options: ConfinementOptions): Confinement {
  const { policy } = options;
  const key = Buffer.from(hkdfSync('sha256', options.grantSecret ?? randomBytes(32), 'sapi-temporal', 'staging-grant-v1', 32));
  const storageBuckets = new Set<string>();
  const mac = (uri: string) => createHmac('sha256', key).update(uri).digest();
  const granted = (uri: string, grant: string | undefined) => {
    if (!grant) return false;
    const given = Buffer.from(grant, 'base64url');
    const want = mac(uri);
    return given.length === want.length && timingSafeEqual(given, want);
  };
  const staging = options.stagingUrl;
  let stagingRoot: Promise<string> | undefined;
  const inStaging = async (uri: string): Promise<boolean> => {
    if (isS3(staging)) return isS3(uri) && uri.startsWith(staging.endsWith('/') ? staging : `${staging}/`);
    if (isS3(uri) || isHttp(uri)) return false;
    stagingRoot ??= realpath(staging).catch(() => resolve(staging));
    const root = await stagingRoot;
    return uri === root || uri.startsWith(root + sep);
  };
  const checkObject = (uri: string, field: string) => {
    checkObjectUri(policy, field, uri);
    const bucket = /^s3:\/\/([^/]+)/i.exec(uri)![1]!;
    if (storageBuckets.has(bucket))
      throw new SapiInputForbiddenError(field, "the bucket is the Storage service's own file bucket: read and write its files through Storage");
  };
  /** The checked form of a source: a real local path, or the URI as given. */
  const confineSource = async (uri: string, field: string, grant?: string): Promise<string> => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(uri) && !isS3(uri) && !isHttp(uri) && !/^file:\/\//i.test(uri)) {
      throw new SapiInvalidInputError(`${field}: unsupported source scheme: use a local path, http(s)://, file:// or s3://`);
    }
    if (granted(uri, grant)) return uri; // a staged CSV this worker built
    if (isHttp(uri)) return checkUrl(policy, field, uri).href;
    if (isS3(uri)) {
      checkObject(uri, field);
      if (await inStaging(uri)) throw new SapiInputForbiddenError(field, "the worker's staging area is read only by the run that staged it");
      return uri;
    }
    const real = await confineLocalSource(policy, field, localPathOf(uri));
    if (await inStaging(real)) throw new SapiInputForbiddenError(field, "the worker's staging area is read only by the run that staged it");
    return real;
  };
  return {
    async openSource(uri, field, { signal, grant } = {}) {
      const checked = await confineSource(uri, field, grant);
      if (isHttp(checked)) {
        // every redirect hop is checked as the URL was (scheme, allow-list with its whole URL, the worker's own services)
        const checkRedirect = (to: URL, from: URL) => {
          try {
            checkUrl(policy, field, to.href);
          } catch (err) {
            if (!(err instanceof SapiInputForbiddenError)) throw err;
            throw new SapiInputForbiddenError(
              field,
              `${from.host} redirected the source to ${redactUrl(`${to.origin}${to.pathname}`)}, which is refused (${err.message.slice(field.length + 2)}); the redirect was not followed`,
            );
          }
        };
        return httpSource(checked, { dispatcher: options.sources, signal, checkRedirect });
      }
      if (isS3(checked)) return s3Source(checked, { s3: options.s3(), signal });
      // a local file is read from descriptors checked to be this very file, never reopened by name unchecked
      if (granted(uri, grant)) return fileSource(checked); // the worker's own staged file
      return checkedFileSource(checked, field);
    },
    async checkSource(uri, field, grant) {
      await confineSource(uri, field, grant);
    },
    async confineDestination(uri, field, overwrite) {
      if (isS3(uri)) {
        checkObject(uri, field);
        if (await inStaging(uri)) throw new SapiInputForbiddenError(field, "the worker's staging area is not a destination");
        return uri;
      }
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(uri) && !/^file:\/\//i.test(uri))
        throw new SapiInvalidInputError(`${field}: a destination is a local path or s3://bucket/key`);
      const real = await confineLocalDestination(policy, field, localPathOf(uri), overwrite);
      if (await inStaging(real)) throw new SapiInputForbiddenError(field, "the worker's staging area is not a destination");
      return real;
    },
    grant(uri) {
      return mac(uri).toString('base64url');
    },
    noteStorageBucket(bucket) {
      if (bucket) storageBuckets.add(bucket);
    },
  };
}

/** Stream buffer of local reads: 1 MiB (as `FILE_READ_HIGH_WATER_MARK`). */
const READ_HIGH_WATER_MARK = 1024 * 1024;

/** A byte source over the local file at `real`: every open checked to be the file checked first ({@link checkedFile}). */
async function checkedFileSource(real: string, field: string): Promise<ByteSource> {
  const file = await checkedFile(real, field);
  return {
    description: real,
    size: file.size,
    path: real,
    openHandle: file.reopen,
    async open(start) {
      const handle = await file.reopen();
      return handle.createReadStream({ start, highWaterMark: READ_HIGH_WATER_MARK });
    },
  };
}
