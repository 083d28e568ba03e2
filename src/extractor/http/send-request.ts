/**
 * Sends one extractor request the way the activity must: deferred user-function calls finished, `${env:NAME}`
 * references filled, authentication applied (login sessions kept in the calling thread), then `fetchPage`; an
 * error is scrubbed of every secret and every value computed from one (tokens, signatures). Only this copy of the
 * request holds them: the caller's descriptor (scroller state, heartbeats, history) keeps references and tokens.
 * NOT workflow-safe.
 */
import { applyAuthentication, type ApplyAuthOptions, type AuthSetup, type LoginSessions } from '../auth/apply-auth';
import { resolveJsonSecrets, resolveRequestSecrets, scrubError, type SecretSource } from '../secrets';
import { resolveClientSecrets } from '../http-client';
import { assertRedirectKeepsSecrets, assertSecretsBound } from '../secret-hosts';
import type { AuthenticationConfig, HttpClientConfig, JsonObject, RequestDescriptor } from '../types';
import { fetchPage, type FetchPageOptions, type FetchPageResult } from './fetch-page';
import { finishDeferred } from './node-functions';

/** The authentication part of a configuration, as the activity receives it (references, not values). */
export interface RequestAuth {
  authentication: AuthenticationConfig;
  /** `parameters.config` without jobs. */
  attributes: JsonObject;
  baseUrl: string;
}

/** The {@link RequestAuth} of a normalized configuration, or undefined without authentication. */
export function requestAuthOf(config: {
  api: { baseUrl: string; authentication?: AuthenticationConfig | null };
  config: { attributes?: JsonObject };
}): RequestAuth | undefined {
  const authentication = config.api.authentication;
  return authentication ? { authentication, attributes: config.config.attributes ?? {}, baseUrl: config.api.baseUrl } : undefined;
}

/** Options of {@link sendRequest}. */
interface SendRequestOptions extends Partial<Omit<ApplyAuthOptions, 'sendLogin'>> {
  secrets: SecretSource;
  auth?: RequestAuth;
  fetch?: FetchPageOptions;
  sessions?: LoginSessions;
  /** The configuration's `api.client` (retries, ignored statuses, timeouts, TLS, signing; references kept). */
  client?: HttpClientConfig;
}

/** Sends `request` (see the module doc). */
export async function sendRequest(request: RequestDescriptor, options: SendRequestOptions): Promise<FetchPageResult> {
  const scrub: string[] = [];
  // every secret this request may carry (its own, its authentication's, its client's) must be bound to its host
  const carried = [request, options.auth ?? null, options.client ?? null];
  try {
    assertSecretsBound(carried, request.url, options.secrets);
    const fill = (json: unknown) => {
      const r = resolveJsonSecrets(json, options.secrets);
      scrub.push(...r.secrets);
      return r.value;
    };
    const finished = finishDeferred(request, fill);
    scrub.push(...finished.derived);
    const resolved = resolveRequestSecrets(finished.request, options.secrets);
    scrub.push(...resolved.secrets);
    let toSend = resolved.request;
    // a redirect is followed only where every secret the request carries may go (checked before each hop)
    const checkRedirect = options.fetch?.checkRedirect;
    let fetchOptions: FetchPageOptions = {
      ...options.fetch,
      checkRedirect: (hop) => {
        assertRedirectKeepsSecrets(carried, hop.from, hop.to, hop.status, options.secrets);
        checkRedirect?.(hop);
      },
    };
    // the HTTP client options, their secrets (client certificate, AWS keys) filled in this copy only
    if (options.client) {
      const client = resolveClientSecrets(options.client, options.secrets);
      scrub.push(...client.secrets);
      fetchOptions = { ...fetchOptions, client: client.client };
    }
    if (options.auth) {
      const setup = fill(options.auth) as AuthSetup;
      const applied = await applyAuthentication(toSend, setup, {
        sessions: options.sessions,
        nowSeconds: options.nowSeconds,
        nonce: options.nonce,
        sendLogin: (login, format) => {
          assertSecretsBound(carried, login.url, options.secrets);
          return fetchPage(login, { ...fetchOptions, responseFormat: format });
        },
      });
      scrub.push(...applied.secrets);
      toSend = applied.request;
    }
    return await fetchPage(toSend, fetchOptions);
  } catch (err) {
    throw scrubError(err, scrub);
  }
}

/**
 * A page fetcher in the shape `runExtraction` expects, sending like the activity does (the second argument, the
 * configuration's `api.client`, wins over `options.client`).
 */
export function createRequestSender(
  options: SendRequestOptions,
): (request: RequestDescriptor, client?: HttpClientConfig, auth?: RequestAuth | null) => Promise<FetchPageResult> {
  // `auth` (an iteration's authentication; null: none) replaces the sender's when given
  return (request, client, auth) => {
    const withAuth = auth === undefined ? options : { ...options, auth: auth ?? undefined };
    return sendRequest(request, client ? { ...withAuth, client } : withAuth);
  };
}
