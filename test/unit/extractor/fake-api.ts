/**
 * An in-memory fake of the page fetcher for unit tests: answers canned bodies and formats requests compactly.
 */
import { createHash } from 'node:crypto';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import type { FetchedPage } from '../../harness/run-extraction';
import type { ExtractorConfig, RequestDescriptor } from '../../../src/extractor/types';

/** A canned body: any JSON value, or `{ raw: '...' }` for exact bytes. */
export type FakeBody = unknown;
/** Canned answers: in order, or computed from the request. */
export type FakeResponses = FakeBody[] | ((request: RequestDescriptor, index: number) => FakeBody);

export const BASE_URL = 'http://api.test/v1/';

/** Turns a body into the fetcher's result (bytes and sha256 of the raw text). */
export function page(body: FakeBody): FetchedPage {
  const raw = typeof body === 'object' && body !== null && 'raw' in body ? String((body as { raw: unknown }).raw) : JSON.stringify(body);
  return { body: JSON.parse(raw), bytes: Buffer.byteLength(raw), hash: createHash('sha256').update(raw).digest('hex') };
}

/** A fetchPage that answers `responses` and fails loudly when asked for more. */
export function fakeFetch(responses: FakeResponses) {
  let index = 0;
  return async (request: RequestDescriptor): Promise<FetchedPage> => {
    const i = index++;
    if (typeof responses === 'function') return page(responses(request, i));
    if (i >= responses.length) throw new Error(`fake API: no response #${i + 1} for ${describeRequest(request)}`);
    return page(responses[i]);
  };
}

/** `GET /v1/items?cursor=2`, `POST /v1/search {"q":1}`, `POST /v1/form a=1` (full URL for other hosts). */
export function describeRequest(request: RequestDescriptor): string {
  const url = new URL(request.url);
  const target = url.origin === 'http://api.test' ? `${url.pathname}${url.search}` : request.url;
  if (!request.body) return `${request.method} ${target}`;
  const body = request.body.kind === 'json' ? JSON.stringify(request.body.value) : request.body.value;
  return `${request.method} ${target} ${body}`;
}

/** Options of `makeConfig`. */
export interface MakeConfigOptions {
  pagination?: unknown;
  jobs: unknown[];
  baseUrl?: string;
  http?: unknown;
}

/** A full, parsed configuration around the given pagination and jobs. */
export function makeConfig(options: MakeConfigOptions): ExtractorConfig {
  return parseExtractorConfig({
    parameters: {
      api: { baseUrl: options.baseUrl ?? BASE_URL, pagination: options.pagination, http: options.http },
      config: { outputBucket: 'test', jobs: options.jobs },
    },
  });
}
