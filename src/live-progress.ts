// Live progress of a running transfer or batch, from the heartbeat of its pending activity: the activities report
// through their heartbeat (no history event per report), so the `progress` query knows the totals of finished steps
// and this adds the step in flight.
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import { cursorOf } from './contracts/extract-plan';
import type { ProgressReport } from './contracts/transfer';
import type { ScrollerState } from './extractor/scroller';

/**
 * What the `progress` query answers: a transfer's `TransferProgress` or an extraction's progress (pages,
 * records; its `jobId` is absent). Only the fields the CLI and the typed client show.
 */
export interface RunProgress {
  phase: string;
  bytes: number;
  totalBytes?: number;
  slicesDone?: number;
  slices?: number;
  fileId?: number;
  jobId?: number;
  jobStatus?: string;
  pages?: number;
  records?: number;
}

/** Activities whose heartbeat carries `progress: {bytes, totalBytes?, slicesDone?, slices?}`. */
const TRANSFER_ACTIVITIES = new Set(['uploadFile', 'uploadAndStartJob', 'uploadSlices', 'uploadViaImporter', 'downloadFile']);

/** What the step in flight adds to the `progress` answer. */
export type LiveProgress =
  | { kind: 'transfer'; report: ProgressReport }
  | {
      kind: 'batch';
      page: number;
      cursor: string | null;
      pages: number;
      records: number;
      bytes: number;
      rows: Record<string, number>;
      /** A batch of child runs: its tag (`c<firstRunNo>:<from>`), matched against the progress's `childBatch`. */
      childBatch?: string;
    };

/** The live progress in the heartbeat details of the pending transfer or `fetchPages` activity, if any (decoded with the client's codec). */
export async function heartbeatProgress(
  client: Client,
  pending: readonly temporal.api.workflow.v1.IPendingActivityInfo[] | null | undefined,
): Promise<LiveProgress | undefined> {
  for (const activity of pending ?? []) {
    const type = activity.activityType?.name ?? '';
    if (!activity.heartbeatDetails?.payloads?.length || (!TRANSFER_ACTIVITIES.has(type) && type !== 'fetchPages')) continue;
    const details = await decodeFromPayloadsAtIndex<Record<string, unknown>>(
      client.workflow.options.loadedDataConverter,
      0,
      activity.heartbeatDetails.payloads,
    ).catch(() => undefined);
    if (!details || typeof details !== 'object') continue;
    if (TRANSFER_ACTIVITIES.has(type)) {
      const report = details.progress as ProgressReport | undefined;
      if (report && typeof report.bytes === 'number') return { kind: 'transfer', report };
    } else {
      // fetchPages heartbeats its resume point {state, totals}: the batch so far
      const state = details.state as ScrollerState | undefined;
      const totals = details.totals as { pages?: number; records?: number; bytes?: number; rows?: Record<string, number> } | undefined;
      if (totals && typeof totals.pages === 'number') {
        // a batch of child runs heartbeats {tag, child, state, totals, stopReasons}: its state is a child run's
        const childBatch = typeof details.child === 'number' ? { childBatch: String(details.tag ?? '') } : {};
        return {
          kind: 'batch',
          page: state?.pages ?? 0,
          cursor: state ? cursorOf(state) : null,
          pages: totals.pages,
          records: totals.records ?? 0,
          bytes: totals.bytes ?? 0,
          rows: totals.rows ?? {},
          ...childBatch,
        };
      }
    }
  }
  return undefined;
}

/** `progress` with the step in flight added: a transfer's bytes (never fewer than known), a batch's pages, records and bytes on top of the checkpoint's. */
export function withLive<P extends RunProgress & { tables?: Record<string, number>; page?: number; cursor?: string | null; childBatch?: string }>(
  progress: P,
  live: LiveProgress | undefined,
): P {
  if (!live) return progress;
  if (live.kind === 'transfer') {
    if (progress.phase !== 'uploading' && progress.phase !== 'downloading') return progress;
    return { ...progress, ...live.report, bytes: Math.max(progress.bytes ?? 0, live.report.bytes) };
  }
  if (progress.phase !== 'extracting') return progress;
  // a heartbeat read before its batch ended, beside an answer that already counts the batch: its job run's page is
  // not past the checkpoint's, so adding it would count the batch twice (pages 13, then 9 once the next batch began)
  // a batch of child runs counts only while the run still waits for exactly that batch (its tag names the batch)
  if (live.childBatch !== undefined ? live.childBatch !== progress.childBatch : live.page <= (progress.page ?? 0)) return progress;
  const tables = { ...(progress.tables ?? {}) };
  for (const [table, rows] of Object.entries(live.rows)) tables[table] = (tables[table] ?? 0) + rows;
  return {
    ...progress,
    // (a child batch's page is a child run's: the answer's page and cursor stay the parent's)
    ...(live.childBatch === undefined ? { page: live.page, cursor: live.cursor } : {}),
    pages: (progress.pages ?? 0) + live.pages,
    records: (progress.records ?? 0) + live.records,
    bytes: (progress.bytes ?? 0) + live.bytes,
    ...(progress.tables ? { tables } : {}),
  };
}
