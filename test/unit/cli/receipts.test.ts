import { checkReceipt, receiptLine } from '../../../src/cli/receipts-run';
import { RECEIPT_COLUMNS, receiptFromRow, receiptIdOf, receiptRow, receiptsOptionProblems, type LoadReceipt } from '../../../src/contracts/receipts';

let job = 0;
function receipt(mode: LoadReceipt['mode'], rows: number, endedAt: string, tableId = 'in.c-main.orders'): LoadReceipt {
  const base = { workflowId: `load-${++job}`, runId: 'run-1', tableId, jobId: job };
  return {
    receiptId: receiptIdOf(base),
    ...base,
    originWorkflowId: base.workflowId,
    originRunId: 'run-1',
    buildId: '',
    mode,
    rows,
    bytes: rows * 10,
    fileId: 100 + job,
    source: { kind: 'file', location: '/data/orders.csv' },
    startedAt: endedAt,
    endedAt,
  };
}

describe('a receipt as a row of the receipts table', () => {
  it('round-trips every field through the row (all strings), the range as JSON', () => {
    const r: LoadReceipt = {
      ...receipt('incremental', 12, '2026-11-29T10:00:00.000Z'),
      source: { kind: 'api', location: 'https://api.example.com', range: { previousStart: 1, currentStart: 2, stateKey: 'crm' } },
    };
    const row = receiptRow(r);
    expect(Object.keys(row)).toEqual([...RECEIPT_COLUMNS]);
    expect(Object.values(row).every((v) => typeof v === 'string')).toBe(true);
    expect(receiptFromRow(row)).toEqual(r);
  });

  it('is keyed by workflow id, run id, table and job: the same load gives the same key', () => {
    expect(receiptIdOf({ workflowId: 'w', runId: 'r', tableId: 'in.c-a.t', jobId: 7 })).toBe('w/r/in.c-a.t/7');
  });

  it('refuses receipts options that are not false or {table: <table id>}', () => {
    expect(receiptsOptionProblems(undefined, 'receipts')).toEqual([]);
    expect(receiptsOptionProblems(false, 'receipts')).toEqual([]);
    expect(receiptsOptionProblems({ table: 'in.c-audit.loads' }, 'receipts')).toEqual([]);
    expect(receiptsOptionProblems(true, 'receipts')).toEqual([expect.stringContaining('receipts must be false or {table?')]);
    expect(receiptsOptionProblems({ table: 'loads' }, 'options.receipts')).toEqual([expect.stringContaining('options.receipts.table must be a table id')]);
    expect(receiptsOptionProblems({ tabel: 'in.c-a.b' }, 'receipts')).toEqual(['receipts: unsupported tabel (it takes table)']);
  });

  it('prints as one line: when, mode, rows, bytes, job, file, run, source', () => {
    const r = receipt('create', 2, '2026-11-29T10:00:00.000Z');
    expect(receiptLine(r)).toBe(
      `2026-11-29T10:00:00.000Z  create              2 rows      20 B  job ${r.jobId}  file ${r.fileId}  run ${r.workflowId}  file /data/orders.csv`,
    );
  });
});

describe('verify: a receipt against its table', () => {
  it('a full load with no load after it: ok when the table has exactly its rows, mismatch otherwise', () => {
    const full = receipt('full', 40, '2026-11-29T10:00:00Z');
    expect(checkReceipt(full, 40, [full]).status).toBe('ok');
    expect(checkReceipt(full, 41, [full])).toMatchObject({
      status: 'mismatch',
      detail: 'in.c-main.orders has 41 rows, the full load (job ' + full.jobId + ') loaded 40',
    });
  });

  it('a table that is gone is missing', () => {
    const create = receipt('create', 3, '2026-11-29T10:00:00Z');
    expect(checkReceipt(create, null, [create]).status).toBe('missing');
  });

  it('a later full load supersedes it', () => {
    const first = receipt('create', 3, '2026-11-29T10:00:00Z');
    const second = receipt('full', 5, '2026-11-29T11:00:00Z');
    expect(checkReceipt(first, 5, [second, first])).toMatchObject({ status: 'superseded', detail: expect.stringContaining(`run ${second.originWorkflowId}`) });
    expect(checkReceipt(second, 5, [second, first]).status).toBe('ok');
  });

  it('with incremental loads since the last full one: at most the rows they all brought', () => {
    const create = receipt('create', 10, '2026-11-29T10:00:00Z');
    const inc1 = receipt('incremental', 5, '2026-11-29T11:00:00Z');
    const inc2 = receipt('incremental', 5, '2026-11-29T12:00:00Z');
    const all = [inc2, inc1, create];
    expect(checkReceipt(inc1, 20, all).status).toBe('ok');
    expect(checkReceipt(inc1, 17, all).status).toBe('ok'); // upserts replaced some rows
    expect(checkReceipt(create, 20, all).status).toBe('ok');
    expect(checkReceipt(inc2, 21, all)).toMatchObject({
      status: 'mismatch',
      detail: expect.stringContaining('has 21 rows; the 3 receipted loads since its last full load brought 20'),
    });
  });

  it('an incremental load with no receipted full load before it cannot be bounded', () => {
    const inc = receipt('incremental', 5, '2026-11-29T11:00:00Z');
    expect(checkReceipt(inc, 500, [inc]).status).toBe('unverifiable');
  });
});
