import { type FastifyInstance } from 'fastify';
import { DEFAULT_BRANCH_ID } from '../branches';
import { type EmulatorContext } from '../context';
import { ApiError, notFound, validation } from '../errors';
import { type FormObject, listItems, parseBool, parseIntParam, parseString } from '../form';
import { branchOf, readParams, runIdOf, tokenOf } from '../http';
import { parseTimeParam, validateExport } from '../jobs/export-query';
import { type ColumnPatch, columnDeleteProblem } from '../jobs/table-change';
import { type TableRecord, type TokenRecord } from '../model';
import { jobResource, snapshotResource, tableResource } from '../resources';
import { formatTimestamp } from '../time';
import { inTransaction } from '../jobs/table-load';
import { checkColumnName, columnHasType, parseColumnDefinition } from './bucket-routes';
import { columnList } from './load-params';
import { authorizedTable, flag, whereFilters } from './table-routes';

function tableValidation(message: string): ApiError {
  return validation(message, 'storage.tables.validation');
}

/** Queues a job on a table (after the table's other jobs) and answers 202 with it, as the service's async calls. */
function tableJob(
  ctx: EmulatorContext,
  token: TokenRecord,
  table: TableRecord,
  operationName: string,
  operationParams: Record<string, unknown>,
  runId: string | null,
) {
  return ctx.jobs.create({
    operationName,
    operationParams,
    tableId: table.id,
    queueKey: `table:${table.id}`,
    creatorToken: { id: token.id, description: token.description },
    runId,
  });
}

/** `null` (JSON), or a string; undefined when not sent. */
function nullableString(value: unknown, where: string): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const text = parseString(value);
  if (text === undefined) throw tableValidation(`${where} must be a string or null; got ${JSON.stringify(value)}`);
  return text;
}

/** One column patch of `PUT tables/{id}/definition`. */
function columnPatch(item: unknown, i: number, typed: boolean): ColumnPatch {
  if (!item || typeof item !== 'object' || Array.isArray(item))
    throw tableValidation(`columns[${i}] must be an object {name, length, nullable, default, description}`);
  const c = item as FormObject;
  const name = parseString(c.name);
  if (!name) throw tableValidation(`columns[${i}].name is required`);
  const patch: ColumnPatch = { name };
  if (c.length !== undefined && c.length !== null) patch.length = String(c.length as string | number);
  if (c.nullable !== undefined) {
    const nullable = parseBool(c.nullable);
    if (nullable === undefined) throw tableValidation(`columns[${i}].nullable must be a boolean; got ${JSON.stringify(c.nullable)}`);
    patch.nullable = nullable;
  }
  if ('default' in c) patch.default = nullableString(c.default, `columns[${i}].default`) ?? null;
  const description = nullableString(c.description, `columns[${i}].description`);
  if (description !== undefined) patch.description = description;
  if (!typed && (patch.length !== undefined || patch.nullable !== undefined || patch.default !== undefined)) {
    throw tableValidation(
      `columns[${i}] ("${name}"): length, nullable and default can only be changed on a typed table; this one is not typed (its columns are strings)`,
    );
  }
  return patch;
}

/**
 * Changes to existing tables, each a job on the table's queue (202): add and delete a column, delete rows or truncate,
 * update the definition (display name, descriptions, typed columns), snapshots, and the pull into a dev branch.
 */
