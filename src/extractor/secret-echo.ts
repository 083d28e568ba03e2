/**
 * Secrets an API echoes back in the values pagination reads from a response: a next-page URL (`response.url`) or a
 * cursor (`response.param`) that carries the `api_key` the request was sent with. Those values become the next
 * request, which the scroller state, heartbeats and results keep, so the page-fetching activity turns every secret
 * of the request it sent back into its `${env:NAME}` reference before the value leaves the activity; the reference
 * is filled again when the next request is sent. Pure module (the environment is passed in).
 */
import type { PageResult } from './scroller';
import { referencedNames, type SecretSource, DEFAULT_SECRET_ENV_PREFIX } from './secrets';
import type { RequestDescriptor } from './types';
import { encodeQueryComponent } from './url';

/** Secrets shorter than this are not searched for in response values (they would match ordinary text). */
const MIN_ECHOED_SECRET_LENGTH = 6;

/** Every form of `value` a URL or body may show it in: as is, percent-encoded (both styles), form-encoded. */
function formsOf(value: string): string[] {
  const encoded = encodeQueryComponent(value);
  return [...new Set([value, encoded, encodeURIComponent(value), encoded.replace(/%20/g, '+')])].sort((a, b) => b.length - a.length);
}

/** `text` with every echoed secret of `pairs` replaced by its reference (`${env:NAME}`). */
function replaceEchoes(text: string, pairs: ReadonlyArray<[string, string]>): string {
  let result = text;
  for (const [value, reference] of pairs) for (const form of formsOf(value)) result = result.split(form).join(reference);
  return result;
}

/** Every reference shows this in the request's JSON, whichever of its characters are percent-encoded. */
const REFERENCE_HINT = /env(:|%3A)/i;

/** The secrets `request` references (value → reference), longest first; empty when it references none. */
function requestSecrets(request: RequestDescriptor, source: SecretSource): Array<[string, string]> {
  const prefix = source.prefix ?? DEFAULT_SECRET_ENV_PREFIX;
  const pairs: Array<[string, string]> = [];
  const json = JSON.stringify(request);
  if (!REFERENCE_HINT.test(json)) return pairs; // most requests reference no secret: no decoding
  // references in a URL or form body are percent-encoded (`%24%7Benv%3ANAME%7D`)
  const decoded = json.replace(/%24/gi, '$').replace(/%7B/gi, '{').replace(/%7D/gi, '}').replace(/%3A/gi, ':');
  for (const name of referencedNames(decoded)) {
    const value = source.env[name];
    if (name.startsWith(prefix) && value !== undefined && value.length >= MIN_ECHOED_SECRET_LENGTH) pairs.push([value, `\${env:${name}}`]);
  }
  return pairs.sort((a, b) => b[0].length - a[0].length);
}

/**
 * `result` with the secrets of `request` replaced by their references in the values the scroller turns into the
 * next request (the `response.param` cursor, the `response.url` next URL). Returns `result` itself when nothing
 * was echoed.
 */
export function referenceEchoedSecrets(result: PageResult, request: RequestDescriptor, source: SecretSource): PageResult {
  const digest = result.digest;
  if (!digest) return result;
  const pairs = requestSecrets(request, source);
  if (pairs.length === 0) return result;
  const url = digest.paging?.url;
  const cursor = digest.cursor;
  const newUrl = typeof url?.value === 'string' ? replaceEchoes(url.value, pairs) : undefined;
  const newCursor = typeof cursor?.value === 'string' ? replaceEchoes(cursor.value, pairs) : undefined;
  if (newUrl === url?.value && newCursor === cursor?.value) return result;
  return {
    ...result,
    digest: {
      ...digest,
      ...(cursor && newCursor !== undefined ? { cursor: { ...cursor, value: newCursor } } : {}),
      ...(digest.paging && url && newUrl !== undefined ? { paging: { ...digest.paging, url: { ...url, value: newUrl } } } : {}),
    },
  };
}
