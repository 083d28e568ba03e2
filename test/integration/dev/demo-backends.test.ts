import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDemo, type DemoResult } from '../../../src/demo';
import type { DevBackend } from '../../../src/dev/stack';
import { testStack } from '../../harness/stack-state';
import { describeInSweep } from '../../harness/backend-sweep';

/** Per backend besides the default: what the demo's first line names, the file provider, the exported file's path field. */
const backends: Array<[DevBackend, string, string, 's3Path' | 'gcsPath']> = [
  ['aws', 'MinIO', 'aws', 's3Path'],
  ['gcp', 'fake-gcs-server', 'gcp', 'gcsPath'],
];

/** The demo's results a user reads: 20,000 rows imported, 1,000 loaded, the export equal row for row, 95 users extracted. */
function expectDemoResults(result: DemoResult): void {
  expect(result.import.importedRowsCount).toBe(20_000);
  expect(result.load.importedRowsCount).toBe(1_000);
  expect(result.export.rowsMatch).toBe(true);
  expect(result.export.slices).toBeGreaterThan(1);
  expect(result.extract?.records).toBe(95);
  expect(result.extract?.pages).toBe(10);
  // the sample API's users, with their nested tags and contacts flattened into tables of their own
  expect(Object.fromEntries(result.extract!.tables.map((table) => [table.tableId, table.rows]))).toEqual({
    'in.c-demo-extract.users': 95,
    'in.c-demo-extract.users_tags': 96,
    'in.c-demo-extract.users_contacts': 23,
  });
}

/** The exported file's resource as the emulator answers it. */
async function exportedFile(result: DemoResult): Promise<Record<string, unknown>> {
  const { SAPI_URL: url, SAPI_TOKEN: token } = result.stack.env;
  const response = await fetch(`${url}/v2/storage/files/${result.export.fileId}?federationToken=1`, { headers: { 'X-StorageApi-Token': token! } });
  return (await response.json()) as Record<string, unknown>;
}

describe('the demo as `make demo` runs it (its default backend, Azurite)', () => {
  const saved = process.env.SAPI_MINIO_BIN;
  afterEach(() => {
    if (saved === undefined) delete process.env.SAPI_MINIO_BIN;
    else process.env.SAPI_MINIO_BIN = saved;
  });

  it('runs end to end without MinIO (a stand-in that would fail is never started): rows imported, loaded, exported row for row and extracted', async () => {
    const dataDir = mkdtempSync(join(testStack().dataDir, 'demo-default-'));
    // a MinIO that leaves a mark and fails: starting it (or any MinIO) would fail the stack
    const marker = join(dataDir, 'minio-was-started');
    const minio = join(dataDir, 'minio');
    writeFileSync(minio, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
    chmodSync(minio, 0o755);
    process.env.SAPI_MINIO_BIN = minio;
    const lines: string[] = [];
    const result = await runDemo({ dataDir, env: {}, keep: true, log: (line) => lines.push(line) });
    try {
      expect(lines[0]).toMatch(/\(Temporal, Azurite for the emulator's files, Storage API emulator, worker\)/);
      expect(lines.join('\n')).not.toContain('MinIO');
      expect(result.stack.backend).toBe('azure');
      expect(result.stack.minio).toBeUndefined();
      expect(result.stack.env.AWS_ENDPOINT_URL_S3).toBeUndefined();
      expect(existsSync(marker)).toBe(false);
      expectDemoResults(result);
      expect(await exportedFile(result)).toMatchObject({ provider: 'azure', isSliced: true });
    } finally {
      await result.stack.stop();
    }
  });
});

// `make test` runs the default (Azurite) demo; MinIO and fake-gcs-server under it are `make test-backends`' repeats.
describeInSweep.each(backends)('the demo on the %s backend (make demo BACKEND=…)', (backend, store, provider, pathField) => {
  it(`runs end to end with the emulator's files in ${store}, the only object store started: rows match, and the exported file is a ${provider} one`, async () => {
    const dataDir = mkdtempSync(join(testStack().dataDir, `demo-${backend}-`));
    const lines: string[] = [];
    const result = await runDemo({ dataDir, backend, env: {}, keep: true, log: (line) => lines.push(line) });
    try {
      expect(lines[0]).toContain(`(Temporal, ${store} for the emulator's files, Storage API emulator, worker)`);
      expect(result.stack.minio === undefined).toBe(backend !== 'aws');
      expectDemoResults(result);
      const file = await exportedFile(result);
      expect(file).toMatchObject({ provider, isSliced: true });
      expect(file[pathField]).toBeTruthy();
    } finally {
      await result.stack.stop();
    }
  });
});
