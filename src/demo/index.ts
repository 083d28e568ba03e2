import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadTemporalConnection, temporalConnectionOptions } from '../config/temporal';
import { codecDataConverter } from '../codec';
import { devCodecFromEnv, startDevStack, type DevBackend, type DevStack, type DevStackMinio } from '../dev/stack';
import { devServices } from '../dev/services';
import { DEFAULT_DEMO_BACKEND } from './defaults';
import { configureWorkerLogging } from '../worker';
import type { ExportTableResult, ImportTableResult } from '../contracts/transfer';
import type { WorkflowInput, WorkflowName, WorkflowResult } from '../contracts/workflows';

export { DEFAULT_DEMO_BACKEND } from './defaults';

/** Rows of the demo's sample CSV. */
const DEMO_ROWS = 20_000;
/** Export slice size the demo's emulator uses, so the export comes back sliced (bytes). */
const DEMO_SLICE_BYTES = 64 * 1024;
/** What the demo's first line names as the emulator's file storage, per backend. */
const FILE_STORES: Record<DevBackend, string> = { aws: 'MinIO', azure: 'Azurite', gcp: 'fake-gcs-server' };

interface DemoOptions {
  /** Where the stack and the demo files live; wiped first. Default `.data/demo`. */
  dataDir?: string;
  /** Lines of progress go here. Default stdout. */
  log?: (line: string) => void;
  /** Keep the stack running after the demo (until `stop()` is called). Default false. */
  keep?: boolean;
  /**
   * Where codec keys are read from (`SAPI_CODEC_KEYS` / `SAPI_CODEC_KEY_FILE`): with keys, the stack's worker and the
   * demo's client encrypt payloads and the Temporal UI decodes them through the stack's codec server. Default
   * `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * The emulator's file storage: `azure` (Azurite, default), `aws` (MinIO) or `gcp` (fake-gcs-server). Only the
   * backend's store runs: the demo reads and writes local files only, so on `azure` and `gcp` no MinIO is started
   * (nor needs to be installed). Default {@link DEFAULT_DEMO_BACKEND}.
   */
  backend?: DevBackend;
}

export interface DemoResult {
  import: ImportTableResult & { workflowId: string };
  load: ImportTableResult & { workflowId: string };
  export: ExportTableResult & { workflowId: string; rowsMatch: boolean };
  extract?: { workflowId: string; tables: Array<{ name: string; tableId: string | null; rows: number }>; pages: number; records: number };
  temporalUi: string;
  /** The demo's stack (running with `keep`); its `minio` only on the `aws` backend. */
  stack: DevStack<DevStackMinio>;
}

