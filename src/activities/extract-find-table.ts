import { unlessNotFound } from '../errors';
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
      const table = await unlessNotFound(() => deps.storage(input.connection).getTable({ tableId: input.tableId }));
      return table ? { exists: true, columns: table.columns } : { exists: false, columns: [] };
    });
}
