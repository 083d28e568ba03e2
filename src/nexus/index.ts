// The plugin as a Nexus service: another namespace (another team, another worker with no Storage token) imports,
// exports and extracts through a Nexus endpoint that targets this worker's namespace and task queue. The token, the
// object-store keys and the input policy stay with the handler. This module is the contract both sides import: it
// holds no Node code, so a caller's workflow bundle can import it (`sapi-temporal/nexus`).
import * as nexus from 'nexus-rpc';
import type { ExtractInput, ExtractResult } from '../contracts/extract';
import type { ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult } from '../contracts/transfer';

/** Name of the Nexus service (what a caller's `createNexusServiceClient` and the endpoint's handler agree on). */
export const SAPI_NEXUS_SERVICE_NAME = 'sapi-temporal';

/**
 * The operations, each backed by the workflow of the same job: the caller gets the workflow's result, or its
 * failure; cancelling the operation (or the caller) cancels that workflow.
 */
export const sapiNexusService = nexus.service(SAPI_NEXUS_SERVICE_NAME, {
  importTable: nexus.operation<ImportTableInput, ImportTableResult>(),
  exportTable: nexus.operation<ExportTableInput, ExportTableResult>(),
  extract: nexus.operation<ExtractInput, ExtractResult>(),
});

export type SapiNexusService = typeof sapiNexusService;
export type { ExtractInput, ExtractResult, ExportTableInput, ExportTableResult, ImportTableInput, ImportTableResult };
