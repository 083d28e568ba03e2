/**
 * `parameters.api.authentication`: the zod schema (the reference's rules and wording) and the normalization into
 * `AuthenticationConfig`. NOT workflow-safe (zod). Credentials stay as written: `${env:NAME}` references, filled by
 * the activity only when it sends a request (`./apply-auth`).
 */
import { z } from 'zod';
import type { ConfigIssue } from '../errors';
import type { AuthenticationConfig, JsonObject } from '../types';

/** Authentication types this extractor implements. */
const SUPPORTED_AUTH_TYPES = ['query', 'url.query', 'basic', 'login', 'oauth10', 'oauth20', 'oauth20.login'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === '' || v === false || v === 0 || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/** Rules of the authentication object alone. */
export const authenticationSchema = z.looseObject({}, { error: "'api.authentication' must be an object with a 'type'." }).superRefine((auth, ctx) => {
  const issue = (message: string, path: PropertyKey[] = []) => ctx.addIssue({ code: 'custom', message, path });
  const type = auth.type;
  if (isEmpty(type)) return; // no type: no authentication, as the reference
  if (typeof type !== 'string' || !(SUPPORTED_AUTH_TYPES as readonly string[]).includes(type)) {
    issue(`Unknown authorization type '${typeof type === 'string' ? type : JSON.stringify(type)}'.`, ['type']);
    return;
  }
  if (type === 'query' || type === 'url.query') {
    if (isEmpty(auth.query) || !isObject(auth.query))
      issue("The query authentication method requires 'query' configuration in 'authentication' section.", ['query']);
  }
  if (type === 'login' || type === 'oauth20.login') {
    if (!isEmpty(auth.format) && auth.format !== 'json' && auth.format !== 'text') issue("'format' must be either 'json' or 'text'.", ['format']);
    const login = auth.loginRequest;
    if (isEmpty(login) || !isObject(login)) issue("'loginRequest' is not configured for Login authentication", ['loginRequest']);
    else {
      if (typeof login.endpoint !== 'string' || login.endpoint === '')
        issue('Request endpoint must be set for the Login authentication method.', ['loginRequest', 'endpoint']);
      if (
        login.method !== undefined &&
        login.method !== null &&
        !(typeof login.method === 'string' && ['GET', 'POST', 'FORM'].includes(login.method.toUpperCase()))
      ) {
        issue('The "method" property must be one of "GET", "POST", "FORM" (case-insensitive).', ['loginRequest', 'method']);
      }
      for (const key of ['params', 'headers'] as const) {
        if (!isEmpty(login[key]) && !isObject(login[key])) issue(`'loginRequest.${key}' must be an object.`, ['loginRequest', key]);
      }
    }
    const api = auth.apiRequest;
    if (!isEmpty(api) && !isObject(api)) issue("'apiRequest' must be an object with 'headers' and/or 'query'.", ['apiRequest']);
    const expires = auth.expires;
    const intLike = typeof expires === 'number' ? Number.isInteger(expires) : typeof expires === 'string' && /^[+-]?\d+$/.test(expires.trim());
    if (!isEmpty(expires) && !intLike && !(isObject(expires) && !isEmpty(expires.response))) {
      issue("The 'expires' attribute must be either an integer or an array with 'response' key containing a path in the response", ['expires']);
    }
  }
  if (type === 'oauth20' && !isEmpty(auth.format) && auth.format !== 'json' && auth.format !== 'text') {
    issue(`Unknown OAuth data format '${String(auth.format)}'.`, ['format']);
  }
  for (const key of ['headers', 'query'] as const) {
    if (type === 'oauth20' && !isEmpty(auth[key]) && !isObject(auth[key])) issue(`'authentication.${key}' must be an object.`, [key]);
  }
});

/**
 * Normalizes a validated authentication object, with the rules that need the rest of the configuration
 * (`config` attributes for `basic`, `authorization.oauth_api.credentials` for the OAuth types). `issues` collects
 * problems (paths from the configuration root).
 */
export function normalizeAuthentication(raw: unknown, attributes: JsonObject, authorization: unknown, issues: ConfigIssue[]): AuthenticationConfig | null {
  if (!isObject(raw) || isEmpty(raw.type)) return null;
  const type = (raw.type === 'url.query' ? 'query' : raw.type) as AuthenticationConfig['type'];
  if (type === 'basic') {
    if (isEmpty(attributes.username) && isEmpty(attributes['#username'])) {
      issues.push({ path: 'parameters.config.#username', message: "Missing the required '#username' (or 'username') attribute in config." });
    }
    if (isEmpty(attributes.password) && isEmpty(attributes['#password'])) {
      issues.push({ path: 'parameters.config.#password', message: "Missing the required '#password' attribute in config." });
    }
  }
  let oauth: JsonObject | null = null;
  if (type === 'oauth10' || type === 'oauth20' || type === 'oauth20.login') {
    const credentials = isObject(authorization) && isObject(authorization.oauth_api) ? authorization.oauth_api.credentials : undefined;
    if (!isObject(credentials) || isEmpty(credentials)) {
      issues.push({ path: 'authorization.oauth_api.credentials', message: 'OAuth API credentials not supplied in configuration.' });
    } else {
      for (const key of ['#data', 'appKey', '#appSecret']) {
        if (isEmpty(credentials[key])) {
          issues.push({
            path: `authorization.oauth_api.credentials.${key}`,
            message: `Missing '${key}' for OAuth ${type === 'oauth10' ? '1.0' : '2.0'} authorization.`,
          });
        }
      }
      oauth = credentials;
    }
  }
  return { type, settings: raw, oauth };
}
