import { createHash, timingSafeEqual } from 'node:crypto';
import { type Socket } from 'node:net';
import fastifyMultipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { findBranch } from './branches';
import { type EmulatorContext } from './context';
import { ApiError, newExceptionId } from './errors';
import { decodeQueryString, parseJsonBody } from './form';
import { MAX_BODY_BYTES, sendError, serviceErrorBody } from './http';
import { MEMORY_OBJECTS_PREFIX, MemoryObjectStore, registerMemoryObjectRoutes } from './memory-store';
import { IMPORTER_PREFIX } from './options';
import { type RequestLog, type RequestLogEntry, loggedBody } from './request-log';
import { registerAdminRoutes } from './routes/admin-routes';
import { registerBucketRoutes } from './routes/bucket-routes';
import { registerComponentRoutes } from './routes/component-routes';
import { registerFileRoutes } from './routes/file-routes';
import { registerImporterRoutes } from './routes/importer-routes';
import { registerJobRoutes } from './routes/job-routes';
import { registerBranchRoutes } from './routes/branch-routes';
import { registerEventRoutes } from './routes/event-routes';
import { registerBranchMetadataRoutes, registerMetadataRoutes } from './routes/metadata-routes';
import { UNSERVED_SERVICES_PREFIX, registerServiceRoutes, registerUnservedServiceRoutes } from './routes/service-routes';
import { registerTableChangeRoutes } from './routes/table-change-routes';
import { registerTableRoutes } from './routes/table-routes';
import { registerTokenRoutes } from './routes/token-routes';
import { registerTriggerRoutes } from './routes/trigger-routes';
import { sleep } from './time';

/** Largest importer upload, bytes (the real importer's limit: 2 GB). */
export const IMPORTER_MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024;
const ADMIN_PREFIX = '/_emulator';
/** The service's answer to a request without `X-StorageApi-Token` (its Go SDK's tests match this text). */
export const TOKEN_MISSING = 'Access token must be set';

declare module 'fastify' {
  interface FastifyRequest {
    logEntry: RequestLogEntry | null;
    afterFault: 'dropResponse' | 'status-after-success' | null;
    afterFaultStatus: number;
  }
}

function isImporter(request: FastifyRequest): boolean {
  return request.url.startsWith(`${IMPORTER_PREFIX}/`);
}

/** Paths answered without a token, like the real service's index (clients read it to find the other services). */
function isPublic(method: string, path: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return path.startsWith(`${UNSERVED_SERVICES_PREFIX}/`);
  return path === '/v2/storage' || path === '/v2/storage/' || path.startsWith(`${UNSERVED_SERVICES_PREFIX}/`);
}

