import { SapiErrorCode, SapiInvalidInputError, isSapiError } from '../errors';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface EnsureBucketInput {
  connection?: string;
  /** `in.c-name` or `out.c-name`. */
  bucketId: string;
}

export interface EnsureBucketResult {
  bucketId: string;
  created: boolean;
}

/** Creates the bucket unless it exists (a second create answering `alreadyExists` counts as existing). */
export function ensureBucket(deps: ActivityDeps) {
  return (input: EnsureBucketInput): Promise<EnsureBucketResult> =>
    asActivity(async () => {
      const match = /^(in|out)\.c-(.+)$/.exec(input.bucketId);
      if (!match) throw new SapiInvalidInputError(`bucket id must look like in.c-name or out.c-name, got "${input.bucketId}"`);
      const storage = deps.storage(input.connection);
      try {
        await storage.getBucket({ bucketId: input.bucketId });
        return { bucketId: input.bucketId, created: false };
      } catch (err) {
        if (!isSapiError(err) || err.code !== SapiErrorCode.NOT_FOUND) throw err;
      }
      try {
        const bucket = await storage.createBucket({ stage: match[1] as 'in' | 'out', name: match[2]! });
        return { bucketId: bucket.id, created: true };
      } catch (err) {
        // a lost response of our own create, or a concurrent creator: the bucket exists, which is all we need
        if (isSapiError(err) && (err.code === SapiErrorCode.ALREADY_EXISTS || err.mayHaveReachedService)) {
          await storage.getBucket({ bucketId: input.bucketId });
          return { bucketId: input.bucketId, created: false };
        }
        throw err;
      }
    });
}
