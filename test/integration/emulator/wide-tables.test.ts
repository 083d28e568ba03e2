import { DEFAULT_MAX_TABLE_COLUMNS } from '../../../src/emulator';
import { type Json, createBucket, createTable, expectSuccess, importTable, memoryOf, resetPeak, useEmulatorProcess, waitForJob } from './support';

/** Peak RSS the emulator process may reach during one job on a two-row table, MiB: idle ~170, measured 420–640 (the old code passed 3 GB at 4,000 columns). */
const PEAK_RSS_CEILING_MB = 1024;
const LIMIT = DEFAULT_MAX_TABLE_COLUMNS;

const names = (n: number, prefix = 'c') => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
/** A header of `n` columns and two rows: `r1_<i>`, `r2_<i>`. */
const wideCsv = (columns: string[]) => `${columns.join(',')}\n${columns.map((_, i) => `r1_${i}`).join(',')}\n${columns.map((_, i) => `r2_${i}`).join(',')}\n`;

describe('wide tables', () => {
  // Exports read back as one file with a header (slicedExports: false); slicing is tested in sliced-exports.test.ts.
  const env = useEmulatorProcess({ slicedExports: false });
  const peaks: string[] = [];

  beforeAll(async () => {
    await createBucket(env.api, 'wide');
    peaks.push(`idle: ${memoryOf(env.emulator.pid).rssMb} MB`);
  });
  afterAll(() => process.stderr.write(`\n[wide tables] emulator peak RSS per job:\n${peaks.map((p) => `  ${p}\n`).join('')}`));

  /** Runs `work` and returns the emulator's peak RSS during it, checked against the ceiling and reported. */
  async function measured<T>(what: string, work: () => Promise<T>): Promise<T> {
    resetPeak(env.emulator.pid);
    const result = await work();
    const { peakMb } = memoryOf(env.emulator.pid);
    peaks.push(`${what}: ${peakMb} MB`);
    expect(peakMb).toBeLessThan(PEAK_RSS_CEILING_MB);
    return result;
  }

  /** A JSON preview of `tableId` (`query` appended), failing with the emulator's answer when it is not 200. */
  async function preview(tableId: string, query = ''): Promise<Json> {
    const res = await env.api('GET', `/tables/${tableId}/data-preview?format=json${query}`);
    if (res.status !== 200) throw new Error(`preview of ${tableId}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function expectTable(tableId: string, columns: string[], rows: number): Promise<void> {
    const detail = (await env.api('GET', `/tables/${tableId}`)).body;
    expect(detail.columns).toEqual(columns);
    expect(detail.rowsCount).toBe(rows);
    const read = await preview(tableId);
    expect(read).toMatchObject({ columns });
    expect(read.rows).toHaveLength(rows);
    const last = columns.length - 1;
    expect(read.rows[0][last]).toEqual({ columnName: columns[last], value: `r1_${last}`, isTruncated: false });
    expect(read.rows[rows - 1][0].value).toBe(`r${rows}_0`);
  }

  test.each([999, 1000, LIMIT])('a CSV of %i columns becomes a table of as many columns, with bounded memory', async (n) => {
    const columns = names(n);
    const job = await measured(`tables-async, ${n} columns`, () => createTable(env.api, 'in.c-wide', `w${n}`, wideCsv(columns)));
    expect(expectSuccess(job).results.columns).toHaveLength(n);
    await expectTable(`in.c-wide.w${n}`, columns, 2);
  });

  test(`a CSV of ${LIMIT} columns with a primary key keeps the last row of each key, with bounded memory`, async () => {
    const columns = names(LIMIT);
    // three rows, the third with the first's key: the table keeps rows 2 and 3, in file order
    const csv = `${wideCsv(columns)}${columns.map((_, i) => (i === 0 ? 'r1_0' : `r3_${i}`)).join(',')}\n`;
    const job = await measured(`tables-async, ${LIMIT} columns, primary key`, () => createTable(env.api, 'in.c-wide', 'wpk', csv, { primaryKey: 'c1' }));
    expect(expectSuccess(job).results.columns).toHaveLength(LIMIT);
    expect((await preview('in.c-wide.wpk')).rows.map((r: Array<{ value: string }>) => [r[0]!.value, r[LIMIT - 1]!.value])).toEqual([
      ['r2_0', `r2_${LIMIT - 1}`],
      ['r1_0', `r3_${LIMIT - 1}`],
    ]);
  });

  test(`loads of ${LIMIT} columns into a table with a primary key keep the last row of each key, with bounded memory`, async () => {
    const columns = names(LIMIT);
    const row = (key: string, tag: string) => `${columns.map((_, i) => (i === 0 ? key : `${tag}_${i}`)).join(',')}\n`;
    const lastValues = async () => (await preview('in.c-wide.wpk')).rows.map((r: Array<{ value: string }>) => [r[0]!.value, r[LIMIT - 1]!.value]);
    // incremental: the table's r2_0 is replaced, the file's two k9 rows become one (the later)
    const incremental = `${columns.join(',')}\n${row('k9', 'a')}${row('r2_0', 'b')}${row('k9', 'c')}`;
    const job = await measured(`import-async incremental, ${LIMIT} columns, primary key`, () =>
      importTable(env.api, 'in.c-wide.wpk', incremental, { incremental: true }),
    );
    expect(expectSuccess(job).results.totalRowsCount).toBe(3);
    expect(await lastValues()).toEqual([
      ['r1_0', `r3_${LIMIT - 1}`],
      ['r2_0', `b_${LIMIT - 1}`],
      ['k9', `c_${LIMIT - 1}`],
    ]);
    // full: the rows are replaced by the file's, one per key, in file order
    const full = `${columns.join(',')}\n${row('x', 'a')}${row('y', 'b')}${row('x', 'c')}`;
    await measured(`import-async full, ${LIMIT} columns, primary key`, () => importTable(env.api, 'in.c-wide.wpk', full));
    expect(await lastValues()).toEqual([
      ['y', `b_${LIMIT - 1}`],
      ['x', `c_${LIMIT - 1}`],
    ]);
  });

  test('a typed table of 300 columns takes a full and an incremental load (rebuilt with its types)', async () => {
    const columns = names(300);
    const definition = {
      name: 'typed300',
      primaryKeysNames: ['c1'],
      columns: columns.map((name, i) => ({ name, definition: i === 0 ? { type: 'INTEGER', nullable: false } : { type: 'VARCHAR', nullable: true } })),
    };
    const res = await env.api('POST', '/buckets/in.c-wide/tables-definition', { json: definition });
    expectSuccess(await waitForJob(env.api, res.body.id));
    const row = (key: number, tag: string) => `${columns.map((_, i) => (i === 0 ? key : `${tag}_${i}`)).join(',')}\n`;
    await importTable(env.api, 'in.c-wide.typed300', `${columns.join(',')}\n${row(1, 'a')}${row(2, 'a')}`).then(expectSuccess);
    const job = await importTable(env.api, 'in.c-wide.typed300', `${columns.join(',')}\n${row(2, 'b')}${row(3, 'b')}`, { incremental: true });
    expect(expectSuccess(job).results.totalRowsCount).toBe(3);
    const detail = (await env.api('GET', '/tables/in.c-wide.typed300')).body;
    expect(detail.isTyped).toBe(true);
    expect(detail.definition.columns[0]).toMatchObject({ name: 'c1', basetype: 'INTEGER' });
    expect((await preview('in.c-wide.typed300')).rows.map((r: Array<{ value: string }>) => [r[0]!.value, r[299]!.value])).toEqual([
      ['1', 'a_299'],
      ['2', 'b_299'],
      ['3', 'b_299'],
    ]);
    // a non-integer key is still refused by the table's type
    const bad = await importTable(env.api, 'in.c-wide.typed300', `${columns.join(',')}\n${row(4, 'c').replace(/^4/, 'x')}`, { incremental: true });
    expect(bad.status).toBe('error');
  });

  test.each([LIMIT + 1, 10_000])('a CSV of %i columns is refused as the service refuses it, and no table is left', async (n) => {
    const job: Json = await measured(`tables-async, ${n} columns (refused)`, () => createTable(env.api, 'in.c-wide', `w${n}`, wideCsv(names(n))));
    expect(job.status).toBe('error');
    expect(job.error.code).toBe('storage.tables.validation.tooManyColumns');
    expect(job.error.message).toBe(
      `Too many columns. Maximum is ${LIMIT} columns. The header of file ${job.operationParams?.source?.fileId ?? job.error.message.match(/file (\d+)/)[1]} has ${n}; split the data into narrower tables.`,
    );
    expect((await env.api('GET', `/tables/in.c-wide.w${n}`)).status).toBe(404);
  });

  test('columns[] wider than the limit is refused when the load is asked for, with the same code', async () => {
    const res = await env.api('POST', '/buckets/in.c-wide/tables-async', { json: { name: 'cols', dataFileId: 1, columns: names(LIMIT + 1) } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'storage.tables.validation.tooManyColumns',
      status: 'error',
      error: `Too many columns. Maximum is ${LIMIT} columns. The columns parameter has ${LIMIT + 1}; split the data into narrower tables.`,
    });
  });

  test('an incremental load that adds hundreds of columns keeps the rows and gives them empty new columns', async () => {
    const wider = [...names(999), ...names(400, 'n')];
    const job = await measured('import-async, 999 + 400 new columns', () => importTable(env.api, 'in.c-wide.w999', wideCsv(wider), { incremental: true }));
    expect(expectSuccess(job).results.newColumns).toHaveLength(400);
    expect((await preview('in.c-wide.w999', '&columns=c1,n1,n400')).rows.map((r: Json[]) => r.map((v) => v.value))).toEqual([
      ['r1_0', '', ''],
      ['r2_0', '', ''],
      ['r1_0', 'r1_999', 'r1_1398'],
      ['r2_0', 'r2_999', 'r2_1398'],
    ]);
  });

  test(`a table of ${LIMIT} columns exports, with bounded memory`, async () => {
    const res = await env.api('POST', `/tables/in.c-wide.w${LIMIT}/export-async`, { json: {} });
    const job = await measured(`export-async, ${LIMIT} columns`, () => waitForJob(env.api, res.body.id));
    expectSuccess(job);
    const file = (await env.api('GET', `/files/${job.results.file.id}`)).body;
    const csv = await fetch(file.url).then((r) => r.text());
    const [header, first] = csv.split('\n');
    expect(header!.split(',')).toHaveLength(LIMIT);
    expect(first!.split(',')[LIMIT - 1]).toBe(`"r1_${LIMIT - 1}"`);
  });

  test(`a preview of ${LIMIT} columns keeps each row whole across the columns, ordered with ties and filtered`, async () => {
    const columns = names(LIMIT);
    // five rows, c2 takes two values (ties), c3 their number; every cell names its row
    const row = (n: number) => `${columns.map((_, i) => (i === 1 ? (n % 2 ? 'odd' : 'even') : i === 2 ? String(n) : `r${n}_${i}`)).join(',')}\n`;
    await createTable(env.api, 'in.c-wide', 'wsort', `${columns.join(',')}\n${[1, 2, 3, 4, 5].map(row).join('')}`).then(expectSuccess);
    const rowsOf = (read: Json) =>
      read.rows.map((r: Json[]) => {
        const n = r[2].value;
        // the row's number from its third column, and every other cell of the row must name it
        expect(r.filter((cell, i) => i > 2 && cell.value !== `r${n}_${i}`)).toEqual([]);
        return n;
      });
    expect(rowsOf(await preview('in.c-wide.wsort', '&orderBy[0][column]=c2&orderBy[0][order]=DESC'))).toEqual(['1', '3', '5', '2', '4']);
    expect(rowsOf(await preview('in.c-wide.wsort', '&whereColumn=c2&whereValues[]=even&limit=1'))).toEqual(['2']);
    expect(rowsOf(await preview('in.c-wide.wsort', '&limit=3'))).toEqual(['1', '2', '3']);
  });

  test('the emulator process was never restarted', () => {
    expect(env.restarts).toEqual([]);
  });
});
