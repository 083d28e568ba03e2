import { type Multipart } from '@fastify/multipart';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { ApiError, newExceptionId } from './errors';
import { type FormObject, decodePairs } from './form';
import { type TokenRecord } from './model';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated token (set by the auth hook). */
    sapiToken: TokenRecord | null;
  }
}

/** The token of an authenticated request. */
export function tokenOf(request: FastifyRequest): TokenRecord {
  if (!request.sapiToken) throw new ApiError(401, 'storage.tokenInvalid', 'Invalid access token');
  return request.sapiToken;
}

/** Longest run id kept; the service's limit is of the same order. */
const MAX_RUN_ID_LENGTH = 255;

/**
 * The `X-KBC-RunId` header, or null: the service records it as `runId` on the jobs and files the request creates,
 * so a caller can find them again by its run.
 */
export function runIdOf(request: FastifyRequest): string | null {
  const header = request.headers['x-kbc-runid'];
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value ? value.slice(0, MAX_RUN_ID_LENGTH) : null;
}

/** Largest JSON or form body, and most bytes of the fields of a multipart body (its file aside). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Name/value pairs of a multipart body's fields, refused (413) past {@link MAX_BODY_BYTES} in all. */
export function multipartFields(): { pairs: [string, string][]; add(name: string, value: unknown): void } {
  const pairs: [string, string][] = [];
  let bytes = 0;
  return {
    pairs,
    add(name, value) {
      const text = String(value);
      bytes += name.length + text.length;
      if (bytes > MAX_BODY_BYTES) throw new ApiError(413, 'storage.validation', `the fields of the multipart body exceed ${MAX_BODY_BYTES} bytes`);
      pairs.push([name, text]);
    },
  };
}

/** The parts of a multipart body; a body the parser cannot read (cut off, no boundary) is refused with 400. */
export async function* multipartParts(request: FastifyRequest): AsyncGenerator<Multipart> {
  try {
    for await (const part of request.parts()) yield part;
  } catch (error) {
    if (error instanceof ApiError || (error as { statusCode?: number }).statusCode) throw error;
    throw unreadableBody(error);
  }
}

/** The refusal of a multipart body the parser cannot read (cut off, no boundary): the client's fault, a 400. */
export function unreadableBody(error: unknown): ApiError {
  return new ApiError(400, 'storage.validation', `the multipart body cannot be read: ${(error as Error).message}`);
}

/**
 * Request parameters from the query string and the body (JSON, form-encoded or multipart fields; files in a
 * multipart body are skipped), body winning.
 */
export async function readParams(request: FastifyRequest): Promise<FormObject> {
  const query = (request.query ?? {}) as FormObject;
  if (request.isMultipart()) {
    const fields = multipartFields();
    for await (const part of multipartParts(request)) {
      if (part.type === 'file') part.file.resume();
      else fields.add(part.fieldname, part.value);
    }
    return { ...query, ...decodePairs(fields.pairs) };
  }
  const body = request.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) return { ...query, ...(body as FormObject) };
  return { ...query };
}

/** Branch of a branch-scoped route (`/v2/storage/branch/<id>/...`), `default` otherwise. */
export function branchOf(request: FastifyRequest): string {
  return (request.params as { branchId?: string }).branchId ?? 'default';
}

export function serviceErrorBody(error: ApiError): Record<string, unknown> {
  // An error the service sends without a code (a missing token) has none here either.
  if (error.code === '') return { error: error.message, exceptionId: error.exceptionId, status: 'error' };
  return { error: error.message, code: error.code, exceptionId: error.exceptionId, status: 'error' };
}

export function sendError(_request: FastifyRequest, reply: FastifyReply, error: ApiError, importer: boolean): FastifyReply {
  for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
  const body = importer ? { message: error.message, ...serviceErrorBody(error) } : serviceErrorBody(error);
  return reply.code(error.status).send(body);
}

export { newExceptionId };
