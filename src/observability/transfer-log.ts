// A workflow interceptor module (it runs in the workflow sandbox: only @temporalio/workflow and types here): one INFO
// line when an import, export or extraction starts and one when it ends, through the SDK's workflow logger (so
// never again on replay, and with the workflow's ids in its metadata). It logs names, counts and ids, never a
// source or destination (a URL may carry a credential).
import { log, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/** What the lines say of each workflow's input and result (unknown fields are left out). */
type Fields = Record<string, string | number | boolean | undefined>;

const TRANSFERS: Record<string, { verb: string; start(input: Record<string, unknown>): Fields; end(result: Record<string, unknown>): Fields }> = {
  importTableWorkflow: {
    verb: 'import',
    start: (input) => ({
      table: [input.bucketId, input.table].filter((part) => typeof part === 'string').join('.') || undefined,
      mode: input.mode as string | undefined,
    }),
    end: (result) => ({
      rows: result.importedRowsCount as number,
      bytes: result.bytes as number,
      tableId: result.tableId as string,
      fileId: result.fileId as number,
      jobId: result.jobId as number,
    }),
  },
  exportTableWorkflow: {
    verb: 'export',
    start: (input) => ({ tableId: input.tableId as string }),
    end: (result) => ({ bytes: result.bytes as number, slices: result.slices as number, fileId: result.fileId as number, jobId: result.jobId as number }),
  },
  extractWorkflow: {
    verb: 'extract',
    start: (input) => ({ bucketId: input.bucketId as string | undefined }),
    end: (result) => ({
      records: result.records as number,
      pages: result.pages as number,
      bytes: result.bytes as number,
      tables: Array.isArray(result.tables) ? result.tables.length : undefined,
      bucketId: result.bucketId as string,
    }),
  },
};

/** `k=v, k=v` of the defined fields. */
function describe(fields: Fields): string {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(', ');
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      // `then`, not async/await: one promise per run instead of three (each promise a workflow creates costs the SDK a
      // stack trace)
      execute(input, next) {
        const info = workflowInfo();
        const transfer = TRANSFERS[info.workflowType];
        if (!transfer) return next(input);
        const args = (input.args[0] ?? {}) as Record<string, unknown>;
        // a run that continues an earlier one (continue-as-new) is not a new transfer
        const continued = info.continuedFromExecutionRunId !== undefined;
        if (!continued) {
          const fields = transfer.start(args);
          log.info(`${transfer.verb} started [${describe(fields)}]`, { transfer: transfer.verb, ...fields });
        }
        return next(input).then((result: unknown) => {
          const fields = { ...transfer.end((result ?? {}) as Record<string, unknown>), durationMs: Date.now() - info.startTime.getTime() };
          log.info(`${transfer.verb} finished [${describe(fields)}]`, { transfer: transfer.verb, ...fields });
          return result;
        });
      },
    },
  ],
});
