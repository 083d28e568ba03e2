/**
 * Emulator: its own import (`tables-async` of a CSV already in storage) and export (`export-async`, sliced) throughput
 * for a generated CSV (default 1 GiB), timed by polling the job every 100 ms, and the emulator process's peak RSS.
 * Baseline, in this process: DuckDB alone (`read_csv` into a table, `COPY … TO` a CSV) on the same file with the
 * same memory limit, i.e. the floor under the emulator's own CSV handling.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_DUCKDB_MEMORY_LIMIT } from '../../src/emulator/options';
import type { Scenario } from '../lib/context';
import { measure } from '../lib/measure';
import { kibToMb, readMemory } from '../lib/proc';
import { figure } from '../lib/report';
import { ensureBucket, uploadPrepared, waitForJob } from '../lib/storage-ops';
import { mbPerSecond } from '../lib/stats';

/** Targets of issue 14 (on a 1 GiB CSV): import ≥ 40 MB/s, export ≥ 60 MB/s. */
export const IMPORT_TARGET_MBPS = 40;
export const EXPORT_TARGET_MBPS = 60;

export const emulatorScenario: Scenario = async (ctx) => {
  const { stack, options } = ctx;
  const csv = await ctx.fixtures.csv(options.emulatorSizeMiB);
  const bucketId = await ensureBucket(stack.storage, 'emu');
  const table = `import_${Date.now().toString(36)}`;
  ctx.log(`uploading ${csv.bytes} bytes to storage (not timed) …`);
  const fileId = await uploadPrepared(stack, csv.path, `${table}.csv`);
  const emulatorIdleKiB = readMemory(stack.pids.emulator)?.rssKiB ?? 0;

  ctx.log('import job …');
  const imported = await measure(stack, async () => {
    const job = await stack.storage.createTableAsync({ bucketId, name: table, dataFileId: fileId });
    return waitForJob(stack.storage, Number(job.id));
  });
  const rows = (imported.value.results as { totalRowsCount?: number; importedRowsCount?: number } | null)?.importedRowsCount;
  ctx.log(
    `import: ${(imported.ms / 1000).toFixed(1)} s (${mbPerSecond(csv.bytes, imported.ms)!.toFixed(1)} MB/s, ${rows} rows), emulator peak ${kibToMb(imported.emulator.peakKiB)} MB, cpu ${JSON.stringify(imported.cpuSeconds)}`,
  );

  ctx.log('export job …');
  const exported = await measure(stack, async () => {
    const job = await stack.storage.exportTableAsync({ tableId: `${bucketId}.${table}` });
    return waitForJob(stack.storage, Number(job.id));
  });
  const file = await stack.storage.getFile({ fileId: Number((exported.value.results as { file: { id: number } }).file.id) });
  const exportBytes = Number(file.sizeBytes ?? 0);
  ctx.log(
    `export: ${(exported.ms / 1000).toFixed(1)} s (${mbPerSecond(exportBytes, exported.ms)!.toFixed(1)} MB/s of ${exportBytes} bytes, sliced ${file.isSliced}), emulator peak ${kibToMb(exported.emulator.peakKiB)} MB, cpu ${JSON.stringify(exported.cpuSeconds)}`,
  );

  ctx.log('baseline: DuckDB read_csv and COPY TO on the same file …');
  const duck = await duckdbBaseline(join(stack.dataDir, 'duckdb-baseline'), csv.path);
  ctx.log(`baseline: read_csv ${(duck.importMs / 1000).toFixed(1)} s, COPY TO ${(duck.exportMs / 1000).toFixed(1)} s (${duck.exportBytes} bytes)`);
  await stack.storage.deleteTable({ tableId: `${bucketId}.${table}` }).catch(() => undefined);

  const peakKiB = Math.max(imported.emulator.peakKiB, exported.emulator.peakKiB);
  const note = `${options.emulatorSizeMiB} MiB CSV; baseline: DuckDB alone`;
  return {
    figures: [
      figure({
        scenario: 'emulator',
        metric: 'import (tables-async)',
        unit: 'MB/s',
        ours: mbPerSecond(csv.bytes, imported.ms),
        baseline: mbPerSecond(csv.bytes, duck.importMs),
        note,
        target: { on: 'ours', op: '>=', value: IMPORT_TARGET_MBPS },
      }),
      figure({
        scenario: 'emulator',
        metric: 'export (export-async)',
        unit: 'MB/s',
        ours: mbPerSecond(exportBytes, exported.ms),
        baseline: mbPerSecond(duck.exportBytes, duck.exportMs),
        note,
        target: { on: 'ours', op: '>=', value: EXPORT_TARGET_MBPS },
      }),
      figure({
        scenario: 'emulator',
        metric: 'import CPU (emulator)',
        unit: 's/GB',
        ours: (imported.cpuSeconds.emulator ?? 0) / (csv.bytes / 1e9),
        note: 'CPU seconds of the emulator process per GB imported: the figure a loaded machine does not distort',
      }),
      figure({
        scenario: 'emulator',
        metric: 'export CPU (emulator)',
        unit: 's/GB',
        ours: (exported.cpuSeconds.emulator ?? 0) / (exportBytes / 1e9),
        note: 'CPU seconds of the emulator process per GB exported',
      }),
      figure({
        scenario: 'emulator',
        metric: 'emulator peak RSS',
        unit: 'MB',
        ours: kibToMb(peakKiB),
        baseline: kibToMb(emulatorIdleKiB),
        note: 'baseline: emulator RSS at idle',
      }),
    ],
    details: {
      csvBytes: csv.bytes,
      rows,
      importMs: Math.round(imported.ms),
      exportMs: Math.round(exported.ms),
      exportBytes,
      exportSliced: file.isSliced,
      importCpuSeconds: imported.cpuSeconds,
      exportCpuSeconds: exported.cpuSeconds,
      emulatorPeakMb: { import: kibToMb(imported.emulator.peakKiB), export: kibToMb(exported.emulator.peakKiB), idle: kibToMb(emulatorIdleKiB) },
      emulatorHwmReset: imported.emulator.hwmReset,
      duckdb: duck,
    },
  };
};

/** DuckDB on its own: CSV → table (all VARCHAR, like the emulator's untyped tables) → CSV, same memory limit. */
async function duckdbBaseline(dir: string, csvPath: string): Promise<{ importMs: number; exportMs: number; exportBytes: number; memoryLimit: string }> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const instance = await DuckDBInstance.create(join(dir, 'baseline.duckdb'), { memory_limit: DEFAULT_DUCKDB_MEMORY_LIMIT, temp_directory: join(dir, 'tmp') });
  const connection = await instance.connect();
  try {
    const quoted = (s: string) => `'${s.replace(/'/g, "''")}'`;
    let started = performance.now();
    await connection.run(`CREATE TABLE t AS SELECT * FROM read_csv(${quoted(csvPath)}, header = true, all_varchar = true, quote = '"', escape = '"')`);
    const importMs = performance.now() - started;
    const out = join(dir, 'export.csv');
    started = performance.now();
    await connection.run(`COPY t TO ${quoted(out)} (HEADER false, FORCE_QUOTE *)`);
    const exportMs = performance.now() - started;
    const exportBytes = statSync(out).size;
    return { importMs: Math.round(importMs), exportMs: Math.round(exportMs), exportBytes, memoryLimit: DEFAULT_DUCKDB_MEMORY_LIMIT };
  } finally {
    connection.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
}
