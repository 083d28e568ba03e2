import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { type CsvDialect, type CsvReader, type StagingResult, loadCsvIntoStaging } from '../../../src/emulator/jobs/csv-load';
import { BulkRefused, CsvShapeCheck } from '../../../src/emulator/jobs/csv-shape';
import { type FileRecord } from '../../../src/emulator/model';
import { type ObjectStore } from '../../../src/emulator/object-store';

/** In-memory stand-in for the object store: only what the loader reads (get, getText, keyOfEntryUrl). */
function memoryObjects(objects: Record<string, Buffer | string>, chunkSize = 7): ObjectStore {
  const bytes = (key: string): Buffer => {
    const value = objects[key];
    if (value === undefined) throw Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey' });
    return Buffer.from(value);
  };
  return {
    async get(key: string) {
      const all = bytes(key);
      const chunks: Buffer[] = [];
      for (let i = 0; i < all.length; i += chunkSize) chunks.push(all.subarray(i, i + chunkSize));
      return Readable.from(chunks, { objectMode: false });
    },
    async getText(key: string) {
      return bytes(key).toString('utf8');
    },
    keyOfEntryUrl: (url: string) => (url.startsWith('s3://b/') ? url.slice('s3://b/'.length) : undefined),
    entryUrl: (key: string) => `s3://b/${key}`,
  } as unknown as ObjectStore;
}

const file = (key: string, isSliced = false): FileRecord => ({ id: 7, key, isSliced }) as FileRecord;
const DIALECT: CsvDialect = { delimiter: ',', enclosure: '"', escapedBy: '', withoutHeaders: false, ignoredLinesCount: 0, treatValuesAsNull: [] };

