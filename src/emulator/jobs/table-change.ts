/** Jobs that change an existing table: drop, add or delete a column, delete rows, snapshots, definition updates. */
import { type EmulatorContext } from '../context';
import { JobError } from '../errors';
import { type JobRecord, type TableRecord } from '../model';

/** The table a job works on, or the job's `storage.tables.notFound` (it went away between the request and the run). */
export function jobTable(ctx: EmulatorContext, job: JobRecord): TableRecord {
  const table = job.tableId ? ctx.tables.get(job.tableId) : undefined;
  if (!table) throw new JobError('storage.tables.notFound', `The table "${job.tableId ?? ''}" was not found in the project "${ctx.projectId}"`);
  return table;
}

/** `tableDrop` (`DELETE tables/{id}?async=1`): the table, its data and its metadata go. */
export async function runTableDrop(ctx: EmulatorContext, job: JobRecord): Promise<unknown> {
  const table = jobTable(ctx, job);
  await ctx.tables.dropTable(table.id);
  ctx.metadata.deleteObject('table', table.id);
  return null;
}
