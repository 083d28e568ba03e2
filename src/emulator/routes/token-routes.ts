import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { ApiError, notFound, validation } from '../errors';
import { type FormObject, parseBool, parseIntParam, parseString } from '../form';
import { readParams, tokenOf } from '../http';
import { type BucketPermission, type BucketRecord, type TokenRecord } from '../model';
import { accessDenied, type NewToken } from '../tokens';

/** Longest `expiresIn` accepted, seconds (the emulator's own bound: a year). */
const MAX_EXPIRES_IN_SECONDS = 365 * 24 * 3600;

/** The token resource the service answers with (`tokens/verify`, `POST tokens`); the secret only when asked. */
function tokenResource(ctx: EmulatorContext, token: TokenRecord, options: { secret: boolean }): Record<string, unknown> {
  const bucketIds = ctx.state.all<BucketRecord>('bucket').map((b) => b.id);
  return {
    id: token.id,
    ...(options.secret ? { token: token.token } : {}),
    description: token.description,
    created: token.created,
    refreshed: token.created,
    uri: `${ctx.baseUrl}/v2/storage/tokens/${token.id}`,
    isMasterToken: token.isMasterToken,
    canManageBuckets: token.canManageBuckets,
    canManageTokens: token.canManageTokens,
    canReadAllFileUploads: token.canReadAllFileUploads,
    canPurgeTrash: false,
    isDisabled: false,
    expires: token.expires,
    isExpired: token.expiresMs !== null && token.expiresMs <= Date.now(),
    dailyCapacity: 0,
    creatorToken: token.creatorToken,
    bucketPermissions: ctx.tokens.reportedPermissions(token, bucketIds),
  };
}

function flag(params: FormObject, name: string): boolean {
  const raw = params[name];
  if (raw === undefined) return false;
  const value = parseBool(raw);
  if (value === undefined) throw validation(`${name} must be a boolean (true, false, 1, 0); got ${JSON.stringify(raw)}`, 'storage.tokens.validation');
  return value;
}

/** `bucketPermissions` of `POST tokens`: existing buckets, `read` or `write` only (like the service). */
function bucketPermissions(ctx: EmulatorContext, raw: FormObject[string] | undefined): Record<string, BucketPermission> {
  if (raw === undefined || raw === '') return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw validation('bucketPermissions must be an object of bucket id → "read" | "write", e.g. {"in.c-main": "read"}', 'storage.tokens.invalidPermissions');
  }
  const out: Record<string, BucketPermission> = {};
  for (const [bucketId, value] of Object.entries(raw)) {
    if (value !== 'read' && value !== 'write') {
      throw validation(`bucketPermissions[${bucketId}] must be "read" or "write"; got ${JSON.stringify(value)}`, 'storage.tokens.invalidPermissions');
    }
    if (!ctx.state.get('bucket', bucketId)) throw validation(`bucketPermissions names bucket ${bucketId}, which does not exist`, 'storage.tokens.invalidPermissions');
    out[bucketId] = value;
  }
  return out;
}

function newToken(ctx: EmulatorContext, params: FormObject): NewToken {
  let expiresIn: number | undefined;
  if (params.expiresIn !== undefined && params.expiresIn !== '') {
    expiresIn = parseIntParam(params.expiresIn);
    if (expiresIn === undefined || expiresIn < 1 || expiresIn > MAX_EXPIRES_IN_SECONDS) {
      throw validation(`expiresIn must be a whole number of seconds, 1–${MAX_EXPIRES_IN_SECONDS}; got ${JSON.stringify(params.expiresIn)}`, 'storage.tokens.validation');
    }
  }
  const description = parseString(params.description)?.trim();
  return {
    description: description === '' ? undefined : description,
    bucketPermissions: bucketPermissions(ctx, params.bucketPermissions),
    canManageBuckets: flag(params, 'canManageBuckets'),
    canReadAllFileUploads: flag(params, 'canReadAllFileUploads'),
    expiresIn,
  };
}

function requireTokenManager(token: TokenRecord, action: string): void {
  if (!token.isMasterToken && !token.canManageTokens) {
    throw accessDenied(`${action} needs a master token or canManageTokens; token ${token.id} (${token.description}) has neither`);
  }
}

/** `GET tokens/verify`, `POST tokens` (create, answers the secret once), `DELETE tokens/{id}`. */
export function registerTokenRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/tokens/verify', async (request) => ({
    ...tokenResource(ctx, tokenOf(request), { secret: false }),
    owner: {
      id: ctx.projectId,
      name: 'Storage API emulator',
      region: ctx.objects.region ?? 'eu-west-1',
      fileStorageProvider: ctx.objects.provider,
      defaultBackend: 'duckdb',
      hasSnowflake: false,
      features: [],
    },
  }));

  app.post('/tokens', async (request, reply) => {
    const creator = tokenOf(request);
    requireTokenManager(creator, 'creating a token');
    const created = ctx.tokens.create(creator, newToken(ctx, await readParams(request)));
    return reply.code(201).send(tokenResource(ctx, created, { secret: true }));
  });

  app.delete('/tokens/:tokenId', async (request, reply) => {
    const caller = tokenOf(request);
    requireTokenManager(caller, 'deleting a token');
    const { tokenId } = request.params as { tokenId: string };
    const id = parseIntParam(tokenId);
    const token = id === undefined ? undefined : ctx.tokens.byId(id);
    if (!token) throw notFound('storage.tokens.notFound', `token ${tokenId} not found`);
    if (token.configured) {
      throw new ApiError(400, 'storage.tokens.cannotDelete', `token ${token.id} (${token.description}) comes from the emulator's options and cannot be deleted; delete tokens created with POST tokens`);
    }
    ctx.tokens.delete(token.id);
    return reply.code(204).send();
  });
}
