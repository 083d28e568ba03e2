import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { ApiError, TOO_MANY_COLUMNS, notFound, tooManyColumnsMessage, validation } from '../errors';
import { parseBool, parseIntParam, parseString } from '../form';
import { branchOf, readParams, runIdOf, tokenOf } from '../http';
import { type BucketPermission, type BucketRecord, type TokenRecord } from '../model';
import { bucketResource, jobResource, tableResource } from '../resources';
import { formatTimestamp } from '../time';
import { accessDenied } from '../tokens';
import { loadParams } from './load-params';
import { backendDefinition, definitionProblem, givenBaseType } from '../column-types';
import { type FormObject, parseList } from '../form';
import { type ColumnDefinition, type TableDefinition } from '../model';
import { type EmulatorTableBackend } from '../options';

const TABLE_NAME = /^[A-Za-z0-9_-]{1,96}$/;
const COLUMN_NAME = /^[A-Za-z0-9_]{1,64}$/;
/** A column given by `basetype` alone gets this type. */
const TYPE_OF_BASETYPE: Record<string, string> = {
  STRING: 'VARCHAR',
  INTEGER: 'INTEGER',
  NUMERIC: 'NUMBER',
  FLOAT: 'FLOAT',
  BOOLEAN: 'BOOLEAN',
  DATE: 'DATE',
  TIMESTAMP: 'TIMESTAMP',
};

function tableValidation(message: string): ApiError {
  return validation(message, 'storage.tables.validation');
}

function loose(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : String(value as string | number | boolean);
}

/** A column name a table takes: 1-64 letters, digits or underscores, not the emulator's own `_timestamp`. */
export function checkColumnName(value: unknown, where: string): string {
  const column = parseString(value) ?? '';
  if (!COLUMN_NAME.test(column) || column === '_timestamp')
    throw tableValidation(`${where} must be 1-64 letters, digits or underscores (not "_timestamp"); got ${JSON.stringify(value ?? null)}`);
  return column;
}

/**
 * One column of a definition `{name, definition: {type, length, nullable, default}, basetype}` (of `tables-definition`
 * and `POST tables/{id}/columns`), checked and in the backend's own types; a column without a type is a string.
 */
export function parseColumnDefinition(
  c: FormObject,
  where: string,
  backend: EmulatorTableBackend,
): { name: string; definition: ColumnDefinition; basetype: string } {
  const column = checkColumnName(c.name, `${where}.name`);
  const raw = (c.definition && typeof c.definition === 'object' && !Array.isArray(c.definition) ? c.definition : undefined) as FormObject | undefined;
  const basetype = parseString(c.basetype)?.toUpperCase();
  let type = loose(raw?.type);
  if (type === undefined && basetype !== undefined) {
    type = TYPE_OF_BASETYPE[basetype];
    if (!type) throw tableValidation(`${where}.basetype must be one of ${Object.keys(TYPE_OF_BASETYPE).join(', ')}; got "${basetype}"`);
  }
  // A column without a type: a string (and every column is one when no column names a type).
  type ??= 'VARCHAR';
  const nullable = raw?.nullable === undefined ? true : parseBool(raw.nullable);
  if (nullable === undefined) throw tableValidation(`${where}.definition.nullable must be a boolean; got ${JSON.stringify(raw?.nullable)}`);
  const length = loose(raw?.length);
  const dflt = loose(raw?.default);
  const given: ColumnDefinition = {
    type: type.toUpperCase(),
    nullable,
    ...(length ? { length } : {}),
    ...(dflt !== undefined && dflt !== '' ? { default: dflt } : {}),
  };
  const problem = definitionProblem(column, given);
  if (problem) throw tableValidation(`${where}: ${problem}`);
  const definition = backendDefinition(given, backend, basetype === 'NUMERIC' && raw?.type === undefined ? 9 : 0);
  return { name: column, definition, basetype: givenBaseType(given) };
}

