import { SapiErrorCode, isSapiError } from '../errors';
import type { ActivityDeps } from './deps';
import { asActivity } from './context';

export interface FindTableInput {
  connection?: string;
  /** `bucket.table`, e.g. `in.c-main.users`. */
  tableId: string;
}

export interface FindTableResult {
  exists: boolean;
  /** The table's columns when it exists. */
  columns: string[];
}

/** Whether a Storage table exists (and its columns): the extraction creates new tables and loads into existing ones. */
export function findTable(deps: ActivityDeps) {
  return (input: FindTableInput): Promise<FindTableResult> =>
    asActivity(async () => {
      try {
        const table = await deps.storage(input.connection).getTable({ tableId: input.tableId });
        return { exists: true, columns: table.columns };
      } catch (err) {
        if (isSapiError(err) && err.code === SapiErrorCode.NOT_FOUND) return { exists: false, columns: [] };
        throw err;
      }
    });
}
