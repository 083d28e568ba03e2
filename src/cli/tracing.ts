// A transfer command as one trace: with tracing configured (`SAPI_OTEL_ENDPOINT` / `OTEL_EXPORTER_OTLP_*`), the
// command runs under a root span (`sapi-temporal import`), the client's start carries it to the workflow (the SDK's
// OpenTelemetry plugin on the CLI's client, see temporal-link.ts), and the spans are sent before the command returns.
import type { TransferRun, TransferRunner } from './context';
import type { WorkflowName } from '../contracts/workflows';
import { startTracing } from '../observability/tracing';
import type { SpanAttributes } from '../observability/spans';

/** Runs `run` through `runner`, traced when the run's settings say so; else exactly `runner(run)`. */
export async function tracedTransfer<W extends WorkflowName>(run: TransferRun<W>, runner: TransferRunner): Promise<void> {
  if (!run.settings.tracing) return runner(run);
  const tracing = startTracing(run.settings.tracing, 'sapi-temporal-cli');
  try {
    await tracing.rootSpan(`sapi-temporal ${run.verb}`, commandAttributes(run), () => runner(run));
  } finally {
    await tracing.shutdown().catch(() => undefined);
  }
}

/** The ids a command names: workflow, table, bucket (never a source URL: it may be presigned). */
export function commandAttributes(run: Pick<TransferRun, 'workflowType' | 'workflowId' | 'input' | 'settings'>): SpanAttributes {
  const input = run.input as { bucketId?: unknown; table?: unknown; tableId?: unknown; outputBucket?: unknown };
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const bucketId = str(input.bucketId) ?? str(input.outputBucket);
  const tableId = str(input.tableId) ?? (bucketId && str(input.table) ? `${bucketId}.${str(input.table)}` : undefined);
  return {
    'sapi.workflow_type': run.workflowType,
    'sapi.workflow_id': run.workflowId,
    'sapi.task_queue': run.settings.taskQueue,
    'sapi.table_id': tableId,
    'sapi.bucket_id': bucketId,
  };
}