/** True when a column of a definition names a type (`definition.type` or `basetype`). */
export function columnHasType(item: unknown): boolean {
  const c = (item && typeof item === 'object' ? item : {}) as FormObject;
  const d = c.definition && typeof c.definition === 'object' && !Array.isArray(c.definition) ? (c.definition as FormObject) : undefined;
  return loose(d?.type) !== undefined || parseString(c.basetype) !== undefined;
}

/**
 * The body of `tables-definition` (JSON or form-encoded) as a checked definition, in the backend's own types (see
 * {@link backendDefinition}); 400 naming the bad field. Like the service, a definition whose columns name no type
 * (neither `definition.type` nor `basetype`) makes a table that is not typed (`typed: false`); a column without a type
 * among typed ones gets the backend's string type.
 */
export function parseTableDefinition(
  params: FormObject,
  maxColumns: number,
  backend: EmulatorTableBackend,
): { name: string; definition: TableDefinition; typed: boolean } {
  const name = parseString(params.name)?.trim() ?? '';
  if (!TABLE_NAME.test(name)) throw tableValidation(`name must be 1-96 letters, digits, dashes or underscores; got ${JSON.stringify(params.name ?? null)}`);
  const rawColumns = params.columns;
  const list: unknown[] = Array.isArray(rawColumns) ? rawColumns : rawColumns && typeof rawColumns === 'object' ? Object.values(rawColumns) : [];
  if (!list.length) throw tableValidation('columns must list at least one column {name, definition: {type, length, nullable, default}}');
  if (list.length > maxColumns) throw new ApiError(400, TOO_MANY_COLUMNS, tooManyColumnsMessage(maxColumns, 'The definition', list.length));
  const seen = new Set<string>();
  const typed = list.some(columnHasType);
  const columns = list.map((item, i) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw tableValidation(`columns[${i}] must be an object {name, definition}`);
    const column = parseColumnDefinition(item as FormObject, `columns[${i}]`, backend);
    if (seen.has(column.name.toLowerCase())) throw tableValidation(`columns[${i}].name: column "${column.name}" is defined twice`);
    seen.add(column.name.toLowerCase());
    return column;
  });
  const primaryKeysNames = parseList(params.primaryKeysNames) ?? [];
  const unknown = primaryKeysNames.filter((pk) => !columns.some((c) => c.name === pk));
  if (unknown.length)
    throw tableValidation(
      `primaryKeysNames: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not among the columns (${columns.map((c) => c.name).join(', ')})`,
    );
  return { name, definition: { primaryKeysNames, columns }, typed };
}

export function findBucket(ctx: EmulatorContext, bucketId: string): BucketRecord {
  const bucket = ctx.state.get<BucketRecord>('bucket', bucketId);
  if (!bucket) throw notFound('storage.buckets.notFound', `The bucket "${bucketId}" was not found in the project "${ctx.projectId}"`);
  return bucket;
}

/** A bucket the token may act on: 404 when it does not exist, the service's 403 without `need` on it. */
export function authorizedBucket(ctx: EmulatorContext, token: TokenRecord, bucketId: string, need: BucketPermission, action: string): BucketRecord {
  const bucket = findBucket(ctx, bucketId);
  ctx.tokens.authorize(token, bucket.id, need, action);
  return bucket;
}

const BUCKET_NAME = /^[A-Za-z0-9_-]{1,96}$/;
const STAGES = new Set(['in', 'out']);

