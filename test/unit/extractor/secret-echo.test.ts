import { referenceEchoedSecrets } from '../../../src/extractor/secret-echo';
import type { PageResult } from '../../../src/extractor/scroller';
import type { RequestDescriptor } from '../../../src/extractor/types';

const source = { env: { SAPI_SECRET_KEY: 'top secret/1', SAPI_SECRET_SHORT: 'ab1', OTHER: 'not-a-secret-var' } };
const request: RequestDescriptor = {
  method: 'GET',
  url: 'http://api.test/items?key=%24%7Benv%3ASAPI_SECRET_KEY%7D&s=%24%7Benv%3ASAPI_SECRET_SHORT%7D',
  headers: {},
};
const result = (cursor: string, url?: string): PageResult => ({
  bytes: 1,
  hash: 'h',
  recordCount: 0,
  digest: { cursor: { found: true, value: cursor }, flag: null, limit: null, ...(url ? { paging: { url: { found: true, value: url } } } : {}) },
});

describe('secrets echoed in pagination values', () => {
  it('turns a secret of the request in a cursor or next URL (as is, percent- or form-encoded) into its reference', () => {
    const out = referenceEchoedSecrets(result('c-top secret/1', 'next?key=top%20secret%2F1&b=top+secret%2F1'), request, source);
    expect(out.digest?.cursor?.value).toBe('c-${env:SAPI_SECRET_KEY}');
    expect(out.digest?.paging?.url?.value).toBe('next?key=${env:SAPI_SECRET_KEY}&b=${env:SAPI_SECRET_KEY}');
  });

  it('leaves values alone when nothing is echoed, for secrets the request does not reference, and for very short secrets', () => {
    const page = result('ab1-not-a-secret-var', 'next?p=2');
    expect(referenceEchoedSecrets(page, request, source)).toBe(page);
  });
});
