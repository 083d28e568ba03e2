import { ApplicationFailure } from '@temporalio/common';
import {
  httpErrorCode,
  httpStatusError,
  SapiCredentialsExpiredError,
  SapiError,
  SapiErrorCode,
  SapiHttpError,
  SapiInvalidInputError,
  SapiInvalidResponseError,
  SapiNetworkError,
  SapiTransferError,
  toApplicationFailure,
  describeJobFailure,
} from '../../../src/errors';
import { ExtractNotJsonError } from '../../../src/extractor/errors';

const req = { method: 'POST', path: '/v2/storage/buckets/in.c-x/tables-async' };

describe('error registry', () => {
  it('names where, the status, the service code, its message and the exceptionId', () => {
    const e = new SapiHttpError({
      request: req,
      status: 404,
      serviceCode: 'storage.buckets.notFound',
      serviceMessage: 'Bucket in.c-x not found',
      exceptionId: 'exception-abc',
    });
    expect(e.message).toBe(
      'POST /v2/storage/buckets/in.c-x/tables-async failed: 404 storage.buckets.notFound "Bucket in.c-x not found" [exceptionId=exception-abc]',
    );
    expect(e).toBeInstanceOf(SapiError);
    expect(e).toMatchObject({ code: 'SAPI_NOT_FOUND', status: 404, serviceCode: 'storage.buckets.notFound', exceptionId: 'exception-abc', retryable: false });
  });

  it('maps statuses to stable codes', () => {
    expect(httpErrorCode(401)).toBe(SapiErrorCode.UNAUTHORIZED);
    expect(httpErrorCode(403)).toBe(SapiErrorCode.UNAUTHORIZED);
    expect(httpErrorCode(404)).toBe(SapiErrorCode.NOT_FOUND);
    expect(httpErrorCode(400, 'storage.buckets.alreadyExists')).toBe(SapiErrorCode.ALREADY_EXISTS);
    expect(httpErrorCode(409)).toBe(SapiErrorCode.ALREADY_EXISTS);
    expect(httpErrorCode(400, 'storage.validation')).toBe(SapiErrorCode.VALIDATION);
    expect(httpErrorCode(422)).toBe(SapiErrorCode.VALIDATION);
    expect(httpErrorCode(408)).toBe(SapiErrorCode.TIMEOUT);
    expect(httpErrorCode(418)).toBe(SapiErrorCode.CLIENT_ERROR);
    expect(httpErrorCode(429)).toBe(SapiErrorCode.RATE_LIMITED);
    expect(httpErrorCode(503)).toBe(SapiErrorCode.MAINTENANCE);
    expect(httpErrorCode(500)).toBe(SapiErrorCode.SERVER_ERROR);
    expect(httpErrorCode(501)).toBe(SapiErrorCode.SERVER_ERROR);
  });

  it('marks 5xx (but 501), 408 and 429 retryable, other 4xx not', () => {
    const make = (status: number): SapiError => httpStatusError({ request: req, status });
    expect(make(500).retryable).toBe(true);
    expect(make(501).retryable).toBe(false);
    expect(make(429).retryable).toBe(true);
    expect(make(408).retryable).toBe(true);
    expect(make(400).retryable).toBe(false);
  });

  it('tells how to fix an unauthorized token and when to come back after 429', () => {
    expect(new SapiHttpError({ request: req, status: 401, serviceCode: 'storage.tokenInvalid', serviceMessage: 'Invalid access token' }).message).toMatch(
      /check the Storage token/,
    );
    expect(new SapiHttpError({ request: req, status: 429, retryAfterMs: 3000 }).message).toMatch(/retry after 3 s/);
  });

  it('quotes the first 200 characters of an HTML body', () => {
    const html = `<html><body>${'x'.repeat(500)}</body></html>`;
    const e = new SapiInvalidResponseError({ request: { method: 'GET', path: '/v2/storage' }, status: 200, problem: 'expected JSON, got HTML', body: html });
    expect(e.message).toContain('GET /v2/storage returned an invalid response (200): expected JSON, got HTML');
    expect(e.message).toContain(JSON.stringify(`${html.slice(0, 200)}…`));
    expect(e.code).toBe('SAPI_INVALID_RESPONSE');
  });

  it('describes a failed job with its error code, message and exceptionId, as the polling workflow raises it', () => {
    expect(
      describeJobFailure({
        id: 12,
        operationName: 'tableImport',
        tableId: 'in.c-a.t',
        message: 'bad header',
        code: 'storage.tables.validation',
        exceptionId: 'e-9',
      }),
    ).toBe('Storage job 12 (tableImport on in.c-a.t) failed: bad header [code=storage.tables.validation] [exceptionId=e-9]');
  });

  it('keeps instanceof across copies of the package (branded errors)', () => {
    // another copy of the class: same name, different identity, as with two installed versions
    class OtherError extends Error {}
    const ours = new SapiInvalidInputError('x');
    expect(ours).toBeInstanceOf(SapiInvalidInputError);
    expect(ours instanceof OtherError).toBe(false);
    expect(new OtherError('y') instanceof SapiError).toBe(false);
    const copy = Object.create(null) as Record<symbol, unknown>;
    copy[Symbol.for('sapi-temporal.error')] = ['SapiInvalidInputError', 'SapiError'];
    expect(copy instanceof SapiError).toBe(true);
    expect(copy instanceof SapiInvalidInputError).toBe(true);
    expect(copy instanceof SapiTransferError).toBe(false);
    expect(new ExtractNotJsonError('m', { status: 200, url: 'u' })).toBeInstanceOf(SapiError);
  });

  it('renders transfer context as [k=v]', () => {
    const e = new SapiTransferError({
      code: SapiErrorCode.UPLOAD_FAILED,
      message: 'upload failed',
      context: { bucket: 'b', key: 'k', part: 12 },
      cause: new Error('socket hang up'),
    });
    expect(e.message).toBe('upload failed [bucket=b, key=k, part=12]: socket hang up');
  });

  describe('toApplicationFailure', () => {
    it('uses the code as type, retryable as !nonRetryable, and carries service details', () => {
      const e = new SapiHttpError({ request: req, status: 404, serviceCode: 'storage.buckets.notFound', serviceMessage: 'nope', exceptionId: 'x1' });
      const f = toApplicationFailure(e);
      expect(f).toBeInstanceOf(ApplicationFailure);
      expect(f.type).toBe('SAPI_NOT_FOUND');
      expect(f.nonRetryable).toBe(true);
      expect(f.message).toBe(e.message);
      expect(f.details?.[0]).toMatchObject({ code: 'SAPI_NOT_FOUND', status: 404, serviceCode: 'storage.buckets.notFound', exceptionId: 'x1' });
    });

    it('sets nextRetryDelay from Retry-After', () => {
      const f = toApplicationFailure(new SapiHttpError({ request: req, status: 503, retryAfterMs: 5000 }));
      expect(f.type).toBe('SAPI_MAINTENANCE');
      expect(f.nonRetryable).toBe(false);
      expect(f.nextRetryDelay).toBe(5000);
    });

    it('keeps the cause and marks credentials expiry retryable', () => {
      const cause = new Error('ExpiredToken');
      const f = toApplicationFailure(new SapiCredentialsExpiredError({ where: 'upload [bucket=b, key=k]', cause }));
      expect(f.type).toBe('SAPI_CREDENTIALS_EXPIRED');
      expect(f.nonRetryable).toBe(false);
      expect(f.cause).toBe(cause);
    });

    it('flags a lost response of a non-idempotent request', () => {
      const e = new SapiNetworkError({ request: req, cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }), mayHaveReachedService: true });
      expect(e.message).toContain('network error ECONNRESET');
      expect(toApplicationFailure(e).details?.[0]).toMatchObject({ mayHaveReachedService: true, code: 'SAPI_NETWORK' });
    });

    it('never retries invalid input', () => {
      expect(toApplicationFailure(new SapiInvalidInputError('pagination.responseParam is required')).nonRetryable).toBe(true);
    });

    it('passes an ApplicationFailure through and wraps unknown errors as retryable', () => {
      const af = ApplicationFailure.nonRetryable('x', 'T');
      expect(toApplicationFailure(af)).toBe(af);
      const f = toApplicationFailure(new TypeError('boom'));
      expect(f).toMatchObject({ type: 'TypeError', nonRetryable: false, message: 'boom' });
      expect(toApplicationFailure('str').message).toBe('str');
    });
  });
});
