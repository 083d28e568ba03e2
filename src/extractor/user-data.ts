/**
 * User data of a job run: what the reference passes to its parsers as the "parent id" of every root row. Pure module.
 *
 * The job's `userData` (for a top-level job: `parameters.config.userData`, then the job's own), then the
 * `parent_<field>` values of a child run. The JSON parser adds them as columns of the job's own table; a mapping
 * reads them with `type: "user"` entries and hashes them into link values.
 */
import { parentColumnName, type ParentContext } from './children';
import { cellValue } from './flatten';
import type { JobConfig } from './types';

/** Raw user data of a run (values as decoded: numbers stay numbers). */
export function runUserData(job: Pick<JobConfig, 'userData'>, parent: ParentContext | null | undefined): Record<string, unknown> {
  const data: Record<string, unknown> = { ...(job.userData ?? {}) };
  for (const p of parent?.params ?? []) data[parentColumnName(p.field)] = p.value;
  return data;
}

/** The columns the JSON parser adds to every root row: user data cells, then the run's `parent_<field>` columns. */
export function rootColumns(job: Pick<JobConfig, 'userData'>, parentColumns: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!job.userData) return parentColumns;
  const columns: Record<string, string> = {};
  for (const [key, value] of Object.entries(job.userData)) columns[key] = cellValue(value);
  return { ...columns, ...(parentColumns ?? {}) };
}
