// The loading phase of `extractWorkflow`: per staged table, find the existing table, build the CSV from the staged
// pages, then load it with an `importTableWorkflow` child. Workflow code (sandbox-safe).
import { executeChild } from '@temporalio/workflow';
import type { SapiActivities } from '../activities';
import { columnsOf, mergeTableSchema } from '../extractor/table-schema';
import { storageColumnNames } from '../contracts/extract-plan';
import type { ExtractTableResult } from '../contracts/extract';
import type { ExtractCheckpoint } from '../extractor/checkpoint';
import type { PollingOptions } from '../contracts/transfer';
import type { ReceiptOrigin, ReceiptsOption } from '../contracts/receipts';
import type { Priority } from '@temporalio/common';
import { importTableWorkflow } from './import-table';

/** What loading reads from the checkpoint: where the pages are staged, the schema and the rows per table. */
type StagedTables = Pick<ExtractCheckpoint, 'runKey' | 'runId' | 'schema' | 'rows'>;

/** Everything {@link loadTables} needs besides the checkpoint. */
interface LoadTablesOptions {
  /** The extraction's workflow id (the import children are `<id>-load-<table>-<run id prefix>`). */
  workflowId: string;
  connection: string | undefined;
  bucketId: string;
  incremental: boolean;
  polling: PollingOptions | undefined;
  /** The extraction's outage budget, passed on to the import children. */
  outageBudgetMs?: number;
  /** Task queue of the import's transfer (`activityTaskQueue`). */
  transferTaskQueue: string | undefined;
  /** Primary keys of mapped tables (safe table name → columns as the mapping names them), set when a table is created. */
  primaryKeys?: Record<string, string[]>;
  /** Mapped tables (name → columns): loaded even without rows (header only), as the reference writes them. */
  mappedTables?: Record<string, string[]>;
  /** The fairness key the import children get when the extraction was started without one (they inherit the rest). */
  priority?: Priority;
  /** Tables loaded at once (the others wait their turn, in schema order). */
  concurrency: number;
  /** Where the loads' receipts go (`ExtractOptions.receipts`). */
  receipts?: ReceiptsOption;
  /** The extraction and what it read, named by every load's receipt. */
  receiptOrigin?: ReceiptOrigin;
  /** `findTable` (short calls) and `buildTableCsv` (long, heartbeating), proxied with their own options. */
  activities: Pick<SapiActivities, 'findTable' | 'buildTableCsv'>;
}

/** Tables with staged rows and known columns, in schema order; the tables named in `always` even without rows. */
function stagedTables(staged: StagedTables, always: readonly string[] = []): string[] {
  return Object.keys(staged.schema).filter((name) => ((staged.rows[name] ?? 0) > 0 || always.includes(name)) && (staged.schema[name]?.length ?? 0) > 0);
}

/** The tables as results when nothing is loaded (`load: false`, or cancelled without `loadOnCancel`). */
export function notLoaded(staged: StagedTables): ExtractTableResult[] {
  return stagedTables(staged).map((name) => ({
    name,
    tableId: null,
    rows: staged.rows[name] ?? 0,
    stagedRows: staged.rows[name] ?? 0,
    columns: storageColumnNames(columnsOf(staged.schema, name)),
  }));
}

/**
 * Runs `each` over `items`, at most `limit` at a time, starting them in order; settles like `Promise.allSettled`
 * (every one runs to its end whatever the others do). Deterministic in a workflow: which item starts next depends
 * only on completions, which replay from history.
 */
async function settleInTurn<T, R>(items: readonly T[], limit: number, each: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = { status: 'fulfilled', value: await each(items[i]!) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}

/**
 * Loads every staged table, `concurrency` at a time: `findTable`, then `buildTableCsv` (staged rows in extraction order, aligned
 * to the final column union; an existing table's columns we did not see are kept with empty values, or Storage
 * refuses the load), then an `importTableWorkflow` child (`create`, or `load` into the existing table).
 */
export async function loadTables(staged: StagedTables, o: LoadTablesOptions): Promise<ExtractTableResult[]> {
  // mapped tables without rows are loaded too (their columns come from the mapping)
  const mapped = o.mappedTables ?? {};
  if (Object.keys(mapped).length > 0)
    staged = {
      ...staged,
      schema: mergeTableSchema(
        staged.schema,
        Object.entries(mapped).map(([name, keys]) => ({ name, keys })),
      ),
    };
  // every table's load runs to its end, even when a sibling's fails: a child is never terminated (and its clean-up
  // skipped) because the parent failed early; the first failure is reported once all have ended
  const settled = await settleInTurn(stagedTables(staged, Object.keys(mapped)), o.concurrency, async (name): Promise<ExtractTableResult> => {
    const keys = staged.schema[name]!;
    const tableId = `${o.bucketId}.${name}`;
    const existing = await o.activities.findTable({ connection: o.connection, tableId });
    const ours = storageColumnNames(columnsOf(staged.schema, name));
    const known = new Set(ours.map((c) => c.toLowerCase()));
    const columns = [...ours, ...existing.columns.filter((c) => !known.has(c.toLowerCase()))];
    const csv = await o.activities.buildTableCsv({ runKey: staged.runKey, table: name, keys, columns });
    // a mapped table is created with its primary key (Storage names of its columns)
    const primaryKey = existing.exists ? [] : (o.primaryKeys?.[name] ?? []).map((k) => ours[keys.indexOf(k)]).filter((c): c is string => c !== undefined);
    const imported = await executeChild(importTableWorkflow, {
      workflowId: `${o.workflowId}-load-${name}-${staged.runId.slice(0, 8)}`,
      ...(o.priority ? { priority: o.priority } : {}),
      args: [
        {
          connection: o.connection,
          source: csv.uri,
          ...(csv.grant ? { sourceGrant: csv.grant } : {}),
          bucketId: o.bucketId,
          createBucket: true,
          table: name,
          mode: existing.exists ? 'load' : 'create',
          ...(primaryKey.length > 0 ? { primaryKey } : {}),
          incremental: o.incremental,
          polling: o.polling,
          ...(o.outageBudgetMs !== undefined ? { outageBudgetMs: o.outageBudgetMs } : {}),
          transferTaskQueue: o.transferTaskQueue,
          ...(o.receipts !== undefined ? { receipts: o.receipts } : {}),
          ...(o.receiptOrigin ? { receiptOrigin: o.receiptOrigin } : {}),
        },
      ],
    });
    return {
      name,
      tableId: imported.tableId,
      rows: imported.importedRowsCount,
      stagedRows: staged.rows[name] ?? 0,
      columns,
      ...(primaryKey.length > 0 ? { primaryKey } : {}),
      csv: csv.uri,
      ...(imported.receipt ? { receipt: imported.receipt } : {}),
    };
  });
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<ExtractTableResult>).value);
}
