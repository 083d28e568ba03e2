import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { notFound, validation } from '../errors';
import { type FormObject, parseString } from '../form';
import { readParams, tokenOf } from '../http';
import { type MetadataInput, STORAGE_PROVIDER, columnMetadata, metadataResource } from '../metadata';
import { type TableRecord } from '../model';
import { DEFAULT_BRANCH_ID, findBranch } from '../branches';
import { accessDenied } from '../tokens';
import { authorizedBucket } from './bucket-routes';
import { authorizedTable } from './table-routes';

const KEY = /^[A-Za-z0-9_\-:.]{1,255}$/;
/** Longest metadata value, characters. */
export const METADATA_VALUE_MAX_LENGTH = 65_535;

function listOf(raw: unknown): unknown[] {
  if (raw === undefined || raw === null || raw === '') return [];
  if (Array.isArray(raw)) return raw;
  if (typeof raw === 'object') return Object.values(raw);
  return [raw];
}

/** `{key, value}` items of a metadata list, checked like the service (400 naming the item). */
function entries(raw: unknown, where: string): (MetadataInput & { columnName?: string })[] {
  return listOf(raw).map((item, i) => {
    if (!item || typeof item !== 'object' || Array.isArray(item))
      throw validation(`${where}[${i}] must be an object {key, value}`, 'storage.metadata.validation');
    const f = item as FormObject;
    const key = parseString(f.key) ?? '';
    if (!KEY.test(key))
      throw validation(
        `${where}[${i}].key must be 1-255 letters, digits, "_", "-", ":" or "."; got ${JSON.stringify(f.key ?? null)}`,
        'storage.metadata.validation',
      );
    const value = f.value === undefined || f.value === null ? undefined : typeof f.value === 'string' ? f.value : String(f.value as unknown);
    if (value === undefined) throw validation(`${where}[${i}].value is required (key ${key})`, 'storage.metadata.validation');
    if (value.length > METADATA_VALUE_MAX_LENGTH)
      throw validation(`${where}[${i}].value is longer than ${METADATA_VALUE_MAX_LENGTH} characters (key ${key})`, 'storage.metadata.validation');
    const columnName = parseString(f.columnName);
    return { key, value, ...(columnName !== undefined ? { columnName } : {}) };
  });
}

function providerOf(params: FormObject): string {
  const provider = parseString(params.provider)?.trim() ?? '';
  if (!provider) throw validation('provider is required, e.g. "user"', 'storage.metadata.validation');
  if (provider === STORAGE_PROVIDER)
    throw validation(`provider "${STORAGE_PROVIDER}" is reserved for the metadata the service writes itself`, 'storage.metadata.validation');
  return provider;
}

/**
 * `columnsMetadata` as the service takes it: groups of `{columnName, key, value}` indexed by number (a JSON list of
 * lists, what the Python client sends; the documented form), or by column name (`{column: [{key, value}]}`,
 * deprecated; the Go client's `all` key carries `columnName`s); also a flat list of `{columnName, key, value}`.
 * Column name → entries.
 */
function columnEntries(raw: unknown, table: TableRecord): Map<string, MetadataInput[]> {
  const out = new Map<string, MetadataInput[]>();
  const add = (column: string | undefined, items: (MetadataInput & { columnName?: string })[], where: string): void => {
    items.forEach(({ columnName, key, value }, i) => {
      const name = columnName ?? column;
      if (name === undefined)
        throw validation(`${where}[${i}].columnName is required when columnsMetadata is indexed by number (key ${key})`, 'storage.metadata.validation');
      if (!table.columns.includes(name)) {
        throw validation(`columnsMetadata: column "${name}" is not in table ${table.id} (columns: ${table.columns.join(', ')})`, 'storage.metadata.validation');
      }
      out.set(name, [...(out.get(name) ?? []), { key, value }]);
    });
  };
  if (raw === undefined || raw === null || raw === '') return out;
  if (Array.isArray(raw)) {
    raw.forEach((group: unknown, i) => {
      const where = `columnsMetadata[${i}]`;
      if (Array.isArray(group)) add(undefined, entries(group, where), where);
      else add(undefined, entries([group], where), where);
    });
    return out;
  }
  if (typeof raw !== 'object')
    throw validation(
      'columnsMetadata must be a list of lists of {columnName, key, value} or an object {column: [{key, value}]}',
      'storage.metadata.validation',
    );
  for (const [column, items] of Object.entries(raw as FormObject)) {
    const where = `columnsMetadata.${column}`;
    // A number is an index unless the table has a column of that name.
    add(/^\d+$/.test(column) && !table.columns.includes(column) ? undefined : column, entries(items, where), where);
  }
  return out;
}

