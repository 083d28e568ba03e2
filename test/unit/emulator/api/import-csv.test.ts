import { gzipSync } from 'node:zlib';
import { createBucket, createTable, expectSuccess, importTable, uploadViaImporter, useMemoryEmulator, waitForJob } from '../../../harness/emulator-api';

describe('CSV imports', () => {
  const env = useMemoryEmulator();
  const T = 'in.c-csv.base';

  beforeAll(async () => {
    await createBucket(env.api, 'csv');
    const job = await createTable(env.api, 'in.c-csv', 'base', 'id,name\n1,keep\n', { primaryKey: 'id' });
    expect(job.status).toBe('success');
  });

  const untouched = async (): Promise<void> => {
    expect(await env.emulator.readTable(T)).toEqual({ columns: ['id', 'name'], rows: [['1', 'keep']] });
  };

  test.each([
    ['an unclosed quote', 'id,name\n2,"open\n3,x\n', /Quote Not Closed/i, /line/],
    ['a ragged row', 'id,name\n2,a\n3\n', /Invalid Record Length: expect 2, got 1/, /line 3/],
    ['a data row longer than the header', 'id,name\n2,a,x\n3,b\n', /expect 2, got 3/, /line 2/],
    ['a duplicate column', 'id,id\n2,a\n', /duplicate column/i, /"id"/],
    ['an invalid column name', 'id,na me\n2,a\n', /invalid column name/i, /"na me"/],
    ['a column name longer than 64 characters', `id,${'x'.repeat(65)}\n2,a\n`, /invalid column name/i, /x{65}/],
    ['an empty file', '', /empty/i, /file \d+/],
  ])('%s fails the job with a message naming it, and the table is untouched', async (_what, csv, message, where) => {
    const job = await importTable(env.api, T, csv);
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(message);
    expect(job.error.message).toMatch(where);
    expect(job.error.exceptionId).toMatch(/^exception-/);
    await untouched();
  });

  /** `id,name` CSV whose third line holds a Latin-1 "é" (0xE9), which is not UTF-8. */
  const latin1 = Buffer.concat([Buffer.from('id,name\n2,ok\n3,caf'), Buffer.from([0xe9]), Buffer.from('\n4,x\n')]);

  test('invalid UTF-8 fails the load with a message naming the line, and the table is untouched', async () => {
    const job = await importTable(env.api, T, latin1);
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/^file \d+ is not valid UTF-8: Invalid UTF-8 byte sequence on line 3 \(byte 0xe9\)/);
    await untouched();
  });

  test('invalid UTF-8 in a gzipped file fails the load too', async () => {
    const job = await importTable(env.api, T, gzipSync(latin1), { incremental: true });
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/Invalid UTF-8 byte sequence on line 3/);
    await untouched();
  });

  test('a table created from a file with invalid UTF-8 is not left behind, not even empty', async () => {
    const job = await createTable(env.api, 'in.c-csv', 'latin1', latin1);
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/Invalid UTF-8 byte sequence on line 3/);
    expect((await env.api('GET', '/tables/in.c-csv.latin1')).status).toBe(404);
    expect((await env.api('GET', '/buckets/in.c-csv/tables')).body.map((t: { id: string }) => t.id)).not.toContain('in.c-csv.latin1');
  });

  test('multi-byte characters across read chunks load unchanged', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => `${i},Příliš žluťoučký kůň 日本語 😀 ${i}`);
    const job = expectSuccess(await createTable(env.api, 'in.c-csv', 'unicode', `id,name\n${rows.join('\n')}\n`));
    expect(job.results.rowsCount).toBe(20_000);
    const data = await env.emulator.readTable('in.c-csv.unicode');
    expect(data.rows[12_345]).toEqual(['12345', 'Příliš žluťoučký kůň 日本語 😀 12345']);
    expect(data.rows.some((r) => r[1]!.includes('\uFFFD'))).toBe(false);
  });

  /** 100,000 rows (~4 MB) with enclosed commas, doubled enclosures and newlines: many read chunks, DuckDB's parallel reader. */
  const bigRows = Array.from({ length: 100_000 }, (_, i) => `${i},"name ${i}, ""q"" ${i % 7 ? 'x' : 'multi\nline'}"`);
  const big = `id,name\n${bigRows.join('\n')}\n`;

  test('a large file loads in file order with every value as written (bulk path)', async () => {
    const job = expectSuccess(await createTable(env.api, 'in.c-csv', 'big', big));
    expect(job.results.rowsCount).toBe(100_000);
    const data = await env.emulator.readTable('in.c-csv.big');
    expect(data.rows.map((r) => r[0])).toEqual(bigRows.map((_, i) => String(i)));
    expect(data.rows[0]).toEqual(['0', 'name 0, "q" multi\nline']);
    expect(data.rows[99_999]).toEqual(['99999', 'name 99999, "q" x']);
  });

  test('a ragged row deep in a large file fails the job naming its line, as the parser names it', async () => {
    const job = await importTable(env.api, T, `${big}100000\n100001,ok\n`);
    expect(job.status).toBe('error');
    // 100,000 rows, 14,286 of them spread over two lines: the ragged one is on line 114,288
    expect(job.error.message).toMatch(/^file \d+ is not valid CSV \(RFC 4180\): Invalid Record Length: expect 2, got 1 on line 114288$/);
    await untouched();
  });

  test('invalid UTF-8 deep in a large file fails the job naming its line', async () => {
    const job = await importTable(env.api, T, Buffer.concat([Buffer.from(big), Buffer.from('100000,caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/^file \d+ is not valid UTF-8: Invalid UTF-8 byte sequence on line 114288 \(byte 0xe9\)/);
    await untouched();
  });

  test('a file missing a table column fails the job and names the column', async () => {
    const job = await importTable(env.api, T, 'id\n5\n');
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/missing.*name/);
    await untouched();
  });

  test('a full load with a primary key keeps the last row of each key', async () => {
    const job = await importTable(env.api, T, 'id,name\n1,first\n2,two\n1,last\n');
    expect(job.results).toMatchObject({ importedRowsCount: 3, totalRowsCount: 2 });
    expect((await env.emulator.readTable(T)).rows).toEqual([
      ['2', 'two'],
      ['1', 'last'],
    ]);
  });

  test('an incremental load upserts rows by the primary key', async () => {
    const job = await importTable(env.api, T, 'id,name\n2,TWO\n3,three\n', { incremental: 1 });
    expect(job.results.totalRowsCount).toBe(3);
    const rows = (await env.emulator.readTable(T)).rows.sort((a, b) => a[0]!.localeCompare(b[0]!));
    expect(rows).toEqual([
      ['1', 'last'],
      ['2', 'TWO'],
      ['3', 'three'],
    ]);
  });

  test('new columns in a loaded file are added to the table', async () => {
    const job = expectSuccess(await importTable(env.api, T, 'id,name,extra\n4,four,x\n', { incremental: 'true' }));
    expect(job.results.newColumns).toEqual(['extra']);
    const data = await env.emulator.readTable(T);
    expect(data.columns).toEqual(['id', 'name', 'extra']);
    expect(data.rows.find((r) => r[0] === '4')).toEqual(['4', 'four', 'x']);
    expect(data.rows.find((r) => r[0] === '1')).toEqual(['1', 'last', '']);
    expect((await env.api('GET', `/tables/${T}`)).body.columns).toEqual(['id', 'name', 'extra']);
  });

  test('columns[] loads a headerless file in that column order', async () => {
    const job = await importTable(env.api, T, 'x9,nine,9\n', { columns: ['extra', 'name', 'id'], incremental: true });
    expect(job.status).toBe('success');
    expect((await env.emulator.readTable(T)).rows.find((r) => r[0] === '9')).toEqual(['9', 'nine', 'x9']);
  });

  test('a headerless file whose rows do not match columns[] fails the job', async () => {
    const job = await importTable(env.api, T, '1,2\n', { columns: ['id', 'name', 'extra'], incremental: true });
    expect(job.status).toBe('error');
    expect(job.error.message).toMatch(/expected 3 values \(columns id,name,extra\), got 2/);
  });

  test('withoutHeaders loads a headerless file in the table column order', async () => {
    const job = await importTable(env.api, T, '10,ten,e\n', { withoutHeaders: true, incremental: true });
    expect(job.status).toBe('success');
    expect((await env.emulator.readTable(T)).rows.find((r) => r[0] === '10')).toEqual(['10', 'ten', 'e']);
  });

  test('custom delimiter, enclosure, skipped lines and null values are honoured', async () => {
    const csv = "junk line\nid;name;extra\n11;'a;b';NULL\n";
    const job = await importTable(env.api, T, csv, { delimiter: ';', enclosure: "'", ignoredLinesCount: 1, treatValuesAsNull: ['NULL'], incremental: true });
    expect(job.status).toBe('success');
    expect((await env.emulator.readTable(T)).rows.find((r) => r[0] === '11')).toEqual(['11', 'a;b', '']);
  });

  test('a tab delimiter can be sent as \\t', async () => {
    const job = await importTable(env.api, T, 'id\tname\textra\n12\tt\tab\n', { delimiter: '\\t', incremental: true });
    expect(job.status).toBe('success');
  });

  test('a gzipped file is detected by its magic bytes and loaded', async () => {
    const job = await importTable(env.api, T, gzipSync('id,name,extra\n20,gz,z\n'), { incremental: true });
    expect(job.status).toBe('success');
    expect((await env.emulator.readTable(T)).rows.find((r) => r[0] === '20')).toEqual(['20', 'gz', 'z']);
  });

  test('RFC 4180 quoting: embedded delimiters, quotes and newlines, and a BOM', async () => {
    await createTable(env.api, 'in.c-csv', 'quoted', '\uFEFFa,b\n"x,1","he said ""hi"""\n"multi\nline",""\n');
    expect(await env.emulator.readTable('in.c-csv.quoted')).toEqual({
      columns: ['a', 'b'],
      rows: [
        ['x,1', 'he said "hi"'],
        ['multi\nline', ''],
      ],
    });
  });

  test('imports into one table run one after another', async () => {
    await createTable(env.api, 'in.c-csv', 'serial', 'n\n0\n');
    const ids: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const fileId = await uploadViaImporter(env.api, `n\n${i}\n`);
      ids.push((await env.api('POST', '/tables/in.c-csv.serial/import-async', { json: { dataFileId: fileId, incremental: true } })).body.id);
    }
    const jobs = await Promise.all(ids.map((id) => waitForJob(env.api, id)));
    for (let i = 1; i < jobs.length; i++) expect(jobs[i].startTime >= jobs[i - 1].endTime).toBe(true);
    expect(jobs.map((j) => j.results.totalRowsCount)).toEqual([2, 3, 4, 5, 6]);
    expect((await env.emulator.readTable('in.c-csv.serial')).rows.map((r) => r[0])).toEqual(['0', '1', '2', '3', '4', '5']);
  });
});
