// No-op activities of the bench's "SDK floor" (`importShapeWorkflow` in bench/empty-workflows on
// bench/empty-worker-child.ts): they return at once with results about the size of the short path's, so a run costs
// only the orchestration.

/** About the size of `prepareImport`'s result (a prepared file with sealed credentials). */
const PREPARED = { typed: false, bytes: 51_200, createdBucket: false, small: true, target: { fileId: 1, sealed: 'x'.repeat(900) } };

export const floorActivities = {
  async floorSearchAttributes(): Promise<{ registered: string[] }> {
    return { registered: ['SapiOperation', 'SapiTableId', 'SapiPhase', 'SapiRows'] };
  },
  async floorPrepare(table: string): Promise<typeof PREPARED & { table: string }> {
    return { ...PREPARED, table };
  },
  async floorUploadAndStart(prepared: { table: string }): Promise<{ bytes: number; rows: number; job: { id: number; status: string } }> {
    return { bytes: 51_200, rows: prepared.table.length, job: { id: 1, status: 'success' } };
  },
};

export type FloorActivities = typeof floorActivities;
