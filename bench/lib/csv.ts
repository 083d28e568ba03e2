/** Generated CSV files for the benchmark: deterministic rows, written in 1 MiB chunks, cached by size. */
import { createWriteStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';

/** Header of every generated file. */
export const CSV_HEADER = 'id,name,amount,comment\n';

/** Row `i` of the generated data: an id, a repeated name, a decimal and a quoted text with a comma and quotes. */
export function csvRow(i: number): string {
  return `${i},"name ${i % 1000}",${(i * 7) % 100000}.${i % 100},"some text, with a comma and ""quotes"" ${i}"\n`;
}

export interface GeneratedCsv {
  path: string;
  bytes: number;
  rows: number;
}

/**
 * Writes the header, then rows while the file is smaller than `targetBytes` (so it ends up at most one row
 * larger). A file written before for the same target (sidecar `<path>.json`) is reused.
 */
export async function writeCsv(path: string, targetBytes: number): Promise<GeneratedCsv> {
  const sidecar = `${path}.json`;
  if (existsSync(path) && existsSync(sidecar)) {
    const cached = JSON.parse(readFileSync(sidecar, 'utf8')) as GeneratedCsv & { targetBytes: number };
    if (cached.targetBytes === targetBytes && statSync(path).size === cached.bytes) return { path, bytes: cached.bytes, rows: cached.rows };
  }
  const out = createWriteStream(path);
  let bytes = 0;
  let rows = 0;
  let chunk = CSV_HEADER;
  while (bytes + chunk.length < targetBytes) {
    rows++;
    chunk += csvRow(rows);
    if (chunk.length >= 1024 * 1024) {
      bytes += chunk.length;
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  bytes += chunk.length;
  out.end(chunk);
  await once(out, 'close');
  writeFileSync(sidecar, JSON.stringify({ targetBytes, bytes, rows }));
  return { path, bytes, rows };
}

/** The CSV text `writeCsv` would write for `targetBytes` (small files; tests). */
export function csvText(targetBytes: number): string {
  let text = CSV_HEADER;
  for (let i = 1; text.length < targetBytes; i++) text += csvRow(i);
  return text;
}