function pathOf(url: string): { path: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/** Compares secrets in constant time (over their digests, so the lengths do not leak either). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The bearer token of an `Authorization` header, or undefined. */
function bearerOf(request: FastifyRequest): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

function destroySocket(socket: Socket | null | undefined, reset: boolean): void {
  if (!socket) return;
  if (reset && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

/** Where {@link parseQuery} leaves the refusal of a query string, for the first hook to answer. */
const QUERY_REFUSED = Symbol('queryRefused');

/**
 * The router's query string parser. It runs inside the router's lookup, where a throw would escape Fastify's error
 * handling (and end the process): a refused query string is kept on the result and answered by the first hook.
 */
function parseQuery(query: string): Record<string | symbol, unknown> {
  try {
    return decodeQueryString(query);
  } catch (error) {
    return {
      [QUERY_REFUSED]: error instanceof ApiError ? error : new ApiError(400, 'storage.validation', `query string refused: ${(error as Error).message}`),
    };
  }
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers or URL over Node's 16 KiB, a malformed request
 * line): answered in the service's error shape, as Fastify's default handler does in its own.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'the request line and headers exceed 16 KiB; send long parameters in the body']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request was not received in time']
        : [400, 'Bad Request', `the request is not valid HTTP (${error.code ?? error.message})`];
  const body = JSON.stringify(serviceErrorBody(new ApiError(status, 'storage.validation', message)));
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}

/** The HTTP server: faults and request log first, then auth, then the service, importer and admin routes. */
export async function buildApp(
  ctx: EmulatorContext,
  options: { adminEnabled: boolean; adminToken?: string; requestLog: RequestLog },
): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { querystringParser: parseQuery, ignoreTrailingSlash: true },
    forceCloseConnections: true,
    clientErrorHandler: answerClientError,
  });
  app.decorateRequest('sapiToken', null);
  app.decorateRequest('logEntry', null);
  app.decorateRequest('afterFault', null);
  app.decorateRequest('afterFaultStatus', 500);

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (!text.trim()) return done(null, {});
    try {
      done(null, parseJsonBody(text));
    } catch (error) {
      done(error as ApiError, undefined);
    }
  });
  const formBody = (_req: unknown, body: string | Buffer, done: (error: Error | null, value?: unknown) => void): void => {
    try {
      done(null, decodeQueryString(String(body)));
    } catch (error) {
      done(error as ApiError, undefined);
    }
  };
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, formBody);
  app.addContentTypeParser('*', { parseAs: 'string' }, formBody);
  // Bounded: fields (MAX_BODY_BYTES in all, see multipartFields), parts, files (the importer keeps one) and headers.
  await app.register(fastifyMultipart, {
    limits: { fileSize: IMPORTER_MAX_FILE_BYTES, fieldSize: 1024 * 1024, fields: 2_000, files: 8, parts: 2_100, fieldNameSize: 1_000, headerPairs: 100 },
    throwFileSizeLimit: true,
  });

  app.addHook('onRequest', async (request, reply) => {
    const refused = (request.query as Record<symbol, ApiError | undefined>)[QUERY_REFUSED];
    if (refused) return sendError(request, reply, refused, isImporter(request));
    const { path, query } = pathOf(request.url);
    if (path.startsWith(ADMIN_PREFIX)) return authenticateAdmin(request, reply);
    // the memory store's objects stand for an object-storage server: signed, not logged, no faults, no token
    if (path.startsWith(`${MEMORY_OBJECTS_PREFIX}/`) && ctx.objects instanceof MemoryObjectStore) return undefined;
    const entry: RequestLogEntry = { method: request.method, path, query, status: 0, time: Date.now(), durationMs: 0 };
    request.logEntry = entry;
    options.requestLog.add(entry);
    const action = ctx.faults.match(request.method, path);
    const authenticate = isPublic(request.method, path) ? async (): Promise<unknown> => undefined : authenticateToken;
    if (!action) return authenticate(request, reply);
    entry.fault = action.type;
    switch (action.type) {
      case 'delay':
        await sleep(action.ms);
        return authenticate(request, reply);
      case 'reset':
        reply.hijack();
        destroySocket(request.raw.socket, true);
        return reply;
      case 'status': {
        if (action.retryAfter !== undefined) reply.header('retry-after', String(action.retryAfter));
        const body =
          action.body ??
          (action.status === 503
            ? { status: 'maintenance', reason: 'Injected by the emulator', estimatedEndTime: new Date(Date.now() + 60_000).toISOString() }
            : isImporter(request)
              ? { message: `Injected fault: HTTP ${action.status}`, status: 'error' }
              : { error: `Injected fault: HTTP ${action.status}`, code: 'storage.injectedFault', exceptionId: newExceptionId(), status: 'error' });
        return reply.code(action.status).send(body);
      }
      case 'dropResponse':
        request.afterFault = 'dropResponse';
        return authenticate(request, reply);
      case 'status-after-success':
        request.afterFault = 'status-after-success';
        request.afterFaultStatus = action.status ?? 500;
        return authenticate(request, reply);
    }
  });

  async function authenticateAdmin(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (!options.adminEnabled || options.adminToken === undefined) return undefined;
    const given = bearerOf(request);
    if (given !== undefined && sameSecret(given, options.adminToken)) return undefined;
    const error = new ApiError(
      401,
      'emulator.adminTokenInvalid',
      `${given === undefined ? 'missing' : 'wrong'} admin token: ${ADMIN_PREFIX}/* needs the header "Authorization: Bearer <adminToken>" (the emulator's adminToken option; SAPI_EMULATOR_ADMIN_TOKEN of the CLI and the dev stack)`,
      { 'www-authenticate': 'Bearer realm="sapi-emulator-admin"' },
    );
    return sendError(request, reply, error, false);
  }

  async function authenticateToken(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const header = request.headers['x-storageapi-token'];
    // The service tells a missing (or empty) token from a wrong one: "Access token must be set", without a code.
    if (typeof header !== 'string' || header.trim() === '') return sendError(request, reply, new ApiError(401, '', TOKEN_MISSING), isImporter(request));
    const token = ctx.tokens.authenticate(header);
    if (!token) return sendError(request, reply, new ApiError(401, 'storage.tokenInvalid', 'Invalid access token'), isImporter(request));
    request.sapiToken = token;
    return undefined;
  }

  // Bodies are parsed by now: the log keeps them (redacted, bounded) so a client author can see what was sent.
  app.addHook('preHandler', async (request) => {
    if (!request.logEntry || request.isMultipart()) return;
    const body = loggedBody(request.body);
    if (body !== undefined) request.logEntry.body = body;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (request.afterFault === 'dropResponse') {
      if (request.logEntry) request.logEntry.status = 0;
      reply.hijack();
      destroySocket(request.raw.socket, false);
      return payload;
    }
    if (request.afterFault === 'status-after-success' && reply.statusCode < 300) {
      reply.code(request.afterFaultStatus);
      reply.header('content-type', 'application/json; charset=utf-8');
      const error = {
        error: 'Injected fault: the operation was performed but the answer is an error',
        code: 'storage.injectedFault',
        exceptionId: newExceptionId(),
        status: 'error',
      };
      return JSON.stringify(isImporter(request) ? { ...error, message: error.error } : error);
    }
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const entry = request.logEntry;
    if (!entry) return;
    if (request.afterFault !== 'dropResponse') entry.status = reply.statusCode;
    entry.durationMs = Date.now() - entry.time;
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof ApiError) return sendError(request, reply, error, isImporter(request));
    const e = error as { statusCode?: number; code?: string; message: string };
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      return sendError(request, reply, new ApiError(e.statusCode, 'storage.validation', e.message), isImporter(request));
    }
    return sendError(request, reply, new ApiError(500, 'storage.internalError', `internal error: ${e.message}`), isImporter(request));
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new ApiError(404, 'storage.routeNotFound', `route not found: ${request.method} ${pathOf(request.url).path}`),
      isImporter(request),
    ),
  );

  const service = async (scope: FastifyInstance): Promise<void> => {
    // Branch-scoped paths need an existing branch (`default`, 1, or one created with POST dev-branches).
    scope.addHook('preHandler', async (request) => {
      const { branchId } = request.params as { branchId?: string };
      if (branchId !== undefined) findBranch(ctx, branchId);
    });
    registerFileRoutes(scope, ctx);
    registerBucketRoutes(scope, ctx);
    registerTableRoutes(scope, ctx);
    registerTableChangeRoutes(scope, ctx);
    registerMetadataRoutes(scope, ctx);
    registerEventRoutes(scope, ctx);
    registerTokenRoutes(scope, ctx);
    registerComponentRoutes(scope, ctx);
  };
  await app.register(service, { prefix: '/v2/storage' });
  await app.register(service, { prefix: '/v2/storage/branch/:branchId' });
  await app.register(
    async (scope) => {
      registerServiceRoutes(scope, ctx);
      registerTriggerRoutes(scope, ctx);
      registerJobRoutes(scope, ctx);
      registerBranchRoutes(scope, ctx);
      registerBranchMetadataRoutes(scope, ctx);
    },
    { prefix: '/v2/storage' },
  );
  await app.register(async (scope) => registerUnservedServiceRoutes(scope), { prefix: UNSERVED_SERVICES_PREFIX });
  await app.register(async (scope) => registerImporterRoutes(scope, ctx), { prefix: IMPORTER_PREFIX });
  if (options.adminEnabled) await app.register(async (scope) => registerAdminRoutes(scope, ctx, options.requestLog), { prefix: ADMIN_PREFIX });
  const memory = ctx.objects;
  if (memory instanceof MemoryObjectStore) await app.register(async (scope) => registerMemoryObjectRoutes(scope, memory), { prefix: MEMORY_OBJECTS_PREFIX });
  return app;
}
