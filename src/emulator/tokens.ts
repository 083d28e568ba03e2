/**
 * Storage tokens and the service's permission model: a master token (or one with `canManageBuckets`) manages every
 * bucket; any other token sees only the buckets in its `bucketPermissions` (`read` < `write` < `manage`), only the
 * files it created (unless `canReadAllFileUploads`) and only the jobs it created.
 */
import { randomBytes } from 'node:crypto';
import { type DocLog } from './doc-log';
import { ApiError } from './errors';
import { type BucketPermission, type CreatorToken, type TokenRecord } from './model';
import { type EmulatorTokenOptions } from './options';
import { formatTimestamp } from './time';

const TOKEN = 'token';
/** Bucket grants a configured token earned at run time (a bucket it created), by token id. */
const GRANTS = 'tokenGrants';
const RANK: Record<BucketPermission, number> = { read: 1, write: 2, manage: 3 };
/** Timestamp of configured tokens, which exist before any request. */
const CONFIGURED_CREATED = '2020-01-01T00:00:00+0000';

/** What `POST tokens` accepts, already validated. */
export interface NewToken {
  description?: string;
  bucketPermissions: Record<string, BucketPermission>;
  canManageBuckets: boolean;
  canReadAllFileUploads: boolean;
  /** Seconds from now; undefined: never expires. */
  expiresIn?: number;
  componentAccess: string[];
  canPurgeTrash: boolean;
}

/** The 403 of the real service, with where and why in the message. */
export function accessDenied(detail: string): ApiError {
  return new ApiError(403, 'accessDenied', `You don't have access to the resource: ${detail}`);
}

function label(token: TokenRecord): string {
  return `token ${token.id} (${token.description})`;
}

export class TokenStore {
  private readonly configured = new Map<number, TokenRecord>();

  constructor(
    private readonly state: DocLog,
    options: EmulatorTokenOptions[],
    private readonly projectId: number,
  ) {
    options.forEach((t, i) => {
      const id = t.id ?? i + 1;
      const isMasterToken = t.isMasterToken ?? true;
      const grants = state.get<Record<string, BucketPermission>>(GRANTS, id) ?? {};
      this.configured.set(id, {
        id,
        token: t.token,
        description: t.description ?? `token-${id}`,
        isMasterToken,
        canManageBuckets: t.canManageBuckets ?? isMasterToken,
        canManageTokens: isMasterToken,
        canReadAllFileUploads: t.canReadAllFileUploads ?? isMasterToken,
        bucketPermissions: { ...(t.bucketPermissions ?? {}), ...grants },
        created: CONFIGURED_CREATED,
        expires: null,
        expiresMs: null,
        creatorToken: null,
        configured: true,
      });
    });
  }

  /** Every token, configured ones first, then the created ones by id. */
  all(): TokenRecord[] {
    return [...this.configured.values(), ...this.state.all<TokenRecord>(TOKEN)];
  }

  /** The token with this secret, unless unknown or expired. */
  authenticate(secret: string): TokenRecord | undefined {
    const token = this.all().find((t) => t.token === secret);
    if (!token || (token.expiresMs !== null && token.expiresMs <= Date.now())) return undefined;
    return token;
  }

  byId(id: number): TokenRecord | undefined {
    return this.configured.get(id) ?? this.state.get<TokenRecord>(TOKEN, id);
  }

  /** The token's permission on a bucket; every bucket is `manage` for master and `canManageBuckets` tokens. */
  permission(token: TokenRecord, bucketId: string): BucketPermission | undefined {
    if (token.isMasterToken || token.canManageBuckets) return 'manage';
    return token.bucketPermissions[bucketId];
  }

  allows(token: TokenRecord, bucketId: string, need: BucketPermission): boolean {
    const has = this.permission(token, bucketId);
    return has !== undefined && RANK[has] >= RANK[need];
  }

  /** Throws the service's 403 unless the token has at least `need` on the bucket. */
  authorize(token: TokenRecord, bucketId: string, need: BucketPermission, action: string): void {
    if (this.allows(token, bucketId, need)) return;
    const has = this.permission(token, bucketId);
    throw accessDenied(`${action} needs ${need} permission on bucket ${bucketId}; ${label(token)} has ${has ?? 'none'}`);
  }

