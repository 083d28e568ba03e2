import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { notFound, validation } from '../errors';
import { type FormObject, listItems, parseBool, parseIntParam, parseList, parseString } from '../form';
import { readParams, runIdOf, tokenOf } from '../http';
import { type ExportOperationParams, type OrderBy, type WhereFilter, type WhereOperator, parseTimeParam, readRows, validateExport } from '../jobs/export-query';
import { type BucketPermission, type TableRecord, type TokenRecord } from '../model';
import { jobResource, tableResource } from '../resources';
import { columnList, loadParams } from './load-params';
import { csvLine } from '../jobs/table-export';

/** Default and largest number of rows of `data-preview`. */
export const PREVIEW_DEFAULT_LIMIT = 100;
export const PREVIEW_MAX_LIMIT = 1000;

export function findTable(ctx: EmulatorContext, tableId: string): TableRecord {
  const table = ctx.tables.get(tableId);
  if (!table) throw notFound('storage.tables.notFound', `table ${tableId} not found`);
  return table;
}

/** A table the token may act on: 404 when it does not exist, the service's 403 without `need` on its bucket. */
export function authorizedTable(ctx: EmulatorContext, token: TokenRecord, tableId: string, need: BucketPermission, action: string): TableRecord {
  const table = findTable(ctx, tableId);
  ctx.tokens.authorize(token, table.bucketId, need, action);
  return table;
}

export function whereFilters(params: FormObject): WhereFilter[] {
  const filters: WhereFilter[] = [];
  listItems(params.whereFilters)?.forEach((item, i) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw validation(`whereFilters[${i}] must be an object {column, operator, values[]}`);
    const f = item as FormObject;
    const column = parseString(f.column);
    if (!column) throw validation(`whereFilters[${i}].column is required`);
    const operator = (parseString(f.operator) ?? 'eq') as WhereOperator;
    filters.push({ column, operator, values: parseList(f.values) ?? [], dataType: parseString(f.dataType) });
  });
  const legacyColumn = parseString(params.whereColumn);
  if (legacyColumn) {
    const op = parseString(params.whereOperator) ?? 'eq';
    filters.push({ column: legacyColumn, operator: op === 'neq' ? 'ne' : (op as WhereOperator), values: parseList(params.whereValues) ?? [] });
  }
  return filters;
}

function orderBy(params: FormObject): OrderBy[] {
  return (listItems(params.orderBy) ?? []).map((item, i) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw validation(`orderBy[${i}] must be an object {column, order}`);
    const o = item as FormObject;
    const column = parseString(o.column);
    if (!column) throw validation(`orderBy[${i}].column is required`);
    const order = (parseString(o.order) ?? 'ASC').toUpperCase();
    if (order !== 'ASC' && order !== 'DESC') throw validation(`orderBy[${i}].order must be ASC or DESC; got ${JSON.stringify(o.order)}`);
    return { column, order, dataType: parseString(o.dataType) };
  });
}

/** A boolean parameter (query or body): absent is false, anything but a boolean a 400 naming it. */
export function flag(params: FormObject, name: string): boolean {
  const raw = params[name];
  if (raw === undefined || raw === '') return false;
  const value = parseBool(raw);
  if (value === undefined) throw validation(`${name} must be a boolean (true, false, 1, 0); got ${JSON.stringify(raw)}`);
  return value;
}