export function registerTableChangeRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.post('/tables/:tableId/columns', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'adding a column');
    const params = await readParams(request);
    const name = checkColumnName(params.name, 'name');
    if (table.columns.some((c) => c.toLowerCase() === name.toLowerCase())) throw tableValidation(`Column "${name}" already exists in table "${table.id}".`);
    const raw = params.definition && typeof params.definition === 'object' && !Array.isArray(params.definition) ? (params.definition as FormObject) : undefined;
    const description = nullableString(raw?.description, 'definition.description') ?? undefined;
    const operationParams: Record<string, unknown> = { name };
    if (table.definition) {
      if (!columnHasType(params)) throw tableValidation(`table ${table.id} is typed: a new column needs definition.type or basetype`);
      const column = parseColumnDefinition(params, 'column', ctx.tableBackend);
      operationParams.definition = column.definition;
      operationParams.basetype = column.basetype;
    }
    if (description) operationParams.description = description;
    return reply.code(202).send(jobResource(ctx, tableJob(ctx, token, table, 'tableColumnAdd', operationParams, runIdOf(request))));
  });

  app.delete('/tables/:tableId/columns/:column', async (request, reply) => {
    const token = tokenOf(request);
    const { tableId, column } = request.params as { tableId: string; column: string };
    const table = authorizedTable(ctx, token, tableId, 'write', 'deleting a column');
    const params = await readParams(request);
    const force = flag(params, 'force');
    const problem = columnDeleteProblem(table, column);
    if (problem) throw new ApiError(problem.status, problem.code, problem.message);
    return reply.code(202).send(jobResource(ctx, tableJob(ctx, token, table, 'tableColumnDelete', { name: column, force }, runIdOf(request))));
  });

  // The display name: synchronous (200, the table) or with `async` a `tableUpdate` job, as the service's.
  app.put('/tables/:tableId', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'updating a table');
    const params = await readParams(request);
    const displayName = parseString(params.displayName)?.trim() ?? '';
    if (!/^[A-Za-z0-9_-]{1,96}$/.test(displayName))
      throw tableValidation(`displayName is required: 1-96 letters, digits, underscores or dashes; got ${JSON.stringify(params.displayName ?? null)}`);
    const taken = ctx.tables.list(table.bucketId).find((t) => t.id !== table.id && (t.displayName ?? t.name) === displayName);
    if (taken) throw tableValidation(`The display name "${displayName}" is used by table ${taken.id} in bucket ${table.bucketId} already`);
    if (flag(params, 'async')) return reply.code(202).send(jobResource(ctx, tableJob(ctx, token, table, 'tableUpdate', { displayName }, runIdOf(request))));
    const record: TableRecord = { ...table, displayName, lastChangeDate: formatTimestamp() };
    const conn = await ctx.tables.connect();
    try {
      await inTransaction(conn, () => ctx.tables.writeMeta(conn, record));
    } finally {
      conn.closeSync();
    }
    ctx.tables.remember(record);
    return tableResource(ctx, record);
  });

  app.post('/tables/:tableId/primary-key', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'setting a primary key');
    const params = await readParams(request);
    const columns = columnList(params.columns) ?? [];
    if (!columns.length) throw tableValidation('columns[] is required: the columns of the primary key');
    const unknown = columns.filter((c) => !table.columns.includes(c));
    if (unknown.length)
      throw new ApiError(
        400,
        'storage.tables.columnNotFound',
        `primary key column(s) ${unknown.join(', ')} are not in table ${table.id} (columns: ${table.columns.join(', ')})`,
      );
    const skipDuplicatesCheck = flag(params, 'skipDuplicatesCheck');
    return reply.code(202).send(jobResource(ctx, tableJob(ctx, token, table, 'tablePrimaryKeyAdd', { columns, skipDuplicatesCheck }, runIdOf(request))));
  });

  app.delete('/tables/:tableId/primary-key', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'removing a primary key');
    return reply.code(202).send(jobResource(ctx, tableJob(ctx, token, table, 'tablePrimaryKeyDelete', {}, runIdOf(request))));
  });

  app.delete('/tables/:tableId/rows', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'deleting rows');
    const params = await readParams(request);
    // the delete is always a job: the service refuses `async` as a field it does not know
    if (params.async !== undefined)
      throw validation('async is not a parameter of DELETE tables/{id}/rows: the delete is always a job (202); send the filters or allowTruncate=1 only');
    const filters = whereFilters(params);
    const since = parseString(params.changedSince);
    const until = parseString(params.changedUntil);
    const query = {
      whereFilters: filters,
      changedSince: since ? parseTimeParam('changedSince', since) : undefined,
      changedUntil: until ? parseTimeParam('changedUntil', until) : undefined,
    };
    for (const [i, f] of filters.entries()) {
      if (f.operator !== 'eq' && f.operator !== 'ne') throw validation(`whereFilters[${i}].operator must be eq or ne when deleting rows; got "${f.operator}"`);
    }
    validateExport(table, { bucketId: table.bucketId, name: table.name, ...query, gzip: false, fileType: 'csv' });
    const allowTruncate = flag(params, 'allowTruncate');
    if (!filters.length && !since && !until && !allowTruncate) {
      throw validation(
        `No filter was given, so every row of table ${table.id} would be deleted: send allowTruncate=1 to truncate it, or whereFilters / changedSince / changedUntil`,
        'storage.tables.validation',
      );
    }
    const operationParams = { request: { changedSince: since ?? null, changedUntil: until ?? null, whereFilters: filters }, allowTruncate, query };
    const job = tableJob(ctx, token, table, 'tableRowsDelete', operationParams, runIdOf(request));
    return reply.code(202).send(jobResource(ctx, job));
  });

  app.put('/tables/:tableId/definition', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'write', 'updating a table definition');
    const params = await readParams(request);
    const displayName = params.displayName === undefined ? undefined : parseString(params.displayName)?.trim();
    if (params.displayName !== undefined && !displayName)
      throw tableValidation(`displayName must be a non-empty string; got ${JSON.stringify(params.displayName)}`);
    const description = nullableString(params.description, 'description');
    const columns = (listItems(params.columns) ?? []).map((item, i) => columnPatch(item, i, table.definition !== undefined));
    const seen = new Set<string>();
    for (const c of columns) {
      if (seen.has(c.name)) throw tableValidation(`column "${c.name}" is patched twice; send one patch per column`);
      seen.add(c.name);
    }
    const operationParams = {
      tableStringId: table.id,
      ...(displayName !== undefined ? { displayName } : {}),
      displayNameSet: displayName !== undefined,
      ...(description !== undefined ? { description } : {}),
      descriptionSet: description !== undefined,
      columns,
    };
    return reply.code(202).send(jobResource(ctx, tableJob(ctx, token, table, 'tableDefinitionUpdate', operationParams, runIdOf(request))));
  });

  app.put('/tables/:tableId/columns/:column/definition', async (request, reply) => {
    const token = tokenOf(request);
    const { tableId, column } = request.params as { tableId: string; column: string };
    const table = authorizedTable(ctx, token, tableId, 'write', 'updating a column definition');
    if (!table.definition)
      throw tableValidation(`table ${table.id} is not typed (its columns are strings): a column definition can only be updated on a typed table`);
    if (!table.columns.includes(column))
      throw notFound('storage.tables.columnNotFound', `Column "${column}" not found in table "${table.id}" (columns: ${table.columns.join(', ')})`);
    const patch = columnPatch({ ...(await readParams(request)), name: column }, 0, true);
    const columnDefinition = {
      ...(patch.length !== undefined ? { length: patch.length } : {}),
      ...(patch.nullable !== undefined ? { nullable: patch.nullable } : {}),
      ...(patch.default === null ? { removeDefault: true } : patch.default !== undefined ? { default: patch.default } : {}),
    };
    const job = tableJob(ctx, token, table, 'tableColumnDefinitionUpdate', { columnName: column, columnDefinition }, runIdOf(request));
    return reply.code(202).send(jobResource(ctx, job));
  });

  app.post('/tables/:tableId/snapshots', async (request, reply) => {
    const token = tokenOf(request);
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'read', 'creating a snapshot');
    const params = await readParams(request);
    const description = nullableString(params.description, 'description') ?? null;
    return reply.code(202).send(jobResource(ctx, tableJob(ctx, token, table, 'tableSnapshotCreate', { description }, runIdOf(request))));
  });

  app.get('/tables/:tableId/snapshots', async (request) => {
    const table = authorizedTable(ctx, tokenOf(request), (request.params as { tableId: string }).tableId, 'read', 'listing snapshots');
    const q = request.query as FormObject;
    const limit = q.limit === undefined ? 20 : parseIntParam(q.limit);
    const offset = q.offset === undefined ? 0 : parseIntParam(q.offset);
    if (limit === undefined || limit < 0) throw validation(`limit must be a non-negative integer; got ${JSON.stringify(q.limit)}`);
    if (offset === undefined || offset < 0) throw validation(`offset must be a non-negative integer; got ${JSON.stringify(q.offset)}`);
    return ctx.tables
      .snapshotsOf(table.id)
      .slice(offset, offset + limit)
      .map((s) => snapshotResource(ctx, s));
  });

  const readableSnapshot = (token: TokenRecord, raw: string) => {
    const id = parseIntParam(raw);
    const snapshot = id === undefined ? undefined : ctx.tables.snapshot(id);
    if (!snapshot) throw notFound('storage.snapshots.notFound', `Snapshot ${raw} not found`);
    ctx.tokens.authorize(token, snapshot.table.bucketId, 'read', 'reading a snapshot');
    return snapshot;
  };

  app.get('/snapshots/:snapshotId', async (request) =>
    snapshotResource(ctx, readableSnapshot(tokenOf(request), (request.params as { snapshotId: string }).snapshotId)),
  );

  // Synchronous (204), as the service answers it today (the documentation still shows a job; clients take both).
  app.delete('/snapshots/:snapshotId', async (request, reply) => {
    const token = tokenOf(request);
    const snapshot = readableSnapshot(token, (request.params as { snapshotId: string }).snapshotId);
    ctx.tokens.authorize(token, snapshot.table.bucketId, 'write', 'deleting a snapshot');
    await ctx.tables.dropSnapshot(snapshot.id);
    return reply.code(204).send();
  });

  app.post('/tables/:tableId/pull', async (request, reply) => {
    const token = tokenOf(request);
    const branch = branchOf(request);
    if (branch === 'default' || Number(branch) === DEFAULT_BRANCH_ID) {
      throw validation(
        'Pulling a table is possible only into a development branch: use /v2/storage/branch/{branchId}/tables/{tableId}/pull with the id of a branch created with POST dev-branches',
      );
    }
    const table = authorizedTable(ctx, token, (request.params as { tableId: string }).tableId, 'read', 'pulling a table');
    const job = tableJob(ctx, token, table, 'devBranchTablePull', { sourceBranchId: DEFAULT_BRANCH_ID, targetBranchId: Number(branch) }, runIdOf(request));
    return reply.code(202).send(jobResource(ctx, job));
  });
}
