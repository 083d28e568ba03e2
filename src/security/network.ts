/**
 * The network half of the input policy: which addresses an input's URL may reach, checked on the resolved address of
 * **every connection** (so DNS rebinding and redirects cannot reach what the URL could not), and undici agents that
 * enforce it. NOT workflow-safe (node:net, node:dns, undici).
 *
 * Refused by default: loopback, private (RFC 1918, unique local), link-local (169.254.0.0/16 holds the clouds'
 * metadata services), carrier-grade NAT, multicast, reserved and documentation ranges, and the worker's own
 * services; `SAPI_ALLOWED_NETWORKS` opens ranges (a dev stack opens loopback), an allow-list entry naming an IP
 * literal opens that address.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import { undici } from '../undici-parts';
import { SapiInputForbiddenError } from '../errors';
import { allowListedAddresses, bareHost, hostAllowed, isInternalOrigin, portOf, urlAllowed, type InputPolicy } from './policy';

/** Ranges no input may reach unless the worker allows them: [address, prefix, what it is]. */
const REFUSED_RANGES: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b::', 96, 'NAT64'],
  ['100::', 64, 'discard'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
];

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** `::ffff:1.2.3.4` (and its hex form) as the IPv4 address it is. */
export function normalizeAddress(address: string): string {
  const bare = bareHost(address);
  const mapped = /^::ffff:(?:0:)?(.+)$/i.exec(bare);
  if (!mapped) return bare;
  const rest = mapped[1]!;
  if (isIP(rest) === 4) return rest;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(rest);
  if (!hex) return bare;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    const normalized = normalizeAddress(address!);
    if (!isIP(normalized)) continue;
    if (prefix === undefined) list.addAddress(normalized, familyOf(normalized));
    else list.addSubnet(normalized, Number(prefix), familyOf(normalized));
  }
  return list;
}

/** The compiled address rule of a policy (cached per policy object). */
interface AddressRule {
  allowed: BlockList;
  /** Loopback and unspecified addresses stand for "this host": an internal service on one of them is on all. */
  internalPorts: Set<string>;
  internalAddresses: Set<string>;
}

const rules = new WeakMap<InputPolicy, AddressRule>();
const LOCAL_NAMES = new Set(['localhost', '0.0.0.0', '::', '::1']);

function ruleOf(policy: InputPolicy): AddressRule {
  let rule = rules.get(policy);
  if (!rule) {
    const internalPorts = new Set<string>();
    const internalAddresses = new Set<string>();
    for (const origin of policy.internalOrigins) {
      const at = origin.lastIndexOf(':');
      const host = normalizeAddress(origin.slice(0, at));
      const port = origin.slice(at + 1);
      if (LOCAL_NAMES.has(host) || host.startsWith('127.')) internalPorts.add(port);
      else if (isIP(host)) internalAddresses.add(`${host}:${port}`);
    }
    rule = { allowed: blockListOf([...policy.allowedNetworks, ...allowListedAddresses(policy)]), internalPorts, internalAddresses };
    rules.set(policy, rule);
  }
  return rule;
}

/** What refuses a connection to `address:port` (a reason), or undefined when the policy allows it. */
export function addressProblem(policy: InputPolicy, address: string, port: string): string | undefined {
  const ip = normalizeAddress(address);
  if (!isIP(ip)) return 'it did not resolve to an IP address';
  const rule = ruleOf(policy);
  const family = familyOf(ip);
  const refused = REFUSED_RANGES.find(([net, prefix]) => familyOf(net) === family && subnetHas(net, prefix, ip));
  if (rule.internalAddresses.has(`${ip}:${port}`) || (refused && (refused[2] === 'loopback' || refused[2] === 'unspecified') && rule.internalPorts.has(port))) {
    return "it is one of the worker's own services";
  }
  if (refused && !rule.allowed.check(ip, family)) return `it resolves to a ${refused[2]} address (allow networks with SAPI_ALLOWED_NETWORKS)`;
  return undefined;
}

const subnets = new Map<string, BlockList>();
function subnetHas(net: string, prefix: number, ip: string): boolean {
  const key = `${net}/${prefix}`;
  let list = subnets.get(key);
  if (!list) {
    list = new BlockList();
    list.addSubnet(net, prefix, familyOf(net));
    subnets.set(key, list);
  }
  return list.check(ip, familyOf(ip));
}