describe('CSV load into staging: bulk path (subset check + read_csv) and reference parser', () => {
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  let tmpDir: string;
  let n = 0;

  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    conn = await instance.connect();
    await conn.run('CREATE SCHEMA s');
    tmpDir = mkdtempSync(join(tmpdir(), 'csv-load-'));
  });
  afterAll(() => {
    conn.closeSync();
    instance.closeSync();
    rmSync(tmpDir, { recursive: true, force: true });
  });

  /** Loads through one reader (or the default choice) and returns the staging table's rows in order. */
  async function load(
    objects: ObjectStore,
    f: FileRecord,
    reader?: CsvReader,
    dialect: Partial<CsvDialect> = {},
  ): Promise<StagingResult & { rows: string[][] }> {
    const stagingName = `t${++n}`;
    const result = await loadCsvIntoStaging({
      conn,
      objects,
      file: f,
      dialect: { ...DIALECT, ...dialect },
      schema: 's',
      stagingName,
      tmpDir,
      reader,
      maxColumns: 1599,
      timestamp: 0,
    });
    const rows = (await conn.runAndReadAll(`SELECT * EXCLUDE (_timestamp) FROM s.${stagingName} ORDER BY rowid`)).getRowsJS() as string[][];
    return { ...result, rows };
  }

  const one = (csv: string | Buffer, chunkSize?: number) => memoryObjects({ k: csv }, chunkSize);

  test('a plain file loads through the bulk path with the same rows as the parser', async () => {
    const csv = '\uFEFFid,"name",x\n1,"a,b","he said ""hi"""\n2,,""\n3," multi\nline ",#c\n4,é 😀,\\\n';
    const bulk = await load(one(csv), file('k'), undefined);
    const parsed = await load(one(csv), file('k'), 'parser');
    expect(bulk.reader).toBe('bulk');
    expect(parsed.reader).toBe('parser');
    expect(bulk.columns).toEqual(['id', 'name', 'x']);
    expect(bulk.rows).toEqual(parsed.rows);
    expect(bulk.rows).toEqual([
      ['1', 'a,b', 'he said "hi"'],
      ['2', '', ''],
      ['3', ' multi\nline ', '#c'],
      ['4', 'é 😀', '\\'],
    ]);
    expect(bulk.rowsCount).toBe(4);
    expect(readdirSync(tmpDir)).toEqual([]);
  });

  test('random files of the subset give the parser’s rows on the bulk path, whatever the chunking', async () => {
    // a seeded generator: values of letters, spaces, delimiters, enclosures and newlines, quoted when they need it
    let seed = 42;
    const random = (k: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % k;
    };
    const alphabet = ['a', 'b', ' ', ',', '"', '\n', 'é', '#', "'", '\\', '\t'];
    for (let round = 0; round < 150; round++) {
      const columns = 1 + random(4);
      const lines = [Array.from({ length: columns }, (_, i) => `c${i}`).join(',')];
      for (let r = 0; r < 1 + random(30); r++) {
        const values = Array.from({ length: columns }, () => Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join(''));
        // a one-column record with an empty value would be an empty line (skipped by the parser): quote it
        lines.push(values.map((v) => (/[",\n]/.test(v) || random(3) === 0 || (columns === 1 && v === '') ? `"${v.replace(/"/g, '""')}"` : v)).join(','));
      }
      const csv = lines.join('\n') + (random(2) ? '\n' : '');
      const chunk = 1 + random(20);
      const bulk = await load(one(csv, chunk), file('k'), 'bulk');
      const parsed = await load(one(csv, chunk), file('k'), 'parser');
      expect({ csv, rows: bulk.rows, columns: bulk.columns }).toEqual({ csv, rows: parsed.rows, columns: parsed.columns });
    }
  });

  test('sliced and gzipped parts: repeated headers skipped, a last record without newline kept apart', async () => {
    const objects = memoryObjects({
      'p/manifest': JSON.stringify({ entries: [{ url: 's3://b/p/0' }, { url: 's3://b/p/1' }, { url: 's3://b/p/2' }] }),
      'p/0': 'k,v\n1,a',
      'p/1': gzipSync('k,v\n2,b\n3,c\n'),
      'p/2': '4,d\n',
    });
    const bulk = await load(objects, file('p/', true));
    expect(bulk.reader).toBe('bulk');
    expect(bulk.rows).toEqual([
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
      ['4', 'd'],
    ]);
    expect((await load(objects, file('p/', true), 'parser')).rows).toEqual(bulk.rows);
  });

  test('columns[] and treatValuesAsNull load the same on both paths', async () => {
    const csv = 'x,NULL,1\n"NULL",,2\n';
    const dialect = { columns: ['a', 'b', 'c'], treatValuesAsNull: ['NULL'] };
    const bulk = await load(one(csv), file('k'), undefined, dialect);
    expect(bulk.reader).toBe('bulk');
    expect(bulk.rows).toEqual([
      ['x', '', '1'],
      ['', '', '2'],
    ]);
    expect((await load(one(csv), file('k'), 'parser', dialect)).rows).toEqual(bulk.rows);
  });

  test.each([
    ['a ragged row', 'id,name\n2,a\n3\n', /Invalid Record Length: expect 2, got 1 on line 3/],
    ['an enclosure inside a value', 'id,name\n2,a"b\n', /Invalid Opening Quote/],
    ['text after a closing enclosure', 'id,name\n2,"a"b\n', /Invalid Closing Quote/],
    ['an unclosed enclosure', 'id,name\n2,"open\n3,x\n', /Quote Not Closed/],
  ])('%s: bulk refuses, the parser names the error (same message as the parser alone)', async (_what, csv, message) => {
    await expect(load(one(csv), file('k'), 'bulk')).rejects.toThrow(BulkRefused);
    const alone = load(one(csv), file('k'), 'parser');
    await expect(alone).rejects.toThrow(message);
    const auto = load(one(csv), file('k'));
    await expect(auto).rejects.toThrow(message);
    expect(((await auto.catch((e: Error) => e)) as Error).message).toBe(((await alone.catch((e: Error) => e)) as Error).message);
  });

  test('invalid UTF-8 deep in a file fails with the parser’s message naming the line', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `${i},row ${i}`).join('\n');
    const csv = Buffer.concat([Buffer.from(`id,name\n${rows}\n5000,caf`), Buffer.from([0xe9]), Buffer.from('\n')]);
    await expect(load(one(csv, 4096), file('k'))).rejects.toThrow(/^file 7 is not valid UTF-8: Invalid UTF-8 byte sequence on line 5002 \(byte 0xe9\)/);
  });

  test('files outside the subset (CRLF, empty lines, skipped lines) still load, through the parser', async () => {
    expect(await load(one('id,v\r\n1,a\r\n'), file('k'))).toMatchObject({ reader: 'parser', rows: [['1', 'a']] });
    expect(await load(one('id,v\n1,a\n\n2,b\n'), file('k'))).toMatchObject({
      reader: 'parser',
      rows: [
        ['1', 'a'],
        ['2', 'b'],
      ],
    });
    expect(await load(one('junk\nid,v\n1,a\n'), file('k'), undefined, { ignoredLinesCount: 1 })).toMatchObject({ reader: 'parser', rows: [['1', 'a']] });
  });

  test('the shape check counts records across chunk boundaries and refuses a short record', () => {
    const check = new CsvShapeCheck({ delimiter: 0x2c, quote: 0x22 }, 2);
    const bytes = Buffer.from('1,"a\n""b"\n2,c\n3,"x"');
    for (let i = 0; i < bytes.length; i++) check.push(bytes.subarray(i, i + 1));
    check.end();
    expect(check.records).toBe(3);
    const short = new CsvShapeCheck({ delimiter: 0x2c, quote: 0x22 }, 2);
    expect(() => short.push(Buffer.from('1,a\n2\n'))).toThrow('a record with 1 values, expected 2');
  });
});
