import { Context } from '@temporalio/activity';
import { SapiErrorCode, SapiInvalidInputError, isSapiError, unlessNotFound, type SapiError } from '../errors';
import type { Bucket } from '../storage-api';
import type { ActivityDeps } from './deps';
import { activityMarker, asActivity } from './context';

export interface EnsureBucketInput {
  connection?: string;
  /** `in.c-name` or `out.c-name`. */
  bucketId: string;
}

export interface EnsureBucketResult {
  bucketId: string;
  /** This activity created the bucket (a run that fails later removes it again if it is still empty). */
  created: boolean;
}

/** Creates tried at most per attempt: a create whose answer was lost and that did not happen is sent again. */
export const MAX_BUCKET_CREATES = 3;

/** Tolerated clock difference between the worker and the service when reading a bucket's `created` time. */
const CLOCK_SKEW_MS = 2 * 60 * 1000;

/**
 * Creates the bucket unless it exists. After a create whose answer was lost (5xx, reset, timeout) the bucket is
 * looked up: there, it is ours; absent, the create never happened and is sent again (at most
 * {@link MAX_BUCKET_CREATES} times, then the activity retries). A concurrent creator's bucket (`alreadyExists` on
 * our first create) counts as existing, not as created. On a retry of the activity, a bucket whose description names
 * this activity's marker was created by an earlier attempt.
 */
export function ensureBucket(deps: ActivityDeps) {
  return (input: EnsureBucketInput): Promise<EnsureBucketResult> => asActivity(() => ensureBucketExists(deps, input));
}

/** The body of {@link ensureBucket} (the activity's attempt decides what counts as created). */
export async function ensureBucketExists(deps: ActivityDeps, input: EnsureBucketInput): Promise<EnsureBucketResult> {
  const match = /^(in|out)\.c-(.+)$/.exec(input.bucketId);
  if (!match) throw new SapiInvalidInputError(`bucket id must look like in.c-name or out.c-name, got "${input.bucketId}"`);
  const storage = deps.storage(input.connection);
  const info = Context.current().info;
  const marker = activityMarker();
  const existing = await findBucket(storage, input.bucketId);
  if (existing) {
    // an earlier attempt of this activity created it: its description names this activity's marker (a service that
    // keeps no description: created after this activity was scheduled)
    const creator = creatorOf(existing);
    const created = info.attempt > 1 && (creator !== undefined ? creator === marker : createdSince(existing, info.scheduledTimestampMs - CLOCK_SKEW_MS));
    return { bucketId: input.bucketId, created };
  }
  let ambiguous: SapiError | undefined;
  for (let create = 0; create < MAX_BUCKET_CREATES; create++) {
    try {
      // the description records the run that created it: a failed import's clean-up removes only a bucket it proves its own
      const bucket = await storage.createBucket({ stage: match[1] as 'in' | 'out', name: match[2]!, description: createdByDescription(marker), runId: marker });
      return { bucketId: bucket.id, created: true };
    } catch (err) {
      if (!isSapiError(err)) throw err;
      // a concurrent creator (first create) or our own earlier create whose answer was lost (a later one)
      if (err.code === SapiErrorCode.ALREADY_EXISTS) return { bucketId: input.bucketId, created: ambiguous !== undefined };
      if (!err.mayHaveReachedService) throw err;
      ambiguous = err;
    }
    if (await findBucket(storage, input.bucketId)) return { bucketId: input.bucketId, created: true };
  }
  throw ambiguous!;
}

/** The description of a bucket an import creates: names the marker of the activity that created it. */
export function createdByDescription(marker: string): string {
  return `Created by sapi-temporal (run ${marker})`;
}

/** The marker a bucket's description names ({@link createdByDescription}), if any. */
export function creatorOf(bucket: Pick<Bucket, 'description'>): string | undefined {
  return /\(run (sapi-temporal\.[^\s().]+\.[^\s().]+)\)/.exec(bucket.description ?? '')?.[1];
}

/**
 * The bucket, from the list of buckets; only when the list does not show it, from its detail, which tells a missing
 * bucket (undefined) from one the token may not read (the service's 403). The detail lists every table of the
 * bucket, so a batch of imports into one bucket paid for all its tables on every look.
 */
export async function findBucket(storage: ReturnType<ActivityDeps['storage']>, bucketId: string): Promise<Bucket | undefined> {
  return (await storage.listBuckets()).find((bucket) => bucket.id === bucketId) ?? unlessNotFound(() => storage.getBucket({ bucketId }));
}

function createdSince(bucket: Bucket, sinceMs: number): boolean {
  const created = bucket.created ? Date.parse(bucket.created) : NaN;
  return !Number.isNaN(created) && created >= sinceMs;
}
