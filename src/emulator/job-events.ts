/** The events a finished job leaves in `GET events`, named like the service's. */
import { type EmulatorContext } from './context';
import { type EventRecord, type JobRecord } from './model';

type JobEvent = Pick<EventRecord, 'event' | 'message' | 'objectType' | 'objectId' | 'objectName' | 'bucketId'>;

function tableParts(tableId: string): { bucketId: string; name: string } {
  const dot = tableId.lastIndexOf('.');
  return { bucketId: tableId.slice(0, dot), name: tableId.slice(dot + 1) };
}

function describe(job: JobRecord): { ok: JobEvent; failed: JobEvent } | undefined {
  const p = job.operationParams;
  const onTable = (okEvent: string, okMessage: string, failEvent: string, failMessage: string) => {
    const tableId = job.tableId ?? '';
    const { bucketId, name } = tableParts(tableId);
    const base = { objectType: 'table' as const, objectId: tableId, objectName: name, bucketId };
    return { ok: { ...base, event: okEvent, message: okMessage }, failed: { ...base, event: failEvent, message: failMessage } };
  };
  switch (job.operationName) {
    case 'tableCreate':
    case 'tableDefinitionCreate':
      return onTable('storage.tableCreated', `Created table ${job.tableId}`, 'storage.tableCreateError', `Table ${job.tableId} was not created`);
    case 'tableImport':
      return onTable(
        'storage.tableImportDone',
        `Imported data into table ${job.tableId}`,
        'storage.tableImportError',
        `Import into table ${job.tableId} failed`,
      );
    case 'tableExport':
      return onTable('storage.tableExported', `Exported table ${job.tableId}`, 'storage.tableExportError', `Export of table ${job.tableId} failed`);
    case 'tableColumnAdd':
      return onTable(
        'storage.tableColumnAdded',
        `Added column ${String(p.name)} to table ${job.tableId}`,
        'storage.tableColumnAddError',
        `Column ${String(p.name)} was not added to table ${job.tableId}`,
      );
    case 'tableColumnDelete':
      return onTable(
        'storage.tableColumnDeleted',
        `Deleted column ${String(p.name)} from table ${job.tableId}`,
        'storage.tableColumnDeleteError',
        `Column ${String(p.name)} was not deleted from table ${job.tableId}`,
      );
    case 'tableRowsDelete':
      return onTable(
        'storage.tableRowsDeleted',
        `Deleted rows from table ${job.tableId}`,
        'storage.tableRowsDeleteError',
        `Rows of table ${job.tableId} were not deleted`,
      );
    case 'tableDefinitionUpdate':
    case 'tableColumnDefinitionUpdate':
      return onTable(
        'storage.tableDefinitionUpdated',
        `Updated the definition of table ${job.tableId}`,
        'storage.tableDefinitionUpdateError',
        `The definition of table ${job.tableId} was not updated`,
      );
    case 'tablePrimaryKeyAdd':
      return onTable(
        'storage.tablePrimaryKeyAdded',
        `Added the primary key of table ${job.tableId}`,
        'storage.tablePrimaryKeyAddError',
        `The primary key of table ${job.tableId} was not added`,
      );
    case 'tablePrimaryKeyDelete':
      return onTable(
        'storage.tablePrimaryKeyDeleted',
        `Removed the primary key of table ${job.tableId}`,
        'storage.tablePrimaryKeyDeleteError',
        `The primary key of table ${job.tableId} was not removed`,
      );
    case 'tableSnapshotCreate':
      return onTable(
        'storage.tableSnapshotCreated',
        `Created a snapshot of table ${job.tableId}`,
        'storage.tableSnapshotCreateError',
        `Snapshot of table ${job.tableId} was not created`,
      );
    case 'devBranchTablePull':
      return onTable(
        'storage.devBranchTablePulled',
        `Pulled table ${job.tableId} into branch ${String(p.targetBranchId)}`,
        'storage.devBranchTablePullError',
        `Table ${job.tableId} was not pulled`,
      );
    case 'tableDrop':
      return onTable('storage.tableDeleted', `Deleted table ${job.tableId}`, 'storage.tableDeleteError', `Table ${job.tableId} was not deleted`);
    case 'bucketDelete': {
      const bucketId = String(p.bucketId);
      const base = { objectType: 'bucket' as const, objectId: bucketId, objectName: bucketId, bucketId: null };
      return {
        ok: { ...base, event: 'storage.bucketDeleted', message: `Deleted bucket ${bucketId}` },
        failed: { ...base, event: 'storage.bucketDeleteError', message: `Bucket ${bucketId} was not deleted` },
      };
    }
    case 'devBranchCreate':
    case 'devBranchDelete': {
      const created = job.operationName === 'devBranchCreate';
      const name = String(p.name ?? p.branchId ?? '');
      const results = job.results as { id?: number } | null;
      const base = { objectType: 'devBranch' as const, objectId: String(results?.id ?? p.branchId ?? ''), objectName: name, bucketId: null };
      return {
        ok: {
          ...base,
          event: created ? 'storage.devBranchCreated' : 'storage.devBranchDeleted',
          message: `${created ? 'Created' : 'Deleted'} development branch ${name}`,
        },
        failed: {
          ...base,
          event: created ? 'storage.devBranchCreateError' : 'storage.devBranchDeleteError',
          message: `Development branch ${name} was not ${created ? 'created' : 'deleted'}`,
        },
      };
    }
    default:
      return undefined;
  }
}

/** Records the event of a finished job: `storage.tableImportDone` with its results, or the matching `…Error` with the job's error. */
export function recordJobEvent(ctx: EmulatorContext, job: JobRecord): void {
  const described = describe(job);
  if (!described) return;
  const success = job.status === 'success';
  const base = success ? described.ok : described.failed;
  const results =
    success && job.results && typeof job.results === 'object' && !Array.isArray(job.results) ? pickResults(job.results as Record<string, unknown>) : {};
  ctx.events.add({
    ...base,
    message: success ? base.message : `${base.message}: ${job.error?.message ?? 'unknown error'}`,
    type: success ? (job.operationName === 'tableImport' || job.operationName === 'tableExport' ? 'success' : 'info') : 'error',
    runId: job.runId,
    params: { jobId: job.id, operationName: job.operationName },
    results: success ? results : { error: job.error },
    token: job.creatorToken,
  });
}

/** The counts of a job's results (not the whole table resource). */
function pickResults(results: Record<string, unknown>): Record<string, unknown> {
  const keys = ['deletedRows', 'importedRowsCount', 'totalRowsCount', 'totalDataSizeBytes', 'exportedRowsCount', 'newColumns', 'file'];
  return Object.fromEntries(keys.filter((k) => k in results).map((k) => [k, results[k]]));
}
