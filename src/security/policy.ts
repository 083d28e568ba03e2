/**
 * The worker's input policy: what a workflow input may name. Whoever can start a workflow on a task queue is not the
 * worker's operator, so every local path, URL, object and secret destination an input names is checked against
 * this, configured only on the worker (environment or plugin options). Plain data (it is posted to the page-loop
 * thread) and pure matching; the checks that touch the disk or the network are in `local-paths.ts` and `network.ts`.
 */
import { SapiInputForbiddenError } from '../errors';

/** The worker's input policy (docs/security.md: each setting and its default). */
export interface InputPolicy {
  /** `SAPI_LOCAL_ROOTS`: folders local sources and destinations must be under (absolute). Default none: no local path. */
  readonly localRoots: readonly string[];
  /**
   * `SAPI_ALLOWED_URLS`: URL prefixes (`https://api.example.com/v1/`) or hosts (`api.example.com`, `host:8443`,
   * `*.example.com`) HTTP(S) sources and extracted APIs must match. Absent: any URL whose addresses pass the
   * address rule.
   */
  readonly allowedUrls?: readonly string[];
  /** `SAPI_ALLOWED_NETWORKS`: CIDRs allowed although the address rule refuses them (a dev stack's loopback). */
  readonly allowedNetworks: readonly string[];
  /** `host:port` of the worker's own services (Storage API, object store, Temporal, metrics, `SAPI_INTERNAL_URLS`): always refused. */
  readonly internalOrigins: readonly string[];
  /** `SAPI_ALLOWED_OBJECT_PREFIXES`: `s3://bucket/prefix` the worker's own object-store keys may read or write. Default none. */
  readonly objectPrefixes: readonly string[];
}

/** A policy that allows nothing an input could name (the worker's default before its settings say more). */
export const CLOSED_POLICY: InputPolicy = Object.freeze({ localRoots: [], allowedNetworks: [], internalOrigins: [], objectPrefixes: [] });

