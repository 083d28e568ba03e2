import { randomBytes } from 'node:crypto';

/** A rejected request, answered as `{error, code, exceptionId}` (service) or `{message, status:"error"}` (importer). */
export class ApiError extends Error {
  readonly exceptionId = newExceptionId();
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Ids shaped like the real service's: `exception-<32 hex>`. */
export function newExceptionId(): string {
  return `exception-${randomBytes(16).toString('hex')}`;
}

export const notFound = (code: string, message: string): ApiError => new ApiError(404, code, message);
export const validation = (message: string, code = 'storage.validation'): ApiError => new ApiError(400, code, message);

/** A job failure: the message ends up in `job.error.message`. */
export class JobError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'JobError';
  }
}

/** The service's code for a table (or load) with more columns than its backend allows. */
export const TOO_MANY_COLUMNS = 'storage.tables.validation.tooManyColumns';

/** The service's message for {@link TOO_MANY_COLUMNS}, then where the columns came from and how many there were. */
export function tooManyColumnsMessage(max: number, where: string, count: number | string): string {
  return `Too many columns. Maximum is ${max} columns. ${where} has ${count}; split the data into narrower tables.`;
}
