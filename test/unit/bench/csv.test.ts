import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CSV_HEADER, csvText, writeCsv } from '../../../bench/lib/csv';

describe('generated CSV files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-csv-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a header and whole rows up to at most one row past the target size', async () => {
    const file = await writeCsv(join(dir, 'a.csv'), 3 * 1024 * 1024);
    const text = readFileSync(file.path, 'utf8');
    expect(text.startsWith(CSV_HEADER)).toBe(true);
    expect(text.endsWith('\n')).toBe(true);
    expect(file.bytes).toBe(statSync(file.path).size);
    expect(file.bytes).toBeGreaterThanOrEqual(3 * 1024 * 1024);
    expect(file.bytes).toBeLessThan(3 * 1024 * 1024 + 200);
    expect(text.split('\n').length - 2).toBe(file.rows);
    expect(text).toBe(csvText(3 * 1024 * 1024));
  });

  it('reuses a file written for the same size', async () => {
    const first = await writeCsv(join(dir, 'b.csv'), 10_000);
    const mtime = statSync(first.path).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    expect(await writeCsv(join(dir, 'b.csv'), 10_000)).toEqual(first);
    expect(statSync(first.path).mtimeMs).toBe(mtime);
  });
});