/**
 * The main job end to end on the embedded dev stack: import a sample CSV (direct upload), load changed rows
 * incrementally (importer path), export the table back as a sliced file and check it row for row, then run an
 * extraction against a sample paginated API and load it into Storage.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dataDir = resolve(options.dataDir ?? '.data/demo');
  configureWorkerLogging(process.env.SAPI_LOG_LEVEL ?? 'WARN'); // the demo prints its own progress
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(join(dataDir, 'files'), { recursive: true });
  const backend = options.backend ?? DEFAULT_DEMO_BACKEND;
  log(`starting the dev stack under ${dataDir} (Temporal, ${FILE_STORES[backend]} for the emulator's files, Storage API emulator, worker)…`);
  const codec = devCodecFromEnv(options.env ?? process.env);
  const stack = await startDevStack({
    dataDir: join(dataDir, 'stack'),
    localRoots: [join(dataDir, 'files')],
    backend,
    // MinIO only where it holds the emulator's files: the demo's sources and destinations are local files
    minio: backend === 'aws',
    services: devServices({ sliceSizeBytes: DEMO_SLICE_BYTES }),
    codec,
  });
  if (stack.codecServer)
    log(`payloads are encrypted (codec keys from the environment); the Temporal UI decodes them through the codec server at ${stack.codecServer.url}`);
  const connection = await Connection.connect(temporalConnectionOptions(loadTemporalConnection(stack.env)).client);
  try {
    // the worker has the stack's codec keys: the client must encrypt inputs and decrypt results with the same
    const client = new Client({ connection, namespace: stack.env.TEMPORAL_NAMESPACE, dataConverter: codecDataConverter(codec?.keys) });
    const taskQueue = stack.taskQueue;
    const run = async <W extends WorkflowName>(type: W, id: string, input: WorkflowInput<W>): Promise<WorkflowResult<W> & { workflowId: string }> => {
      const workflowId = `demo-${id}-${Date.now()}`;
      const result = await client.workflow.execute<(input: WorkflowInput<W>) => Promise<WorkflowResult<W>>>(type, { taskQueue, workflowId, args: [input] });
      return { ...result, workflowId };
    };

    const source = join(dataDir, 'files', 'orders.csv');
    writeFileSync(source, ordersCsv(0, DEMO_ROWS, 1));
    log(`1/4 importing ${DEMO_ROWS} orders (${source}) into in.c-demo.orders, direct upload…`);
    const imported = await run('importTableWorkflow', 'import', {
      source,
      bucketId: 'in.c-demo',
      createBucket: true,
      table: 'orders',
      primaryKey: ['id'],
    });
    log(`    ${imported.importedRowsCount} rows imported, ${imported.bytes} bytes, file ${imported.fileId}, job ${imported.jobId}`);

    const changes = join(dataDir, 'files', 'orders-changed.csv');
    writeFileSync(changes, ordersCsv(DEMO_ROWS - 500, DEMO_ROWS + 500, 2));
    log('2/4 loading 1000 changed/new orders incrementally through the importer service…');
    const loaded = await run('importTableWorkflow', 'load', {
      source: changes,
      bucketId: 'in.c-demo',
      table: 'orders',
      mode: 'load',
      incremental: true,
      via: 'importer',
    });
    log(`    ${loaded.importedRowsCount} rows loaded (upsert by id)`);

    const destination = join(dataDir, 'files', 'orders-export.csv');
    log('3/4 exporting in.c-demo.orders back (sliced) and comparing row for row…');
    const exported = await run('exportTableWorkflow', 'export', { tableId: 'in.c-demo.orders', destination });
    const expected = expectedRows();
    const actual = readFileSync(destination, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => line.replace(/"/g, ''))
      .sort();
    const rowsMatch = actual.length === expected.length && actual.every((line, i) => line === expected[i]);
    const sha = await sha256(destination);
    log(
      `    ${exported.slices} slices → ${destination}: ${exported.bytes} bytes, sha256 ${sha.slice(0, 16)}…, ${actual.length} rows, ${rowsMatch ? 'rows match' : 'ROWS DIFFER'}`,
    );

    let extract: DemoResult['extract'];
    const { createSampleApi } = await import('../sample-api');
    const api = await createSampleApi({ port: 0, records: 95, pageSize: 10 });
    try {
      const config = JSON.parse(readFileSync(resolve(__dirname, '..', '..', 'examples', 'extract-users.json'), 'utf8'));
      config.parameters.api.baseUrl = api.url;
      log(`4/4 extracting ${api.url}cursor/items page by page (response.param cursor) into in.c-demo-extract…`);
      extract = await run('extractWorkflow', 'extract', { config });
      for (const table of extract!.tables) log(`    ${table.tableId ?? `${table.name} (not loaded)`}: ${table.rows} rows`);
      log(`    ${extract!.pages} pages, ${extract!.records} records`);
    } finally {
      await api.close();
    }
    log(
      options.keep
        ? `done. Temporal UI: ${stack.env.TEMPORAL_UI_URL} (workflows demo-*)`
        : `done. Temporal UI was at ${stack.env.TEMPORAL_UI_URL}; \`sapi-temporal demo --keep\` keeps the stack running to browse it`,
    );
    return {
      import: imported,
      load: loaded,
      export: { ...exported, rowsMatch },
      extract,
      temporalUi: stack.env.TEMPORAL_UI_URL ?? '',
      stack,
    };
  } finally {
    await connection.close();
    if (!options.keep) await stack.stop();
  }

  function expectedRows(): string[] {
    const rows = new Map<number, string>();
    for (let i = 0; i < DEMO_ROWS; i++) rows.set(i, orderRow(i, 1));
    for (let i = DEMO_ROWS - 500; i < DEMO_ROWS + 500; i++) rows.set(i, orderRow(i, 2));
    return [...rows.values()].sort();
  }
}

function orderRow(id: number, version: number): string {
  return `${id},customer-${id % 97},${((id * 37) % 10_000) / 100},${version === 1 ? 'new' : 'shipped'}`;
}

function ordersCsv(from: number, to: number, version: number): string {
  const lines = ['id,customer,amount,status'];
  for (let i = from; i < to; i++) lines.push(orderRow(i, version));
  return `${lines.join('\n')}\n`;
}

function sha256(path: string): Promise<string> {
  return new Promise((ok, fail) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => ok(hash.digest('hex')))
      .on('error', fail);
  });
}
