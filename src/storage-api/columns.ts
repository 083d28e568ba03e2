/** The service's rules for column names, checked on our side before anything is uploaded. */

/** Column names the service accepts: letters, digits, underscore; 1–64 characters. */
const COLUMN_NAME_PATTERN = /^[A-Za-z0-9_]{1,64}$/;

/**
 * Most columns a table may have, checked before an import creates anything: the lowest of the service's per-backend
 * limits (its own code, keboola/storage-backend `ColumnCollection`: 1,600 on Redshift, 10,000 on Snowflake, one kept
 * for `_timestamp`); the emulator's default is the same.
 */
export const MAX_TABLE_COLUMNS = 1_599;

/** The problems of a list of column names (invalid names, case-insensitive duplicates); empty when it is fine. */
export function columnNameProblems(names: readonly string[]): string[] {
  const problems: string[] = [];
  const invalid = names.filter((n) => !COLUMN_NAME_PATTERN.test(n));
  if (invalid.length) {
    problems.push(
      `invalid column name(s) ${invalid.map((n) => JSON.stringify(n)).join(', ')}: names may contain only letters, digits and underscores, at most 64 characters`,
    );
  }
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const n of names) {
    if (seen.has(n.toLowerCase())) duplicates.add(n);
    seen.add(n.toLowerCase());
  }
  if (duplicates.size) problems.push(`duplicate column name(s) ${[...duplicates].map((n) => JSON.stringify(n)).join(', ')} (names are case-insensitive)`);
  return problems;
}
