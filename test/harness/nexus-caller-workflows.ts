// Workflows of another team's namespace that use the plugin only through its Nexus service: their worker has no
// Storage token, no object-store keys, no plugin; the bundle holds the service contract (`sapi-temporal/nexus`) only.
import { createNexusServiceClient } from '@temporalio/workflow';
import type { ExportTableInput, ExportTableResult, ExtractInput, ExtractResult, ImportTableInput, ImportTableResult } from '../../src/nexus';
import { sapiNexusService } from '../../src/nexus';

export async function importThroughNexus(endpoint: string, input: ImportTableInput): Promise<ImportTableResult> {
  const sapi = createNexusServiceClient({ service: sapiNexusService, endpoint });
  return sapi.executeOperation('importTable', input, { scheduleToCloseTimeout: '10 minutes' });
}

export async function exportThroughNexus(endpoint: string, input: ExportTableInput): Promise<ExportTableResult> {
  const sapi = createNexusServiceClient({ service: sapiNexusService, endpoint });
  return sapi.executeOperation('exportTable', input, { scheduleToCloseTimeout: '10 minutes' });
}

export async function extractThroughNexus(endpoint: string, input: ExtractInput): Promise<ExtractResult> {
  const sapi = createNexusServiceClient({ service: sapiNexusService, endpoint });
  return sapi.executeOperation('extract', input, { scheduleToCloseTimeout: '10 minutes' });
}
