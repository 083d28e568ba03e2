import { SapiErrorCode, SapiStorageError, unlessNotFound, type StorageErrorCode } from '../errors';
import { typedTableSchema } from '../storage-api';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';
import { findBucket } from './ensure-bucket';

export interface CheckImportTargetInput {
  connection?: string;
  bucketId: string;
  table: string;
  mode: 'create' | 'load';
  /** The bucket will be created when missing. */
  createBucket: boolean;
}

export interface CheckImportTargetResult {
  bucketExists: boolean;
  /** The table's columns when it exists. */
  columns?: string[];
  /** The existing table is typed (loads are checked against its types). */
  typed?: boolean;
}

/**
 * Checks, before anything is created or uploaded, that the import can land: `load` needs the table, `create` needs
 * it absent, and without `createBucket` the bucket must exist. Fails with a non-retryable `SAPI_NOT_FOUND` /
 * `SAPI_ALREADY_EXISTS` that says how to fix the input.
 */
export function checkImportTarget(deps: ActivityDeps) {
  return (input: CheckImportTargetInput): Promise<CheckImportTargetResult> => asActivity(() => checkTarget(deps, input));
}

/** The body of {@link checkImportTarget}, for activities that check as one of their steps. */
export async function checkTarget(deps: ActivityDeps, input: CheckImportTargetInput): Promise<CheckImportTargetResult> {
  const storage = deps.storage(input.connection);
  const tableId = `${input.bucketId}.${input.table}`;
  const table = await unlessNotFound(() => storage.getTable({ tableId }));
  // a table found says its bucket exists (no look at the bucket: its detail lists all its tables)
  const bucketExists = table !== undefined || (await findBucket(storage, input.bucketId)) !== undefined;
  const fail = (code: StorageErrorCode, message: string) =>
    new SapiStorageError({ code, message, retryable: false, details: { bucketId: input.bucketId, tableId } });
  if (!bucketExists && !input.createBucket) {
    throw fail(SapiErrorCode.NOT_FOUND, `bucket ${input.bucketId} does not exist; create it first or pass createBucket (CLI: --create-bucket)`);
  }
  if (input.mode === 'load' && !table) {
    throw fail(SapiErrorCode.NOT_FOUND, `table ${tableId} does not exist: mode load needs an existing table; use mode create to create it`);
  }
  if (input.mode === 'create' && table) {
    throw fail(SapiErrorCode.ALREADY_EXISTS, `table ${tableId} already exists: mode create makes a new table; use mode load (with incremental to append)`);
  }
  return { bucketExists, columns: table ? table.columns : undefined, ...(table ? { typed: typedTableSchema.safeParse(table).data?.isTyped ?? false } : {}) };
}
