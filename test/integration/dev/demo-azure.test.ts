import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { runDemo } from '../../../src/demo';
import { testStack } from '../../harness/stack-state';

describe('the demo on the Azure backend (make demo BACKEND=azure)', () => {
  it('runs end to end with the emulator\'s files in Azurite: rows match, and the exported file is an Azure one', async () => {
    const dataDir = mkdtempSync(join(testStack().dataDir, 'demo-azure-'));
    const lines: string[] = [];
    const result = await runDemo({ dataDir, backend: 'azure', env: {}, keep: true, log: (line) => lines.push(line) });
    try {
      expect(lines[0]).toContain('Azurite');
      expect(result.export.rowsMatch).toBe(true);
      expect(result.import.importedRowsCount).toBe(20_000);
      expect(result.extract?.records).toBe(95);
      const { SAPI_URL: url, SAPI_TOKEN: token } = result.stack.env;
      const response = await fetch(`${url}/v2/storage/files/${result.export.fileId}?federationToken=1`, { headers: { 'X-StorageApi-Token': token! } });
      const file = (await response.json()) as { provider?: string; isSliced?: boolean; absPath?: { container: string } };
      expect(file).toMatchObject({ provider: 'azure', isSliced: true });
      expect(file.absPath?.container).toBeTruthy();
    } finally {
      await result.stack.stop();
    }
  });
});