/** Tables: list, detail, delete, `import-async`, `export-async`. */
export function registerTableRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/tables', async (request) => {
    const token = tokenOf(request);
    return ctx.tables
      .list()
      .filter((t) => ctx.tokens.allows(token, t.bucketId, 'read'))
      .map((t) => tableResource(ctx, t));
  });

  app.get('/tables/:tableId', async (request) =>
    tableResource(ctx, authorizedTable(ctx, tokenOf(request), (request.params as { tableId: string }).tableId, 'read', 'table detail')),
  );

  app.delete('/tables/:tableId', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'deleting a table');
    const params = await readParams(request);
    const force = flag(params, 'force');
    // `async` (what the official clients send; the synchronous delete is deprecated): a `tableDrop` job the client waits for
    if (flag(params, 'async')) {
      const job = ctx.jobs.create({
        operationName: 'tableDrop',
        operationParams: { force },
        tableId: table.id,
        queueKey: `table:${table.id}`,
        creatorToken: { id: token.id, description: token.description },
        runId: runIdOf(request),
      });
      return reply.code(202).send(jobResource(ctx, job));
    }
    await ctx.tables.dropTable(table.id);
    ctx.metadata.deleteObject('table', table.id);
    ctx.events.add({
      event: 'storage.tableDeleted',
      type: 'info',
      message: `Deleted table ${table.id}`,
      objectType: 'table',
      objectId: table.id,
      objectName: table.name,
      bucketId: table.bucketId,
      token: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    return reply.code(204).send();
  });

  app.post('/tables/:tableId/import-async', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'loading a table');
    const params = await readParams(request);
    const load = loadParams(ctx, params, { create: false, token });
    const job = ctx.jobs.create({
      operationName: 'tableImport',
      operationParams: { ...load, bucketId: table.bucketId, name: table.name },
      tableId: table.id,
      queueKey: `table:${table.id}`,
      creatorToken: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    return reply.code(202).send(jobResource(ctx, job));
  });

  app.get('/tables/:tableId/data-preview', async (request, reply) => {
    const table = authorizedTable(ctx, tokenOf(request), (request.params as { tableId: string }).tableId, 'read', 'previewing a table');
    const params = request.query as FormObject;
    let limit = PREVIEW_DEFAULT_LIMIT;
    if (params.limit !== undefined && params.limit !== '') {
      const given = parseIntParam(params.limit);
      if (given === undefined || given < 0 || given > PREVIEW_MAX_LIMIT)
        throw validation(`limit must be an integer 0–${PREVIEW_MAX_LIMIT}; got ${JSON.stringify(params.limit)}`);
      limit = given;
    }
    const format = parseString(params.format) ?? 'rfc';
    if (format !== 'rfc' && format !== 'json') throw validation(`format must be "rfc" (CSV) or "json"; got ${JSON.stringify(format)}`);
    const since = parseString(params.changedSince);
    const until = parseString(params.changedUntil);
    const query: ExportOperationParams = {
      bucketId: table.bucketId,
      name: table.name,
      columns: columnList(params.columns),
      limit,
      whereFilters: whereFilters(params),
      orderBy: orderBy(params),
      changedSince: since ? parseTimeParam('changedSince', since) : undefined,
      changedUntil: until ? parseTimeParam('changedUntil', until) : undefined,
      gzip: false,
      fileType: 'csv',
    };
    validateExport(table, query);
    const conn = await ctx.tables.connect();
    let read: { columns: string[]; rows: unknown[][] };
    try {
      read = await readRows(conn, table, query);
    } finally {
      conn.closeSync();
    }
    const { columns, rows } = read;
    const text = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
    if (format === 'json') {
      return { columns, rows: rows.map((r) => r.map((v, i) => ({ columnName: columns[i], value: text(v), isTruncated: false }))) };
    }
    return reply.type('text/csv; charset=utf-8').send([csvLine(columns), ...rows.map((r) => csvLine(r.map(text)))].join(''));
  });

  app.post('/tables/:tableId/export-async', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'read', 'exporting a table');
    const params = await readParams(request);
    let limit: number | undefined;
    if (params.limit !== undefined && params.limit !== '') {
      limit = parseIntParam(params.limit);
      if (limit === undefined || limit < 0) throw validation(`limit must be a non-negative integer; got ${JSON.stringify(params.limit)}`);
    }
    const gzip = params.gzip === undefined ? false : parseBool(params.gzip);
    if (gzip === undefined) throw validation(`gzip must be a boolean; got ${JSON.stringify(params.gzip)}`);
    const fileType = parseString(params.fileType) ?? 'csv';
    if (fileType !== 'csv') throw validation(`fileType must be "csv"; got ${JSON.stringify(fileType)}`);
    const since = parseString(params.changedSince);
    const until = parseString(params.changedUntil);
    const exportParams: ExportOperationParams = {
      bucketId: table.bucketId,
      name: table.name,
      columns: columnList(params.columns),
      limit,
      whereFilters: whereFilters(params),
      orderBy: orderBy(params),
      changedSince: since ? parseTimeParam('changedSince', since) : undefined,
      changedUntil: until ? parseTimeParam('changedUntil', until) : undefined,
      gzip,
      fileType: 'csv',
    };
    validateExport(table, exportParams);
    const job = ctx.jobs.create({
      operationName: 'tableExport',
      operationParams: exportParams as unknown as Record<string, unknown>,
      tableId: table.id,
      queueKey: `table:${table.id}`,
      creatorToken: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    return reply.code(202).send(jobResource(ctx, job));
  });
}
