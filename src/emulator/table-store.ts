import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { type SnapshotRecord, type TableRecord } from './model';

/** Quotes an SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `"<bucketId>"."<tableName>"`: one DuckDB schema per bucket. */
export function tableRef(bucketId: string, name: string): string {
  return `${ident(bucketId)}.${ident(name)}`;
}

/** DuckDB's string compression methods, disabled unless `compressStrings`. */
const STRING_COMPRESSION_METHODS = 'fsst,dictionary,dict_fsst';

/** Internal per-row column with the time of the load that wrote the row (for `changedSince`). */
export const TIMESTAMP_COLUMN = '_timestamp';
/** Schema of the snapshots' data: `"_snapshots"."<snapshotId>"`, a copy of the table's (with `_timestamp`). */
export const SNAPSHOT_SCHEMA = '_snapshots';
/** Staging tables are `__staging_<jobId>` in the target bucket's schema; dropped at start-up. */
export const STAGING_PREFIX = '__staging_';

/**
 * Tables live in one DuckDB file: data in `"<bucket>"."<table>"` (every column VARCHAR, plus `_timestamp`),
 * metadata and job commit markers in schema `_emulator`, so a load, its metadata and the fact that its job is done
 * commit in one transaction.
 */
export class TableStore {
  private readonly meta = new Map<string, TableRecord>();
  private readonly snapshotMeta = new Map<number, SnapshotRecord>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly main: DuckDBConnection,
  ) {}

  /**
   * Opens (or creates) the database; `memoryLimit` bounds DuckDB's buffer pool (it spills to `tempDirectory`);
   * without `compressStrings`, strings are stored without dictionary/FSST compression (faster loads).
   */
  static async open(path: string, options: { memoryLimit: string; tempDirectory: string; compressStrings?: boolean }): Promise<TableStore> {
    const instance = await DuckDBInstance.create(path, {
      memory_limit: options.memoryLimit,
      temp_directory: options.tempDirectory,
      ...(options.compressStrings ? {} : { disabled_compression_methods: STRING_COMPRESSION_METHODS }),
    });
    const main = await instance.connect();
    const store = new TableStore(instance, main);
    await main.run('CREATE SCHEMA IF NOT EXISTS _emulator');
    await main.run('CREATE TABLE IF NOT EXISTS _emulator.tables (id VARCHAR, doc VARCHAR)');
    await main.run('CREATE TABLE IF NOT EXISTS _emulator.job_commits (job_id BIGINT, results VARCHAR)');
    await main.run('CREATE TABLE IF NOT EXISTS _emulator.snapshots (id BIGINT, doc VARCHAR)');
    await main.run(`CREATE SCHEMA IF NOT EXISTS ${ident(SNAPSHOT_SCHEMA)}`);
    const rows = (await main.runAndReadAll('SELECT doc FROM _emulator.tables')).getRowsJS();
    for (const [doc] of rows) {
      const record = JSON.parse(String(doc)) as TableRecord;
      store.meta.set(record.id, record);
    }
    for (const [doc] of (await main.runAndReadAll('SELECT doc FROM _emulator.snapshots')).getRowsJS()) {
      const record = JSON.parse(String(doc)) as SnapshotRecord;
      store.snapshotMeta.set(record.id, record);
    }
    await store.dropStagingTables();
    return store;
  }

  private async dropStagingTables(): Promise<void> {
    const rows = (
      await this.main.runAndReadAll(`SELECT schema_name, table_name FROM duckdb_tables() WHERE starts_with(table_name, '${STAGING_PREFIX}')`)
    ).getRowsJS();
    for (const [schema, name] of rows) await this.main.run(`DROP TABLE IF EXISTS ${tableRef(String(schema), String(name))}`);
  }

  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  get(id: string): TableRecord | undefined {
    return this.meta.get(id);
  }

  list(bucketId?: string): TableRecord[] {
    const all = [...this.meta.values()];
    return (bucketId ? all.filter((t) => t.bucketId === bucketId) : all).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Writes metadata inside the caller's transaction; call {@link remember} after the commit. */
  async writeMeta(conn: DuckDBConnection, record: TableRecord): Promise<void> {
    await conn.run('DELETE FROM _emulator.tables WHERE id = $1', [record.id]);
    await conn.run('INSERT INTO _emulator.tables VALUES ($1, $2)', [record.id, JSON.stringify(record)]);
  }

  remember(record: TableRecord): void {
    this.meta.set(record.id, record);
  }

  /** The table a snapshot's data is kept in. */
  snapshotRef(id: number): string {
    return tableRef(SNAPSHOT_SCHEMA, String(id));
  }

  snapshot(id: number): SnapshotRecord | undefined {
    return this.snapshotMeta.get(id);
  }

  /** Snapshots of a table, newest first. */
  snapshotsOf(tableId: string): SnapshotRecord[] {
    return [...this.snapshotMeta.values()].filter((s) => s.table.id === tableId).sort((a, b) => b.id - a.id);
  }

  /** Writes a snapshot's record inside the caller's transaction; call {@link rememberSnapshot} after the commit. */
  async writeSnapshot(conn: DuckDBConnection, record: SnapshotRecord): Promise<void> {
    await conn.run('INSERT INTO _emulator.snapshots VALUES ($1, $2)', [record.id, JSON.stringify(record)]);
  }

  rememberSnapshot(record: SnapshotRecord): void {
    this.snapshotMeta.set(record.id, record);
  }

  async dropSnapshot(id: number): Promise<void> {
    const conn = await this.connect();
    try {
      await conn.run('BEGIN TRANSACTION');
      await conn.run(`DROP TABLE IF EXISTS ${this.snapshotRef(id)}`);
      await conn.run('DELETE FROM _emulator.snapshots WHERE id = $1', [id]);
      await conn.run('COMMIT');
      this.snapshotMeta.delete(id);
    } catch (error) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      conn.closeSync();
    }
  }

  /** Marks a job done inside the caller's transaction, with its results. */
  async writeJobCommit(conn: DuckDBConnection, jobId: number, results: unknown): Promise<void> {
    await conn.run('INSERT INTO _emulator.job_commits VALUES ($1, $2)', [jobId, JSON.stringify(results)]);
  }

  /** Results of a job whose load committed, if it did. */
  async jobCommit(jobId: number): Promise<unknown> {
    const rows = (await this.main.runAndReadAll('SELECT results FROM _emulator.job_commits WHERE job_id = $1', [jobId])).getRowsJS();
    return rows.length ? JSON.parse(String(rows[0]![0])) : undefined;
  }

  async ensureSchema(conn: DuckDBConnection, bucketId: string): Promise<void> {
    await conn.run(`CREATE SCHEMA IF NOT EXISTS ${ident(bucketId)}`);
  }

  async dropTable(id: string): Promise<void> {
    const record = this.meta.get(id);
    if (!record) return;
    const conn = await this.connect();
    try {
      await conn.run('BEGIN TRANSACTION');
      await conn.run(`DROP TABLE IF EXISTS ${tableRef(record.bucketId, record.name)}`);
      await conn.run('DELETE FROM _emulator.tables WHERE id = $1', [id]);
      await conn.run('COMMIT');
      this.meta.delete(id);
    } catch (error) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      conn.closeSync();
    }
  }

  async dropSchema(bucketId: string): Promise<void> {
    for (const t of this.list(bucketId)) await this.dropTable(t.id);
    await this.main.run(`DROP SCHEMA IF EXISTS ${ident(bucketId)} CASCADE`);
  }

  async read(id: string): Promise<{ columns: string[]; rows: string[][] }> {
    const record = this.meta.get(id);
    if (!record) throw new Error(`table not found [tableId=${id}]`);
    const columns = record.columns;
    const sql = `SELECT ${columns.map((c) => `CAST(${ident(c)} AS VARCHAR)`).join(', ')} FROM ${tableRef(record.bucketId, record.name)} ORDER BY rowid`;
    const rows = (await this.main.runAndReadAll(sql)).getRowsJS();
    return { columns, rows: rows.map((r) => r.map((v) => (v === null ? '' : String(v)))) };
  }

  close(): void {
    this.main.closeSync();
    this.instance.closeSync();
  }
}