/** Splits `<bucket>.<table>.<column>` (bucket ids contain one dot: `in.c-main`). */
function splitColumnId(columnId: string): { tableId: string; column: string } {
  const dot = columnId.lastIndexOf('.');
  if (dot <= 0) throw notFound('storage.columns.notFound', `column ${columnId} not found: a column id is <bucket id>.<table>.<column>`);
  return { tableId: columnId.slice(0, dot), column: columnId.slice(dot + 1) };
}

/**
 * Metadata of buckets, tables and columns: `POST/GET buckets/{id}/metadata`, `POST/GET tables/{id}/metadata`,
 * `DELETE tables/{id}/metadata/{metadataId}` (and the same for buckets), `POST/GET columns/{id}/metadata`.
 * Reading needs `read` on the bucket, writing `write`.
 */
export function registerMetadataRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/buckets/:bucketId/metadata', async (request) => {
    const bucket = authorizedBucket(ctx, tokenOf(request), (request.params as { bucketId: string }).bucketId, 'read', 'reading bucket metadata');
    return ctx.metadata.list('bucket', bucket.id).map(metadataResource);
  });

  app.post('/buckets/:bucketId/metadata', async (request, reply) => {
    const bucket = authorizedBucket(ctx, tokenOf(request), (request.params as { bucketId: string }).bucketId, 'write', 'setting bucket metadata');
    const params = await readParams(request);
    const provider = providerOf(params);
    const items = entries(params.metadata, 'metadata');
    if (!items.length) throw validation('metadata must list at least one {key, value}', 'storage.metadata.validation');
    ctx.metadata.upsert('bucket', bucket.id, provider, items);
    return reply.code(201).send(ctx.metadata.list('bucket', bucket.id).map(metadataResource));
  });

  app.delete('/buckets/:bucketId/metadata/:metadataId', async (request, reply) => {
    const { bucketId, metadataId } = request.params as { bucketId: string; metadataId: string };
    const bucket = authorizedBucket(ctx, tokenOf(request), bucketId, 'write', 'deleting bucket metadata');
    const entry = ctx.metadata.get(metadataId);
    if (!entry || entry.objectType !== 'bucket' || entry.objectId !== bucket.id)
      throw notFound('storage.metadata.notFound', `metadata ${metadataId} not found on bucket ${bucket.id}`);
    ctx.metadata.delete(metadataId);
    return reply.code(204).send();
  });

  app.get('/tables/:tableId/metadata', async (request) => {
    const table = authorizedTable(ctx, tokenOf(request), (request.params as { tableId: string }).tableId, 'read', 'reading table metadata');
    return ctx.metadata.list('table', table.id).map(metadataResource);
  });

  app.post('/tables/:tableId/metadata', async (request, reply) => {
    const table = authorizedTable(ctx, tokenOf(request), (request.params as { tableId: string }).tableId, 'write', 'setting table metadata');
    const params = await readParams(request);
    const provider = providerOf(params);
    const items = entries(params.metadata, 'metadata');
    const columns = columnEntries(params.columnsMetadata, table);
    if (!items.length && !columns.size) throw validation('metadata or columnsMetadata must list at least one {key, value}', 'storage.metadata.validation');
    ctx.metadata.upsert('table', table.id, provider, items);
    for (const [column, list] of columns) ctx.metadata.upsert('column', `${table.id}.${column}`, provider, list);
    const columnsMetadata: Record<string, Record<string, unknown>[]> = {};
    for (const column of table.columns) {
      const list = columnMetadata(ctx.metadata, table, column);
      if (list.length) columnsMetadata[column] = list.map(metadataResource);
    }
    return reply.code(201).send({ metadata: ctx.metadata.list('table', table.id).map(metadataResource), columnsMetadata });
  });

  app.delete('/tables/:tableId/metadata/:metadataId', async (request, reply) => {
    const { tableId, metadataId } = request.params as { tableId: string; metadataId: string };
    const table = authorizedTable(ctx, tokenOf(request), tableId, 'write', 'deleting table metadata');
    const entry = ctx.metadata.get(metadataId);
    const belongs =
      entry && ((entry.objectType === 'table' && entry.objectId === table.id) || (entry.objectType === 'column' && entry.objectId.startsWith(`${table.id}.`)));
    if (!belongs) throw notFound('storage.metadata.notFound', `metadata ${metadataId} not found on table ${table.id}`);
    ctx.metadata.delete(metadataId);
    return reply.code(204).send();
  });

  const columnOf = (request: { params: unknown }, need: 'read' | 'write', action: string) => {
    const { tableId, column } = splitColumnId((request.params as { columnId: string }).columnId);
    return { table: authorizedTable(ctx, tokenOf(request as Parameters<typeof tokenOf>[0]), tableId, need, action), column };
  };
  const requireColumn = (table: TableRecord, column: string): void => {
    if (!table.columns.includes(column))
      throw notFound('storage.columns.notFound', `column ${column} is not in table ${table.id} (columns: ${table.columns.join(', ')})`);
  };

  app.get('/columns/:columnId/metadata', async (request) => {
    const { table, column } = columnOf(request, 'read', 'reading column metadata');
    requireColumn(table, column);
    return columnMetadata(ctx.metadata, table, column).map(metadataResource);
  });

  app.post('/columns/:columnId/metadata', async (request, reply) => {
    const { table, column } = columnOf(request, 'write', 'setting column metadata');
    requireColumn(table, column);
    const params = await readParams(request);
    const provider = providerOf(params);
    const items = entries(params.metadata, 'metadata');
    if (!items.length) throw validation('metadata must list at least one {key, value}', 'storage.metadata.validation');
    ctx.metadata.upsert('column', `${table.id}.${column}`, provider, items);
    return reply.code(201).send(columnMetadata(ctx.metadata, table, column).map(metadataResource));
  });
}