/** Splits a comma-separated setting into its trimmed, non-empty entries. */
export function listSetting(value: string | null | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** The port a URL connects to (its own, or its scheme's). */
export function portOf(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
}

/** `host:port` of a `host:port` string or a URL (lower case, IPv6 without brackets), or undefined when it is neither. */
export function originKey(value: string): string | undefined {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
    const port = portOf(url);
    return port ? `${bareHost(url.hostname)}:${port}` : undefined;
  } catch {
    return undefined;
  }
}

/** A hostname without IPv6 brackets, lower case. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * Whether `hostname` (and `port`) match a host pattern: `api.example.com`, `api.example.com:8443`, `*.example.com`
 * (any subdomain, not the domain itself), `[::1]:8080`. A pattern without a port matches every port.
 */
export function hostMatches(pattern: string, hostname: string, port: string): boolean {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(pattern.trim().toLowerCase());
  if (!m) return false;
  const [, host, wantPort] = m;
  if (wantPort !== undefined && wantPort !== port) return false;
  const want = bareHost(host!);
  const have = bareHost(hostname);
  return want.startsWith('*.') ? have.endsWith(want.slice(1)) : have === want;
}

/** An allow-list entry is a URL prefix when it has a scheme, else a host pattern. */
function isPrefixEntry(entry: string): boolean {
  return /^https?:\/\//i.test(entry);
}

/** Whether the URL matches the allow-list (any entry), when there is one. */
export function urlAllowed(policy: InputPolicy, url: URL): boolean {
  if (!policy.allowedUrls) return true;
  return policy.allowedUrls.some((entry) => {
    if (!isPrefixEntry(entry)) return hostMatches(entry, url.hostname, portOf(url));
    let prefix: URL;
    try {
      prefix = new URL(entry);
    } catch {
      return false;
    }
    return (
      prefix.protocol === url.protocol &&
      bareHost(prefix.hostname) === bareHost(url.hostname) &&
      portOf(prefix) === portOf(url) &&
      url.pathname.startsWith(prefix.pathname)
    );
  });
}

/**
 * Whether a connection to `hostname:port` may be opened for an allow-listed URL (what a redirect may reach: the host
 * of some entry; the path prefix was checked on the URL the input named).
 */
export function hostAllowed(policy: InputPolicy, hostname: string, port: string): boolean {
  if (!policy.allowedUrls) return true;
  return policy.allowedUrls.some((entry) => {
    if (!isPrefixEntry(entry)) return hostMatches(entry, hostname, port);
    try {
      const prefix = new URL(entry);
      return bareHost(prefix.hostname) === bareHost(hostname) && portOf(prefix) === port;
    } catch {
      return false;
    }
  });
}

/** IP literals named by allow-list entries: an operator who lists `http://10.0.0.5:8080/` allows that address. */
export function allowListedAddresses(policy: InputPolicy): string[] {
  const out: string[] = [];
  for (const entry of policy.allowedUrls ?? []) {
    const key = originKey(entry);
    if (!key) continue;
    const host = key.slice(0, key.lastIndexOf(':'));
    if (/^[\d.]+$/.test(host) || host.includes(':')) out.push(host);
  }
  return out;
}

/** Whether `host:port` is one of the worker's own services (compared by name; `network.ts` compares addresses). */
export function isInternalOrigin(policy: InputPolicy, hostname: string, port: string): boolean {
  return policy.internalOrigins.includes(`${bareHost(hostname)}:${port}`);
}

/**
 * Checks an `s3://bucket/key` an input names against `SAPI_ALLOWED_OBJECT_PREFIXES`. Keys with `.`/`..` segments
 * are refused (some stores and proxies normalise them into another key).
 */
export function checkObjectUri(policy: InputPolicy, field: string, uri: string): void {
  const m = /^s3:\/\/([^/]+)\/(.*)$/i.exec(uri);
  if (!m || m[2] === '') throw new SapiInputForbiddenError(field, 'an s3:// object must be s3://bucket/key');
  if (m[2]!.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new SapiInputForbiddenError(field, 'an s3:// key must not hold "." or ".." segments');
  }
  const allowed = policy.objectPrefixes.some((prefix) => {
    const p = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(prefix);
    return p !== null && p[1] === m[1] && m[2]!.startsWith(p[2]!);
  });
  if (!allowed) {
    throw new SapiInputForbiddenError(
      field,
      policy.objectPrefixes.length === 0
        ? "s3:// objects with the worker's own keys are not allowed on this worker (SAPI_ALLOWED_OBJECT_PREFIXES is empty)"
        : 'the s3:// object is outside the prefixes the worker allows (SAPI_ALLOWED_OBJECT_PREFIXES)',
    );
  }
}

/** Problems of the policy's settings (variable: problem), for the configuration's one error. */
export function policyProblems(policy: InputPolicy): string[] {
  const problems: string[] = [];
  for (const root of policy.localRoots) if (!root.startsWith('/')) problems.push(`SAPI_LOCAL_ROOTS: ${JSON.stringify(root)} is not an absolute path`);
  for (const entry of policy.allowedUrls ?? []) {
    if (isPrefixEntry(entry)) {
      try {
        new URL(entry);
      } catch {
        problems.push(`SAPI_ALLOWED_URLS: ${JSON.stringify(entry)} is not a URL`);
      }
    } else if (!/^(\*\.)?[a-z0-9.-]+(:\d+)?$|^\[[0-9a-f:.]+\](:\d+)?$/i.test(entry)) {
      problems.push(`SAPI_ALLOWED_URLS: ${JSON.stringify(entry)} is neither an http(s) URL prefix nor a host (host, host:port, *.domain)`);
    }
  }
  for (const cidr of policy.allowedNetworks)
    if (!/^[0-9a-f:.]+(\/\d{1,3})?$/i.test(cidr)) problems.push(`SAPI_ALLOWED_NETWORKS: ${JSON.stringify(cidr)} is not an address or CIDR`);
  for (const prefix of policy.objectPrefixes) {
    if (!/^s3:\/\/[^/]+(\/.*)?$/i.test(prefix)) problems.push(`SAPI_ALLOWED_OBJECT_PREFIXES: ${JSON.stringify(prefix)} must look like s3://bucket/prefix/`);
  }
  return problems;
}