  /** Master tokens see every file; others only the files they created, unless `canReadAllFileUploads`. */
  canReadFile(token: TokenRecord, creator: CreatorToken): boolean {
    return token.isMasterToken || token.canReadAllFileUploads || creator.id === token.id;
  }

  /** Master tokens see every job; others only the jobs they created. */
  canReadJob(token: TokenRecord, creator: CreatorToken): boolean {
    return token.isMasterToken || creator.id === token.id;
  }

  /** `bucketPermissions` as the service reports it: every existing bucket for master and `canManageBuckets` tokens. */
  reportedPermissions(token: TokenRecord, bucketIds: string[]): Record<string, BucketPermission> {
    if (token.isMasterToken || token.canManageBuckets) return Object.fromEntries(bucketIds.map((id) => [id, 'manage' as const]));
    return { ...token.bucketPermissions };
  }

  /** Gives a token a permission on a bucket (the creator of a bucket gets `manage`), kept across restarts. */
  grant(token: TokenRecord, bucketId: string, permission: BucketPermission): void {
    token.bucketPermissions = { ...token.bucketPermissions, [bucketId]: permission };
    this.save(token);
  }

  /** Forgets every grant on a deleted bucket, so a new bucket of the same id starts with none. */
  revokeBucket(bucketId: string): void {
    for (const token of this.all()) {
      if (!(bucketId in token.bucketPermissions)) continue;
      const { [bucketId]: _dropped, ...rest } = token.bucketPermissions;
      token.bucketPermissions = rest;
      this.save(token);
    }
  }

  /** A token created over the API is kept whole; of a configured one (from the options) only its grants. */
  private save(token: TokenRecord): void {
    if (token.configured) this.state.put(GRANTS, token.id, token.bucketPermissions);
    else this.state.put(TOKEN, token.id, token);
  }

  create(creator: TokenRecord, input: NewToken): TokenRecord {
    const id = this.nextId();
    const now = Date.now();
    const expiresMs = input.expiresIn === undefined ? null : now + input.expiresIn * 1000;
    const token: TokenRecord = {
      id,
      token: this.secretFor(id),
      description: input.description ?? `Created by ${creator.description}`,
      isMasterToken: false,
      canManageBuckets: input.canManageBuckets,
      canManageTokens: false,
      canReadAllFileUploads: input.canReadAllFileUploads,
      bucketPermissions: input.bucketPermissions,
      ...(input.componentAccess.length ? { componentAccess: input.componentAccess } : {}),
      canPurgeTrash: input.canPurgeTrash,
      created: formatTimestamp(now),
      expires: expiresMs === null ? null : formatTimestamp(expiresMs),
      expiresMs,
      creatorToken: { id: creator.id, description: creator.description },
      configured: false,
    };
    this.state.put(TOKEN, id, token);
    return token;
  }

  /**
   * Gives a token created over the API a new secret (the old one stops working at once) and a new `refreshed` time.
   * Configured tokens keep theirs: their secret is the emulator's option, which clients of the dev stack share.
   */
  refresh(token: TokenRecord): TokenRecord {
    const refreshed: TokenRecord = { ...token, token: this.secretFor(token.id), refreshed: formatTimestamp(Date.now()) };
    this.state.put(TOKEN, token.id, refreshed);
    return refreshed;
  }

  /** Shaped like the service's secrets: `<project>-<token id>-<random>`. */
  private secretFor(id: number): string {
    return `${this.projectId}-${id}-${randomBytes(20).toString('hex')}`;
  }

  /** Deletes a token created over the API; configured tokens stay (like the service's master tokens). */
  delete(id: number): void {
    this.state.delete(TOKEN, id);
  }

  private nextId(): number {
    const stored = this.state.get<number>('seq', TOKEN) ?? 0;
    const next = Math.max(stored, ...this.all().map((t) => t.id)) + 1;
    this.state.put('seq', TOKEN, next);
    return next;
  }
}
