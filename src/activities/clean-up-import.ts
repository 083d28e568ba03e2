import { unlessNotFound } from '../errors';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface CleanUpImportInput {
  connection?: string;
  /** The file resource this run prepared or uploaded. */
  fileId?: number;
  /** The bucket this run created: removed when it holds no table. */
  bucketId?: string;
}

export interface CleanUpImportResult {
  fileDeleted: boolean;
  bucketDeleted: boolean;
  /** Why something was kept (e.g. the bucket holds tables). */
  kept: string[];
}

/**
 * The compensation of a failed import: removes what the run created, so the project is left as the run found it.
 * The file resource goes; the bucket goes only while it holds no table (someone may have added one meanwhile).
 * Things already gone count as removed, so the activity can be retried.
 */
export function cleanUpImport(deps: ActivityDeps) {
  return (input: CleanUpImportInput): Promise<CleanUpImportResult> =>
    asActivity(async () => {
      const storage = deps.storage(input.connection);
      const result: CleanUpImportResult = { fileDeleted: false, bucketDeleted: false, kept: [] };
      if (input.fileId !== undefined) {
        await unlessNotFound(() => storage.deleteFile({ fileId: input.fileId! }));
        result.fileDeleted = true;
      }
      if (input.bucketId !== undefined) {
        const tables = await unlessNotFound(() => storage.listTables({ bucketId: input.bucketId }));
        if (tables && tables.length > 0) {
          result.kept.push(`bucket ${input.bucketId} holds ${tables.length} table(s): ${tables.map((t) => t.id).join(', ')}`);
        } else {
          await unlessNotFound(() => storage.deleteBucket({ bucketId: input.bucketId! }));
          result.bucketDeleted = true;
        }
      }
      return result;
    });
}