/**
 * Checks a URL an input names before anything is sent: http(s) only, on the allow-list when there is one, not one of
 * the worker's own services, and (for an IP literal) an address the rule allows. Names are checked again on every
 * connection ({@link guardedAgent}); {@link checkUrlResolved} also resolves them now, to fail before a run starts.
 */
export function checkUrl(policy: InputPolicy, field: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SapiInputForbiddenError(field, 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SapiInputForbiddenError(field, 'only http:// and https:// URLs are fetched');
  const port = portOf(url);
  if (isInternalOrigin(policy, url.hostname, port)) throw new SapiInputForbiddenError(field, "the URL is one of the worker's own services");
  if (!urlAllowed(policy, url)) throw new SapiInputForbiddenError(field, "the URL is not on the worker's allow-list (SAPI_ALLOWED_URLS)");
  const host = bareHost(url.hostname);
  if (isIP(normalizeAddress(host))) {
    const problem = addressProblem(policy, host, port);
    if (problem) throw new SapiInputForbiddenError(field, `the URL is refused: ${problem}`);
  }
  return url;
}

/** {@link checkUrl}, then every address the host resolves to now (a name of an internal address fails here, before any run). */
export async function checkUrlResolved(policy: InputPolicy, field: string, raw: string): Promise<URL> {
  const url = checkUrl(policy, field, raw);
  const host = bareHost(url.hostname);
  if (isIP(normalizeAddress(host))) return url;
  const addresses = await new Promise<LookupAddress[]>((resolve) => dnsLookup(host, { all: true }, (err, found) => resolve(err ? [] : found)));
  // a name that does not resolve fails when it is fetched, with the network's own error
  for (const { address } of addresses) {
    const problem = addressProblem(policy, address, portOf(url));
    if (problem) throw new SapiInputForbiddenError(field, `the URL is refused: ${problem}`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici connector that refuses, before any byte is sent, a connection to a host the allow-list does not name,
 * to one of the worker's own services, or to an address the rule refuses: IP literals are checked before connecting,
 * names in the DNS lookup (every address it returns), and the socket's remote address once connected.
 */
function guardedConnector(policy: InputPolicy, field: string, options: buildConnector.BuildOptions = {}): buildConnector.connector {
  const lookup = (port: string) => (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback) =>
    dnsLookup(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const { address } of addresses) {
        const problem = addressProblem(policy, address, port);
        if (problem) return callback(new SapiInputForbiddenError(field, `the URL is refused: ${problem}`), []);
      }
      if (lookupOptions.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  const connectors = new Map<string, buildConnector.connector>();
  return (opts, callback) => {
    const host = bareHost(opts.hostname);
    const port = String(opts.port || (opts.protocol === 'https:' ? 443 : 80));
    const refuse = (rule: string) => callback(new SapiInputForbiddenError(field, rule), null);
    if (isInternalOrigin(policy, host, port)) return refuse("the URL is one of the worker's own services");
    if (!hostAllowed(policy, host, port)) return refuse("the URL (or a redirect) leads to a host that is not on the worker's allow-list (SAPI_ALLOWED_URLS)");
    if (isIP(normalizeAddress(host))) {
      const problem = addressProblem(policy, host, port);
      if (problem) return refuse(`the URL is refused: ${problem}`);
    }
    let connect = connectors.get(port);
    if (!connect) connectors.set(port, (connect = undici.buildConnector({ ...options, lookup: lookup(port) } as buildConnector.BuildOptions)));
    connect(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('no socket'), null);
      const problem = socket.remoteAddress ? addressProblem(policy, socket.remoteAddress, port) : undefined;
      if (problem) {
        socket.destroy();
        return refuse(`the URL is refused: ${problem}`);
      }
      callback(null, socket);
    });
  };
}

/** An undici `Agent` whose every connection goes through {@link guardedConnector}. */
export function guardedAgent(policy: InputPolicy, field: string, options: Agent.Options & { connectOptions?: buildConnector.BuildOptions } = {}): Dispatcher {
  const { connectOptions, ...agentOptions } = options;
  return new undici.Agent({ ...agentOptions, connect: guardedConnector(policy, field, connectOptions) });
}

/** The policy refusal in an error's cause chain (undici and our wrappers may wrap it), if any. */
export function forbiddenCause(err: unknown): SapiInputForbiddenError | undefined {
  for (let current = err, depth = 0; current && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof SapiInputForbiddenError) return current;
  }
  return undefined;
}
