/**
 * The activity side of user functions: hashing and encoding with node:crypto, and finishing the deferred calls of
 * a request (`${fn:N}` tokens) once its secrets are filled. NOT workflow-safe (node:crypto).
 */
import { createHash, createHmac, getHashes } from 'node:crypto';
import { DEFERRED_TOKEN, evaluateFunctions, phpString, type CryptoFunctions } from '../functions';
import { referencedNames } from '../secrets';
import type { RequestDescriptor } from '../types';
import { encodeQueryComponent } from '../url';

/** md5, sha1, base64_encode and hash_hmac with node:crypto (UTF-8 input, lowercase hex output). */
export const nodeCryptoFunctions: CryptoFunctions = Object.freeze({
  md5: (text: string) => createHash('md5').update(text, 'utf8').digest('hex'),
  sha1: (text: string) => createHash('sha1').update(text, 'utf8').digest('hex'),
  base64Encode: (text: string) => Buffer.from(text, 'utf8').toString('base64'),
  hmac: (algorithm: string, data: string, key: string) => {
    if (!getHashes().includes(algorithm)) throw new Error(`hash_hmac(): Argument #1 ($algo) must be a valid cryptographic hashing algorithm`);
    return createHmac(algorithm, key).update(data, 'utf8').digest('hex');
  },
});

/**
 * The request with its deferred calls computed and put where their `${fn:N}` tokens are (percent-encoded in the URL
 * and a form body; a JSON string that is exactly a token takes the value as is). `fill` resolves the `${env:NAME}`
 * references of a call's arguments first (and records the values to scrub). Values computed from a secret are
 * returned in `derived`, to be scrubbed from errors too. Without deferred calls the request is returned unchanged.
 */
export function finishDeferred(request: RequestDescriptor, fill: (json: unknown) => unknown): { request: RequestDescriptor; derived: string[] } {
  const deferred = request.deferred;
  if (!deferred || deferred.length === 0) return { request, derived: [] };
  const derived: string[] = [];
  const values = deferred.map((d, i) => {
    const secret = referencedNames(d.call).length > 0;
    const value = evaluateFunctions(fill(d.call), {}, { nowMs: d.nowMs, crypto: nodeCryptoFunctions, path: `deferred call ${i}` });
    if (secret) derived.push(phpString(value));
    return value;
  });
  const text = (s: string, encode: boolean) =>
    s.replace(new RegExp(DEFERRED_TOKEN.source, 'gi'), (_m, n: string) => {
      const v = phpString(values[Number(n)]);
      return encode ? encodeQueryComponent(v) : v;
    });
  const json = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const exact = /^\$\{fn:(\d+)\}$/.exec(v);
      return exact ? values[Number(exact[1])] : text(v, false);
    }
    if (Array.isArray(v)) return v.map(json);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, json(x)]));
    return v;
  };
  const { deferred: _dropped, ...rest } = request;
  const finished: RequestDescriptor = {
    ...rest,
    url: text(request.url, true),
    headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, text(v, false)])),
  };
  if (request.body?.kind === 'json') finished.body = { kind: 'json', value: json(request.body.value) };
  if (request.body?.kind === 'form') finished.body = { kind: 'form', value: text(request.body.value, true) };
  return { request: finished, derived };
}
