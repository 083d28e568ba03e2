import { type FastifyInstance } from 'fastify';
import { type EmulatorContext } from '../context';
import { ApiError, notFound, validation } from '../errors';
import { type FormObject, parseBool, parseIntParam, parseList, parseString } from '../form';
import { readParams, tokenOf } from '../http';
import { type BucketPermission, type BucketRecord, type TokenRecord } from '../model';
import { accessDenied, type NewToken } from '../tokens';

/** Name of the emulator's one project (`owner.name`). */
const PROJECT_NAME = 'Storage API emulator';
/** Id of the organization the project belongs to (`organization.id`, a string like the service's). */
const ORGANIZATION_ID = 1;
/**
 * The project features `tokens/verify` reports (`owner.features`); a project on the service always has some. The
 * emulator claims the ones that say what it serves as such a project has it: `storage-types` (typed tables:
 * `tables-definition`, native types on loads) and `queuev2` (every current project runs its jobs on Queue v2; the
 * emulator lists that service but does not serve it, as before). It claims none it does not serve (`oauth-v3`,
 * `protected-default-branch`, …), so a client that checks a feature sees it missing rather than a failing call.
 */
export const PROJECT_FEATURES = ['queuev2', 'storage-types'] as const;
/** Longest `expiresIn` accepted, seconds (the emulator's own bound: a year). */
const MAX_EXPIRES_IN_SECONDS = 365 * 24 * 3600;

/** Where a token resource is sent: the fields differ like the service's (its docs and its Go SDK's `Token`). */
type TokenView = 'verify' | 'detail' | 'list' | 'create' | 'refresh';

/** The project a token belongs to, as `tokens/verify` (in full) and the token detail (id and name) report it. */
function ownerOf(ctx: EmulatorContext, full: boolean): Record<string, unknown> {
  if (!full) return { id: ctx.projectId, name: PROJECT_NAME };
  return {
    id: ctx.projectId,
    name: PROJECT_NAME,
    type: 'production',
    region: ctx.region,
    fileStorageProvider: ctx.objects.provider,
    defaultBackend: ctx.tableBackend,
    assignedBackends: [ctx.tableBackend],
    hasSnowflake: ctx.tableBackend === 'snowflake',
    hasBigquery: ctx.tableBackend === 'bigquery',
    hasRedshift: false,
    hasSynapse: false,
    hasExasol: false,
    hasTeradata: false,
    hasMysql: false,
    features: [...PROJECT_FEATURES],
  };
}

/**
 * The token resource as the service sends it: `id` a string (the Go SDK decodes it into a string), the secret in
 * `token` (the service shows it unless a project hides decrypted tokens), `bucketPermissions` an empty list when
 * there are none (PHP's empty array), `creatorToken` only for tokens some token created, `componentAccess` only when
 * granted, `admin` on master tokens, `organization` and `owner` only in `tokens/verify` and the token detail.
 */
function tokenResource(ctx: EmulatorContext, token: TokenRecord, view: TokenView): Record<string, unknown> {
  const bucketIds = ctx.state.all<BucketRecord>('bucket').map((b) => b.id);
  const permissions = ctx.tokens.reportedPermissions(token, bucketIds);
  return {
    id: String(token.id),
    token: token.token,
    description: token.description,
    created: token.created,
    refreshed: token.refreshed ?? token.created,
    uri: `${ctx.baseUrl}/v2/storage/tokens/${token.id}`,
    isMasterToken: token.isMasterToken,
    canManageBuckets: token.canManageBuckets,
    canManageTokens: token.canManageTokens,
    canReadAllFileUploads: token.canReadAllFileUploads,
    canPurgeTrash: token.isMasterToken || (token.canPurgeTrash ?? false),
    canManageProtectedDefaultBranch: false,
    canCreateJobs: false,
    expires: token.expires,
    isExpired: token.expiresMs !== null && token.expiresMs <= Date.now(),
    isDisabled: false,
    dailyCapacity: 0,
    bucketPermissions: Object.keys(permissions).length ? permissions : [],
    ...(token.creatorToken ? { creatorToken: token.creatorToken } : {}),
    ...(token.componentAccess?.length ? { componentAccess: token.componentAccess } : {}),
    ...(token.isMasterToken && view !== 'create' && view !== 'refresh'
      ? { admin: { id: token.id, name: token.description, features: [], isOrganizationMember: false, role: 'admin', isActivated: false } }
      : {}),
    ...(view === 'verify' || view === 'detail' ? { organization: { id: String(ORGANIZATION_ID) }, owner: ownerOf(ctx, view === 'verify') } : {}),
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
    if (!ctx.state.get('bucket', bucketId))
      throw validation(`bucketPermissions names bucket ${bucketId}, which does not exist`, 'storage.tokens.invalidPermissions');
    out[bucketId] = value;
  }
  return out;
}

