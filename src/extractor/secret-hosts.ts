/**
 * Secrets bound to their APIs: a worker variable `SAPI_SECRET_<NAME>` is sent only to the hosts its
 * `SAPI_SECRET_<NAME>_HOSTS` names (`api.crm.example`, `api.crm.example:8443`, `*.crm.example`, comma-separated). A
 * secret without that variable is sent nowhere: an extraction's configuration comes from whoever starts the
 * workflow, and without the binding any `baseUrl` (or a next-page URL an API answers) would receive it. Checked on
 * every request, before it is sent, and on every redirect before it is followed: a request that carries a secret is
 * not followed to a host the secret is not bound to (the redirect is refused, not followed without the secret: the
 * `Location` the first host wrote may hold the secret too, in its query). Activity side (not workflow code).
 */
import { SapiInputForbiddenError } from '../errors';
import { hostMatches, listSetting, portOf } from '../security/policy';
import { carriedNames, envReference, referencedNames, type SecretSource } from './secrets';

/** The variable that lists the hosts a secret may be sent to. */
function secretHostsVariable(name: string): string {
  return `${name}_HOSTS`;
}

/** The hosts `name` may be sent to on this worker (empty: none). */
function secretHosts(name: string, source: SecretSource): string[] {
  return listSetting(source.env[secretHostsVariable(name)]);
}

/**
 * Fails with `SAPI_INPUT_FORBIDDEN` when a secret referenced anywhere in `parts` (the request, its authentication,
 * its client settings) would go to `url` and its host list does not name that host. The message names the
 * reference and the rule, never a value.
 */
export function assertSecretsBound(parts: unknown, url: string, source: SecretSource): void {
  if (!source.bindHosts) return;
  // as written or percent-encoded: a secret in a query parameter rides in the request's URL encoded
  const names = carriedNames(parts);
  if (names.length === 0) return;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return; // not a URL: the request fails on its own, with no secret sent
  }
  for (const name of names) {
    if (name.endsWith('_HOSTS')) continue; // a host list is not a secret
    const hosts = secretHosts(name, source);
    if (hosts.some((pattern) => hostMatches(pattern, target.hostname, portOf(target)))) continue;
    throw new SapiInputForbiddenError(
      envReference(name),
      hosts.length === 0
        ? `the secret names no host it may be sent to: set ${secretHostsVariable(name)} on the worker (e.g. api.example.com)`
        : `the secret may only be sent to the hosts of ${secretHostsVariable(name)}, and this request goes elsewhere`,
    );
  }
}

/** Problems of a configuration's references on this worker: each secret must name its hosts (checked before any request). */
export function unboundSecrets(json: unknown, source: SecretSource): Array<{ path: string; message: string }> {
  if (!source.bindHosts) return [];
  return referencedNames(json)
    .filter((name) => !name.endsWith('_HOSTS') && secretHosts(name, source).length === 0)
    .map((name) => ({
      path: envReference(name),
      message: `the secret names no host it may be sent to: set ${secretHostsVariable(name)} on the worker (e.g. api.example.com)`,
    }));
}

/**
 * Fails with `SAPI_INPUT_FORBIDDEN` before a redirect is followed when the request carries a secret (referenced
 * anywhere in `parts`) and the redirect leads to a host the secret is not bound to. Without host binding (library
 * use, `bindHosts` off), a request carrying a secret is followed only on its own origin. The message names the
 * reference, the rule and both hosts, never a value (nor the new URL's query, which may hold one).
 */
export function assertRedirectKeepsSecrets(parts: unknown, from: URL, to: URL, status: number, source: SecretSource): void {
  const names = carriedNames(parts).filter((name) => !name.endsWith('_HOSTS'));
  for (const name of names) {
    const hosts = source.bindHosts ? secretHosts(name, source) : [];
    const allowed = source.bindHosts ? hosts.some((pattern) => hostMatches(pattern, to.hostname, portOf(to))) : to.origin === from.origin;
    if (allowed) continue;
    const bound = source.bindHosts ? `the hosts of ${secretHostsVariable(name)} (${hosts.join(', ')})` : `its own origin (${from.host})`;
    throw new SapiInputForbiddenError(
      envReference(name),
      `${from.host} answered HTTP ${status} redirecting a request that carries this secret to ${to.host}; the secret may only be sent to ${bound}, so the redirect was not followed (nothing was sent to ${to.host})`,
      { from: from.host, to: to.host, status },
    );
  }
}