/**
 * Branch metadata: `GET/POST branch/{id}/metadata`, `DELETE branch/{id}/metadata/{metadataId}` (`default` is branch
 * 1). Any token reads it; changing it needs a master token.
 */
export function registerBranchMetadataRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  const branchIdOf = (request: { params: unknown }): string => {
    const branch = findBranch(ctx, (request.params as { branchId: string }).branchId);
    return String(branch === 'default' ? DEFAULT_BRANCH_ID : branch.id);
  };
  const requireMaster = (request: Parameters<typeof tokenOf>[0], action: string): void => {
    const token = tokenOf(request);
    if (!token.isMasterToken) throw accessDenied(`${action} needs a master token; token ${token.id} (${token.description}) is not one`);
  };

  app.get('/branch/:branchId/metadata', async (request) => ctx.metadata.list('branch', branchIdOf(request)).map(metadataResource));

  app.post('/branch/:branchId/metadata', async (request, reply) => {
    const branchId = branchIdOf(request);
    requireMaster(request, 'setting branch metadata');
    const params = await readParams(request);
    const items = entries(params.metadata, 'metadata');
    if (!items.length) throw validation('metadata must list at least one {key, value}', 'storage.metadata.validation');
    ctx.metadata.upsert('branch', branchId, parseString(params.provider)?.trim() || 'user', items);
    return reply.code(201).send(ctx.metadata.list('branch', branchId).map(metadataResource));
  });

  app.delete('/branch/:branchId/metadata/:metadataId', async (request, reply) => {
    const branchId = branchIdOf(request);
    requireMaster(request, 'deleting branch metadata');
    const { metadataId } = request.params as { metadataId: string };
    const entry = ctx.metadata.get(metadataId);
    if (!entry || entry.objectType !== 'branch' || entry.objectId !== branchId)
      throw notFound('storage.metadata.notFound', `metadata ${metadataId} not found on branch ${branchId}`);
    ctx.metadata.delete(metadataId);
    return reply.code(204).send();
  });
}
