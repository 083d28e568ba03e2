/**
 * A file read through its presigned `url` alone (a file detail without credentials): an {@link ObjectReader} over
 * plain HTTP GETs, not a store (nothing can be listed or written through it).
 */
import { Readable } from 'node:stream';
import { type Dispatcher } from 'undici';
import { excerptOf, SapiCredentialsExpiredError, SapiErrorCode, SapiTransferError, type SapiError } from '../errors';
import { redactUrl } from '../http';
import { tracedRequest } from '../observability/traced-request';
import { type ObjectReader } from './object-store';
import { totalFromContentRange } from './store-helpers';

/** The reader of a presigned URL. */
export function urlReader(dispatcher: Dispatcher, url: string): ObjectReader {
  const label = redactUrl(url);
  const target = new URL(url);
  const request = async (headers: Record<string, string>, signal?: AbortSignal): Promise<Dispatcher.ResponseData> => {
    try {
      const options = {
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'GET' as const,
        headers,
        signal,
        headersTimeout: 60_000,
        bodyTimeout: 300_000,
      };
      return await tracedRequest(dispatcher, options, 'object GET', { 'http.request.header.range': headers.range });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason ?? cause;
      throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'download request failed', context: { url: label }, cause });
    }
  };
  const failure = (status: number, body: string): SapiError =>
    // A presigned URL answers 403 once expired: the file detail must be fetched again.
    status === 403
      ? new SapiCredentialsExpiredError({ where: `download [url=${label}]`, serviceCode: `HTTP 403 ${excerptOf(body).slice(0, 80)}`.trim() })
      : new SapiTransferError({
          code: SapiErrorCode.DOWNLOAD_FAILED,
          message: `download answered ${status}${body ? ` ${JSON.stringify(excerptOf(body))}` : ''}`,
          context: { url: label },
          status,
          retryable: status >= 500 || status === 408 || status === 429,
        });
  const fail = async (res: Dispatcher.ResponseData): Promise<never> => {
    throw failure(res.statusCode, await res.body.text().catch(() => ''));
  };
  return {
    label,
    gz: /\.gz$/i.test(target.pathname),
    async get(start, signal) {
      const res = await request(start > 0 ? { range: `bytes=${start}-` } : {}, signal);
      if (res.statusCode === 416 && start > 0) {
        await res.body.dump();
        return { body: Readable.from([]), total: start, fromStart: true };
      }
      if (res.statusCode === 206) return { body: res.body, total: totalFromContentRange(headerOf(res.headers['content-range'])), fromStart: true };
      if (res.statusCode === 200) {
        const len = Number(headerOf(res.headers['content-length']));
        return { body: res.body, total: Number.isSafeInteger(len) ? len : undefined, fromStart: false };
      }
      return fail(res);
    },
    async size(signal) {
      // A presigned GET URL cannot be HEADed (the signature covers the method): ask for one byte instead.
      const res = await request({ range: 'bytes=0-0' }, signal);
      await res.body.dump();
      if (res.statusCode === 206) return totalFromContentRange(headerOf(res.headers['content-range']));
      if (res.statusCode === 200) {
        const len = Number(headerOf(res.headers['content-length']));
        return Number.isSafeInteger(len) ? len : undefined;
      }
      return undefined;
    },
    plainGet: () => Promise.resolve({ url, headers: {}, failure }),
  };
}

function headerOf(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
