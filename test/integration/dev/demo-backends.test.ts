import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { runDemo } from '../../../src/demo';
import type { DevBackend } from '../../../src/dev/stack';
import { testStack } from '../../harness/stack-state';

/** Per backend: what the demo's first line names, the file provider, and the path field of the exported file. */
const backends: Array<[DevBackend, string, string, 'absPath' | 'gcsPath']> = [
  ['azure', 'Azurite', 'azure', 'absPath'],
  ['gcp', 'fake-gcs-server', 'gcp', 'gcsPath'],
];

describe.each(backends)('the demo on the %s backend (make demo BACKEND=…)', (backend, store, provider, pathField) => {
  it(`runs end to end with the emulator's files in ${store}: rows match, and the exported file is a ${provider} one`, async () => {
    const dataDir = mkdtempSync(join(testStack().dataDir, `demo-${backend}-`));
    const lines: string[] = [];
    const result = await runDemo({ dataDir, backend, env: {}, keep: true, log: (line) => lines.push(line) });
    try {
      expect(lines[0]).toContain(store);
      expect(result.export.rowsMatch).toBe(true);
      expect(result.import.importedRowsCount).toBe(20_000);
      expect(result.extract?.records).toBe(95);
      const { SAPI_URL: url, SAPI_TOKEN: token } = result.stack.env;
      const response = await fetch(`${url}/v2/storage/files/${result.export.fileId}?federationToken=1`, { headers: { 'X-StorageApi-Token': token! } });
      const file = (await response.json()) as Record<string, unknown>;
      expect(file).toMatchObject({ provider, isSliced: true });
      expect(file[pathField]).toBeTruthy();
    } finally {
      await result.stack.stop();
    }
  });
});
