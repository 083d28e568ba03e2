// Why Temporal cannot be reached, for the CLI's commands and the worker's start alike. gRPC says only "Failed to
// connect before the deadline", the worker's core a transport error; the cause (a name that does not resolve, a
// refused port, a certificate the CA did not sign, a name the certificate does not carry) is in their traces, out of
// reach. So we dial the address ourselves, as they would (DNS, TCP, TLS with the same CA, client pair and server
// name), and name what failed.
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { connect as connectTcp, isIP } from 'node:net';
import { checkServerIdentity, connect as connectTls, type PeerCertificate } from 'node:tls';
import type { ConfigDataSource } from '@temporalio/envconfig';
import type { TemporalConnectionSettings } from './temporal';

/** How long the probe waits for each step (ms). */
export const PROBE_TIMEOUT_MS = 5_000;

/** What kind of failure the probe found. */
export type ConnectionCause =
  | 'dns'
  | 'refused'
  | 'timeout'
  | 'tls-ca'
  | 'tls-hostname'
  | 'tls-expired'
  | 'tls-client-certificate'
  | 'tls-not-tls'
  | 'tls-required'
  | 'tls-other'
  | 'network';

/** A cause, and the one line that says it and what to change. */
export interface ConnectionDiagnosis {
  cause: ConnectionCause;
  message: string;
}

/** Certificate-chain errors (OpenSSL verify codes as Node reports them): the server's certificate is not signed by a trusted CA. */
const CA_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/**
 * The diagnosis of a failed DNS, TCP or TLS step from its error, in terms of the settings (which flag or variable
 * to change). Undefined when the error says nothing the probe recognizes.
 */
export function classifyConnectionError(
  err: unknown,
  settings: Pick<TemporalConnectionSettings, 'address' | 'tls' | 'apiKey'>,
): ConnectionDiagnosis | undefined {
  // duck-typed: Node's own errors may come from another realm (a test sandbox) than this module's Error
  if (typeof err !== 'object' || err === null || typeof (err as Error).message !== 'string') return undefined;
  const code = String((err as NodeJS.ErrnoException).code ?? '');
  // OpenSSL's messages carry its source file and line: keep the words (`tlsv13 alert certificate required`)
  const raw = (err as Error).message;
  const message = /SSL routines:[^:]*:([^:]+):/.exec(raw)?.[1] ?? raw;
  const reason = `${message}${code && !message.includes(code) ? ` (${code})` : ''}`;
  const host = splitAddress(settings.address).host;
  const ca = sourceName(settings.tls?.serverCACert);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
    return { cause: 'dns', message: `DNS: host ${host} not found (${code}); check the host of --address / TEMPORAL_ADDRESS` };
  }
  if (code === 'ECONNREFUSED')
    return {
      cause: 'refused',
      message: `connection refused at ${settings.address}: nothing listens there; check the port of --address / TEMPORAL_ADDRESS, or start the server`,
    };
  if (code === 'ETIMEDOUT' || code === 'PROBE_TIMEOUT')
    return { cause: 'timeout', message: `no answer from ${settings.address} within ${PROBE_TIMEOUT_MS / 1000} s (a firewall, or a wrong host)` };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return {
      cause: 'tls-hostname',
      message: `TLS: the server's certificate is not for the name connected to (${reason}); set --tls-server-name / TEMPORAL_TLS_SERVER_NAME to a name it carries`,
    };
  }
  if (CA_CODES.has(code)) {
    return {
      cause: 'tls-ca',
      message: `TLS: the server's certificate is not signed by a trusted CA (${reason}); ${ca ? `the CA given (${ca}) did not sign it: ` : ''}set --tls-ca-path / TEMPORAL_TLS_SERVER_CA_CERT_PATH to the server's CA`,
    };
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return { cause: 'tls-expired', message: `TLS: the server's certificate is not valid now (${reason})` };
  if (/certificate required|handshake failure|bad certificate|unknown ca|certificate unknown/i.test(reason)) {
    const pair = settings.tls?.clientCert
      ? `the client certificate ${sourceName(settings.tls.clientCert) ?? ''} was refused`
      : 'no client certificate was sent';
    return {
      cause: 'tls-client-certificate',
      message: `TLS: the server refused the handshake: it wants a client certificate (mTLS) and ${pair} (${reason}); set --tls-cert-path and --tls-key-path (TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH (mTLS))`,
    };
  }
  if (/wrong version number|packet length too long|disconnected before secure TLS|ECONNRESET/i.test(reason)) {
    return {
      cause: 'tls-not-tls',
      message: `TLS: the server at ${settings.address} does not speak TLS (${reason}); connect in plain text (--no-tls, TEMPORAL_TLS=false), or check the port`,
    };
  }
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || /certificate|ssl|tls/i.test(reason)) return { cause: 'tls-other', message: `TLS: ${reason}` };
  if (code.startsWith('E')) return { cause: 'network', message: `${reason} at ${settings.address}` };
  return undefined;
}

