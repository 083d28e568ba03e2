/**
 * What every group of Storage API calls (files, buckets and tables, jobs) shares: the call options, the transport
 * with the branch-scoped path builder, and the checks of the inputs before anything is sent.
 */
import { SapiInvalidInputError } from '../errors';
import { type HttpTransport } from './http';

/** Options every method accepts. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of the calls that create something: a marker the service records as the `runId` of what it creates. */
export interface MarkedCallOptions extends CallOptions {
  /**
   * Sent as `X-KBC-RunId`: the service records it as `runId` on the jobs and files the request creates, so a caller
   * that lost the response can prove which job or file is its own (see `reconcile.ts`). Overrides the client's.
   */
  runId?: string;
}

/** The client's transport and paths, as each group of calls uses them. */
export interface CallContext {
  http: HttpTransport;
  /** Dev branch of the files, buckets and tables (jobs never are). */
  branchId?: string;
  /** Path of a branch-scoped resource (files, buckets, tables): `/v2/storage[/branch/{id}]/{rest}`. */
  scoped(rest: string): string;
}

/** One path segment, encoded. */
export const seg = encodeURIComponent;

export function requireNonEmpty(method: string, field: string, value: string | undefined): void {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SapiInvalidInputError(`${method}: ${field} is required (got ${JSON.stringify(value)})`);
  }
}

export function requireId(method: string, field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new SapiInvalidInputError(`${method}: ${field} must be a positive integer (got ${JSON.stringify(value)})`);
  }
}

/** The object without its undefined fields (they are not sent). */
export function compact<T extends Record<string, unknown>>(obj: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}
