import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { ApiError, notFound, validation } from '../errors';
import { parseBool, parseString } from '../form';
import { branchOf, readParams, runIdOf, tokenOf } from '../http';
import { type BucketPermission, type BucketRecord, type TokenRecord } from '../model';
import { bucketResource, jobResource, tableResource } from '../resources';
import { formatTimestamp } from '../time';
import { accessDenied } from '../tokens';
import { loadParams } from './load-params';

export function findBucket(ctx: EmulatorContext, bucketId: string): BucketRecord {
  const bucket = ctx.state.get<BucketRecord>('bucket', bucketId);
  if (!bucket) throw notFound('storage.buckets.notFound', `bucket ${bucketId} not found`);
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
    if (!token.isMasterToken && !token.canManageBuckets) throw accessDenied(`creating a bucket needs canManageBuckets; token ${token.id} (${token.description}) does not have it`);
    const params = await readParams(request);
    const rawName = parseString(params.name)?.trim() ?? '';
    const name = rawName.startsWith('c-') ? rawName.slice(2) : rawName;
    if (!BUCKET_NAME.test(name)) throw validation(`name must be 1-96 letters, digits, dashes or underscores; got ${JSON.stringify(rawName)}`, 'storage.buckets.validation');
    const stage = parseString(params.stage) ?? 'in';
    if (!STAGES.has(stage)) throw validation(`stage must be "in" or "out"; got ${JSON.stringify(stage)}`, 'storage.buckets.validation');
    const id = `${stage}.c-${name}`;
    if (ctx.state.get('bucket', id)) throw new ApiError(400, 'storage.buckets.alreadyExists', `The bucket "${name}" already exists in stage "${stage}" (id ${id}).`);
    const bucket: BucketRecord = { id, name, stage, description: parseString(params.description) ?? '', created: formatTimestamp(), branchId: branchOf(request) };
    const conn = await ctx.tables.connect();
    try {
      await ctx.tables.ensureSchema(conn, id);
    } finally {
      conn.closeSync();
    }
    ctx.state.put('bucket', id, bucket);
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

  app.get('/buckets/:bucketId', async (request) =>
    bucketResource(ctx, authorizedBucket(ctx, tokenOf(request), (request.params as { bucketId: string }).bucketId, 'read', 'bucket detail')),
  );

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
      throw new ApiError(400, 'storage.buckets.notEmpty', `bucket ${bucket.id} is not empty (${tables.length} tables); pass force=1 to delete it with its tables`);
    }
    const drop = async (): Promise<void> => {
      await ctx.tables.dropSchema(bucket.id);
      ctx.state.delete('bucket', bucket.id);
      ctx.tokens.revokeBucket(bucket.id);
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

  app.post('/buckets/:bucketId/tables-async', async (request, reply) => {
    const token = tokenOf(request);
    const bucket = authorizedBucket(ctx, token, (request.params as { bucketId: string }).bucketId, 'write', 'creating a table');
    const params = await readParams(request);
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
