import type { Command } from 'commander';
import type { CliContext } from './context';
import { addOutputOptions, integerParser } from './common';
import type { ReceiptsFlags } from './receipts-run';

/** Most receipts `receipts` lists by default (the service answers at most 1000 rows at once). */
const DEFAULT_RECEIPTS_LIMIT = 100;

/**
 * `sapi-temporal receipts --table T` (the receipts of the loads into a table, newest first) and `sapi-temporal verify
 * --run <workflow id>` (a run's tables recounted against its receipts). Both read the receipts table in Storage with
 * the connection's token (`SAPI_URL`/`SAPI_TOKEN`, or `SAPI_<NAME>_…` with `--connection`); neither needs Temporal.
 */
export function registerReceiptsCommands(program: Command, context: CliContext): void {
  const common = (command: Command) =>
    command
      .option('--receipts-table <table id>', 'the receipts table (default: SAPI_RECEIPTS_TABLE, else in.c-sapi-temporal.receipts)')
      .option('--connection <name>', 'the Storage connection (SAPI_URL/SAPI_TOKEN is default)');
  const receipts = program
    .command('receipts')
    .description('list the receipts of the loads into a table, newest first: run, rows, bytes, file, job, source, when')
    .requiredOption('--table <table id>', 'the loaded table, e.g. in.c-main.orders')
    .option('--limit <n>', 'most receipts listed (at most 1000)', integerParser(1), DEFAULT_RECEIPTS_LIMIT);
  common(receipts);
  addOutputOptions(receipts, 'an object {table, receiptsTable, receipts: [...]} on stdout');
  receipts.action(async (flags: ReceiptsFlags & { table: string; limit: number }) => {
    const { listReceipts, receiptsReader } = await import('./receipts-run');
    process.stdout.write(`${await listReceipts(receiptsReader(context.env, flags), flags.table, flags)}\n`);
  });
  const verify = program
    .command('verify')
    .description(
      "recount the tables a run loaded against its receipts (a full load: the table's rows equal the receipt's; incremental: at most the rows the receipted loads brought)",
    )
    .requiredOption('--run <workflow id>', 'the import or extraction (its load children are found by it)');
  common(verify);
  addOutputOptions(verify, 'an object {run, receiptsTable, ok, checks: [...]} on stdout; when a check fails, the error object with `checks`');
  verify.action(async (flags: ReceiptsFlags & { run: string }) => {
    const { receiptsReader, verifyRun } = await import('./receipts-run');
    process.stdout.write(`${await verifyRun(receiptsReader(context.env, flags), flags.run, flags)}\n`);
  });
}