/**
 * Dials `settings.address` as gRPC would and says what fails first: DNS, TCP, then (with TLS on) the handshake with
 * the settings' CA, client pair and server name. Undefined when all of it works (the cause is beyond: a proxy, the
 * API key, a server that is not Temporal).
 */
export async function probeConnection(settings: TemporalConnectionSettings, timeoutMs: number = PROBE_TIMEOUT_MS): Promise<ConnectionDiagnosis | undefined> {
  const { host, port } = splitAddress(settings.address);
  try {
    if (isIP(host) === 0) await withTimeout(lookup(host), timeoutMs);
    if (tlsOn(settings)) {
      await tlsHandshake(settings, host, port, timeoutMs);
      return undefined;
    }
    return (await plainTextAnswers(host, port, timeoutMs))
      ? undefined
      : {
          cause: 'tls-required',
          message: `the server at ${settings.address} hangs up at once on plain text, as a TLS endpoint does (or a proxy with nothing behind it): connect with --tls (TEMPORAL_TLS=true), --tls-ca-path or --api-key (Temporal Cloud)`,
        };
  } catch (err) {
    return classifyConnectionError(err, settings) ?? { cause: 'network', message: String((err as Error | undefined)?.message ?? err) };
  }
}

function tlsOn(settings: TemporalConnectionSettings): boolean {
  return settings.tls ? !settings.tls.disabled : settings.apiKey !== undefined;
}

/** The HTTP/2 connection preface a gRPC client opens with. */
const HTTP2_PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

/**
 * Connects and sends the HTTP/2 preface: true when the server answers or keeps the connection open for a moment (a
 * plain-text gRPC server sends its SETTINGS), false when it hangs up at once (a TLS endpoint given plain text).
 */
function plainTextAnswers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((ok, fail) => {
    const socket = connectTcp({ host, port });
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('probe timed out'), { code: 'PROBE_TIMEOUT' })), timeoutMs);
    let connected = false;
    const settle = (answer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      ok(answer);
    };
    socket.once('connect', () => {
      connected = true;
      clearTimeout(timer);
      socket.write(HTTP2_PREFACE);
      setTimeout(() => settle(true), 500);
    });
    // a TLS endpoint may answer with an alert record (type 21) before it hangs up
    socket.once('data', (chunk: Buffer) => settle(chunk[0] !== 0x15));
    socket.once('close', () => (connected ? settle(false) : undefined));
    socket.once('error', (err) => {
      if (connected) return settle(false);
      clearTimeout(timer);
      fail(err);
    });
  });
}

function tlsHandshake(settings: TemporalConnectionSettings, host: string, port: number, timeoutMs: number): Promise<void> {
  const tls = settings.tls ?? {};
  const name = tls.serverName ?? host;
  return new Promise((ok, fail) => {
    const socket = connectTls({
      host,
      port,
      // an IP address as server name draws Node's DEP0123 warning: SNI only for names
      ...(isIP(name) === 0 ? { servername: name } : {}),
      ca: read(tls.serverCACert),
      cert: read(tls.clientCert),
      key: read(tls.clientKey),
      ALPNProtocols: ['h2'],
      checkServerIdentity: (_host: string, cert: PeerCertificate) => (settings.disableHostVerification ? undefined : checkServerIdentity(name, cert)),
    });
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('probe timed out'), { code: 'PROBE_TIMEOUT' })), timeoutMs);
    socket.once('secureConnect', () => {
      // TLS 1.3: a server that wants a client certificate says so after the handshake; give it a moment
      const settle = setTimeout(() => {
        clearTimeout(timer);
        socket.destroy();
        ok();
      }, 200);
      socket.once('error', (err) => {
        clearTimeout(settle);
        clearTimeout(timer);
        fail(err);
      });
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
  });
}

function read(source: ConfigDataSource | undefined): string | Buffer | undefined {
  if (source === undefined) return undefined;
  if ('path' in source) return readFileSync(source.path);
  return typeof source.data === 'string' ? source.data : Buffer.from(source.data);
}

function sourceName(source: ConfigDataSource | undefined): string | undefined {
  return source === undefined ? undefined : 'path' in source ? source.path : 'inline PEM';
}

/** `host:port`, `[::1]:port`; port 7233 when absent. */
export function splitAddress(address: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(address);
  if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2] ?? 7233) };
  const at = address.lastIndexOf(':');
  if (at === -1 || address.indexOf(':') !== at) return { host: address, port: 7233 };
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(Object.assign(new Error('probe timed out'), { code: 'PROBE_TIMEOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