function newToken(ctx: EmulatorContext, params: FormObject): NewToken {
  let expiresIn: number | undefined;
  if (params.expiresIn !== undefined && params.expiresIn !== '') {
    expiresIn = parseIntParam(params.expiresIn);
    if (expiresIn === undefined || expiresIn < 1 || expiresIn > MAX_EXPIRES_IN_SECONDS) {
      throw validation(
        `expiresIn must be a whole number of seconds, 1–${MAX_EXPIRES_IN_SECONDS}; got ${JSON.stringify(params.expiresIn)}`,
        'storage.tokens.validation',
      );
    }
  }
  const description = parseString(params.description)?.trim();
  const access = params.componentAccess;
  const componentAccess = access === '' ? [] : (parseList(access) ?? []);
  return {
    componentAccess,
    canPurgeTrash: flag(params, 'canPurgeTrash'),
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

/** The token of a `{tokenId}` path parameter; an id that is not a number or no token answers 404 like the service. */
function tokenById(ctx: EmulatorContext, raw: string): TokenRecord {
  const id = /^\d+$/.test(raw) ? Number(raw) : undefined;
  const token = id === undefined ? undefined : ctx.tokens.byId(id);
  if (!token) throw notFound('storage.tokens.notFound', `token ${raw} not found`);
  return token;
}

/** A token without `canManageTokens` sees (and refreshes) only itself, like the service. */
function requireSelfOrManager(caller: TokenRecord, token: TokenRecord, action: string): void {
  if (caller.id === token.id || caller.isMasterToken || caller.canManageTokens) return;
  throw accessDenied(`${action} of token ${token.id} needs a master token or canManageTokens; token ${caller.id} (${caller.description}) may only see itself`);
}

/**
 * `GET tokens/verify`, `GET tokens` (all tokens for a token manager, only itself for any other token),
 * `GET tokens/{id}`, `POST tokens` (create), `POST tokens/{id}/refresh` (new secret), `DELETE tokens/{id}`; the same
 * under `branch/{branch}/` (the service serves tokens alike in every branch).
 */
export function registerTokenRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/tokens/verify', async (request) => tokenResource(ctx, tokenOf(request), 'verify'));

  app.get('/tokens', async (request) => {
    const caller = tokenOf(request);
    const visible = caller.isMasterToken || caller.canManageTokens ? ctx.tokens.all() : [caller];
    return visible.map((t) => tokenResource(ctx, t, 'list'));
  });

  app.get('/tokens/:tokenId', async (request) => {
    const caller = tokenOf(request);
    const token = tokenById(ctx, (request.params as { tokenId: string }).tokenId);
    requireSelfOrManager(caller, token, 'reading the detail');
    return tokenResource(ctx, token, 'detail');
  });

  app.post('/tokens/:tokenId/refresh', async (request) => {
    const caller = tokenOf(request);
    const token = tokenById(ctx, (request.params as { tokenId: string }).tokenId);
    requireSelfOrManager(caller, token, 'refreshing');
    if (token.configured) {
      throw new ApiError(
        400,
        'storage.tokens.cannotRefresh',
        `token ${token.id} (${token.description}) comes from the emulator's options and keeps its secret; refresh tokens created with POST tokens`,
      );
    }
    return tokenResource(ctx, ctx.tokens.refresh(token), 'refresh');
  });

  app.post('/tokens', async (request, reply) => {
    const creator = tokenOf(request);
    requireTokenManager(creator, 'creating a token');
    const created = ctx.tokens.create(creator, newToken(ctx, await readParams(request)));
    return reply.code(201).send(tokenResource(ctx, created, 'create'));
  });

  app.delete('/tokens/:tokenId', async (request, reply) => {
    const caller = tokenOf(request);
    requireTokenManager(caller, 'deleting a token');
    const token = tokenById(ctx, (request.params as { tokenId: string }).tokenId);
    if (token.configured) {
      throw new ApiError(
        400,
        'storage.tokens.cannotDelete',
        `token ${token.id} (${token.description}) comes from the emulator's options and cannot be deleted; delete tokens created with POST tokens`,
      );
    }
    ctx.tokens.delete(token.id);
    return reply.code(204).send();
  });
}