/** Buckets: create, list, detail, delete (`force` drops tables), its tables, and `tables-async`. */
export function registerBucketRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.post('/buckets', async (request, reply) => {
    const token = tokenOf(request);
    if (!token.isMasterToken && !token.canManageBuckets)
      throw accessDenied(`creating a bucket needs canManageBuckets; token ${token.id} (${token.description}) does not have it`);
    const params = await readParams(request);
    const rawName = parseString(params.name)?.trim() ?? '';
    const name = rawName.startsWith('c-') ? rawName.slice(2) : rawName;
    if (!BUCKET_NAME.test(name))
      throw validation(`name must be 1-96 letters, digits, dashes or underscores; got ${JSON.stringify(rawName)}`, 'storage.buckets.validation');
    const stage = parseString(params.stage) ?? 'in';
    if (!STAGES.has(stage)) throw validation(`stage must be "in" or "out"; got ${JSON.stringify(stage)}`, 'storage.buckets.validation');
    const id = `${stage}.c-${name}`;
    if (ctx.state.get('bucket', id))
      throw new ApiError(400, 'storage.buckets.alreadyExists', `The bucket "${name}" already exists in stage "${stage}" (id ${id}).`);
    const bucket: BucketRecord = {
      id,
      name,
      stage,
      description: parseString(params.description) ?? '',
      created: formatTimestamp(),
      branchId: branchOf(request),
    };
    const conn = await ctx.tables.connect();
    try {
      await ctx.tables.ensureSchema(conn, id);
    } finally {
      conn.closeSync();
    }
    ctx.state.put('bucket', id, bucket);
    ctx.events.add({
      event: 'storage.bucketCreated',
      type: 'info',
      message: `Created bucket ${id}`,
      objectType: 'bucket',
      objectId: id,
      objectName: bucket.name,
      bucketId: id,
      token: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    // Like the service: a token that is not a master token gets `manage` on the bucket it created.
    if (!token.isMasterToken) ctx.tokens.grant(token, id, 'manage');
    return reply.code(201).send(bucketResource(ctx, bucket));
  });

  app.get('/buckets', async (request) => {
    const token = tokenOf(request);
    return ctx.state
      .all<BucketRecord>('bucket')
      .filter((b) => ctx.tokens.allows(token, b.id, 'read'))
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((b) => bucketResource(ctx, b));
  });

  // The detail lists the bucket's tables (the list of buckets gives their URL): each without its bucket, with its
  // `columns`, `metadata` and `columnMetadata` only when `include` names them, like the service.
  app.get('/buckets/:bucketId', async (request) => {
    const bucket = authorizedBucket(ctx, tokenOf(request), (request.params as { bucketId: string }).bucketId, 'read', 'bucket detail');
    const include = new Set(
      String((request.query as { include?: unknown }).include ?? '')
        .split(',')
        .map((s) => s.trim()),
    );
    const tables = ctx.tables.list(bucket.id).map((t) => {
      const { bucket: _bucket, columns, metadata, columnMetadata, ...rest } = tableResource(ctx, t);
      return {
        ...rest,
        ...(include.has('columns') ? { columns } : {}),
        ...(include.has('metadata') ? { metadata } : {}),
        ...(include.has('columnMetadata') ? { columnMetadata } : {}),
      };
    });
    return { ...bucketResource(ctx, bucket), tables };
  });

  app.get('/buckets/:bucketId/tables', async (request) => {
    const bucket = authorizedBucket(ctx, tokenOf(request), (request.params as { bucketId: string }).bucketId, 'read', 'listing the tables of a bucket');
    return ctx.tables.list(bucket.id).map((t) => tableResource(ctx, t));
  });

  app.delete('/buckets/:bucketId', async (request, reply) => {
    const bucket = authorizedBucket(ctx, tokenOf(request), (request.params as { bucketId: string }).bucketId, 'manage', 'deleting a bucket');
    const params = await readParams(request);
    const force = parseBool(params.force) ?? false;
    const tables = ctx.tables.list(bucket.id);
    if (tables.length && !force) {
      throw new ApiError(
        400,
        'storage.buckets.notEmpty',
        `bucket ${bucket.id} is not empty (${tables.length} tables); pass force=1 to delete it with its tables`,
      );
    }
    const drop = async (): Promise<void> => {
      await ctx.tables.dropSchema(bucket.id);
      ctx.state.delete('bucket', bucket.id);
      ctx.tokens.revokeBucket(bucket.id);
      ctx.metadata.deleteObject('bucket', bucket.id);
      const token = tokenOf(request);
      ctx.events.add({
        event: 'storage.bucketDeleted',
        type: 'info',
        message: `Deleted bucket ${bucket.id}`,
        objectType: 'bucket',
        objectId: bucket.id,
        objectName: bucket.name,
        bucketId: null,
        token: { id: token.id, description: token.description },
        runId: runIdOf(request),
      });
    };
    if (parseBool(params.async)) {
      const token = tokenOf(request);
      const job = ctx.jobs.create({
        operationName: 'bucketDelete',
        operationParams: { bucketId: bucket.id, force },
        tableId: null,
        queueKey: `bucket:${bucket.id}`,
        creatorToken: { id: token.id, description: token.description },
        runId: runIdOf(request),
      });
      return reply.code(202).send(jobResource(ctx, job));
    }
    await drop();
    return reply.code(204).send();
  });

  app.post('/buckets/:bucketId/tables-definition', async (request, reply) => {
    const token = tokenOf(request);
    const bucket = authorizedBucket(ctx, token, (request.params as { bucketId: string }).bucketId, 'write', 'creating a table');
    const { name, definition, typed } = parseTableDefinition(await readParams(request), ctx.maxTableColumns, ctx.tableBackend);
    const tableId = `${bucket.id}.${name}`;
    if (ctx.tables.get(tableId)) throw new ApiError(400, 'storage.tables.alreadyExists', `table ${tableId} already exists`);
    const job = ctx.jobs.create({
      operationName: 'tableDefinitionCreate',
      operationParams: { bucketId: bucket.id, name, definition, ...(typed ? {} : { typed: false }) },
      tableId,
      queueKey: `table:${tableId}`,
      creatorToken: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    return reply.code(202).send(jobResource(ctx, job));
  });

  app.post('/buckets/:bucketId/tables-async', async (request, reply) => {
    const token = tokenOf(request);
    const bucket = authorizedBucket(ctx, token, (request.params as { bucketId: string }).bucketId, 'write', 'creating a table');
    const params = await readParams(request);
    // from a snapshot (`snapshotId`): the snapshot's table, under its own name unless `name` says otherwise
    if (params.snapshotId !== undefined && params.snapshotId !== '') {
      if (params.dataFileId !== undefined && params.dataFileId !== '')
        throw validation('send one source: dataFileId or snapshotId, not both', 'storage.tables.validation');
      const snapshotId = parseIntParam(params.snapshotId);
      const snapshot = snapshotId === undefined ? undefined : ctx.tables.snapshot(snapshotId);
      if (!snapshot) throw notFound('storage.snapshots.notFound', `Snapshot ${String(params.snapshotId as string)} not found`);
      ctx.tokens.authorize(token, snapshot.table.bucketId, 'read', 'creating a table from a snapshot');
      // the service needs the name, although its PHP client's docs say it defaults to the snapshot's table's
      const name = parseString(params.name)?.trim() ?? '';
      if (!name) throw validation('Table create option "name" is required and cannot be empty', 'storage.tables.validation');
      if (!TABLE_NAME.test(name))
        throw validation(`name must be 1-96 letters, digits, dashes or underscores; got ${JSON.stringify(name)}`, 'storage.tables.validation');
      const tableId = `${bucket.id}.${name}`;
      const job = ctx.jobs.create({
        operationName: 'tableCreate',
        operationParams: { bucketId: bucket.id, name, source: { type: 'snapshot', snapshotId: snapshot.id } },
        tableId,
        queueKey: `table:${tableId}`,
        creatorToken: { id: token.id, description: token.description },
        runId: runIdOf(request),
      });
      return reply.code(202).send(jobResource(ctx, job));
    }
    const name = parseString(params.name)?.trim() ?? '';
    if (!/^[A-Za-z0-9_-]{1,96}$/.test(name)) {
      throw validation(`name must be 1-96 letters, digits, dashes or underscores; got ${JSON.stringify(name)}`, 'storage.tables.validation');
    }
    const load = loadParams(ctx, params, { create: true, token });
    const tableId = `${bucket.id}.${name}`;
    const job = ctx.jobs.create({
      operationName: 'tableCreate',
      operationParams: { ...load, bucketId: bucket.id, name },
      tableId,
      queueKey: `table:${tableId}`,
      creatorToken: { id: token.id, description: token.description },
      runId: runIdOf(request),
    });
    return reply.code(202).send(jobResource(ctx, job));
  });
}
