// Where and how the worker and the CLI reach Temporal: the standard environment configuration of the Temporal SDKs
// and CLI (`@temporalio/envconfig`), so a profile made with `temporal config set` works here unchanged.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { credentials as grpcCredentials } from '@grpc/grpc-js';
import type { ConnectionOptions } from '@temporalio/client';
import { loadClientConfigProfile, toClientOptions, type ClientConfigProfile, type ClientConfigTLS, type ConfigDataSource } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';

/** Default Temporal frontend address: the dev server (`sapi-temporal dev`, `temporal server start-dev`). */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
/** Default Temporal namespace. */
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/**
 * Environment variables `@temporalio/envconfig` reads, besides `TEMPORAL_GRPC_META_*` (gRPC headers) and the
 * variables that locate the default config file (`HOME`, `XDG_CONFIG_HOME`, `APPDATA`).
 */
export const TEMPORAL_CONNECTION_VARIABLES = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
  'TEMPORAL_PROFILE',
  'TEMPORAL_CONFIG_FILE',
] as const;

const CONFIG_DIR_VARIABLES = ['HOME', 'XDG_CONFIG_HOME', 'APPDATA'];

/**
 * How to reach Temporal, as plain data: certificates are file paths or PEM text, read when connecting (a rotated
 * certificate is picked up by the next connection).
 */
export interface TemporalConnectionSettings {
  /** `host:port` of the frontend. Default {@link DEFAULT_TEMPORAL_ADDRESS}. */
  address: string;
  /** Default {@link DEFAULT_TEMPORAL_NAMESPACE}. */
  namespace: string;
  /** Sent as `Authorization: Bearer …`; turns TLS on unless TLS is explicitly disabled. */
  apiKey?: string | undefined;
  /** TLS (server CA, client certificate pair for mTLS, server name); `disabled: true` forces plain text. */
  tls?: ClientConfigTLS | undefined;
  /** Extra gRPC headers (`TEMPORAL_GRPC_META_<NAME>`, `grpc_meta` in a profile). */
  grpcMeta?: Record<string, string> | undefined;
  /** The config-file profile these settings came from, when one was named (`TEMPORAL_PROFILE`). */
  profile?: string | undefined;
  /**
   * Accept a server certificate issued for another name (`TEMPORAL_TLS_DISABLE_HOST_VERIFICATION=true`; the CA is
   * still checked). Clients only: the worker's core connection has no such option and refuses it.
   */
  disableHostVerification?: boolean | undefined;
}

/** Options for both kinds of connection, from one {@link TemporalConnectionSettings}. */
export interface TemporalConnectionOptions {
  namespace: string;
  /** For `NativeConnection.connect` (the worker). */
  native: NativeConnectionOptions;
  /** For `Connection.connect` (clients: the CLI, the demo). */
  client: ConnectionOptions;
}

/**
 * The Temporal connection settings from `env`, as `@temporalio/envconfig` resolves them: the profile
 * `TEMPORAL_PROFILE` (default `default`) of the TOML file `TEMPORAL_CONFIG_FILE` (default
 * `~/.config/temporalio/temporal.toml`; a missing default file is no error, a missing named one is), then `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS`, `TEMPORAL_TLS_*` and `TEMPORAL_GRPC_META_*` over it, then the defaults
 * (`localhost:7233`, namespace `default`). Throws an `invalid configuration` error naming the variable or file.
 */
export function loadTemporalConnection(env: NodeJS.ProcessEnv = process.env): TemporalConnectionSettings {
  const vars = definedVariables(env);
  const file = vars.TEMPORAL_CONFIG_FILE ?? 'the default config file (~/.config/temporalio/temporal.toml)';
  // a file named on purpose must exist (only the default one may be missing): say so, not "not a profile of" it
  if (vars.TEMPORAL_CONFIG_FILE !== undefined && !existsSync(vars.TEMPORAL_CONFIG_FILE)) {
    throw new Error(
      `invalid configuration: config file ${vars.TEMPORAL_CONFIG_FILE} not found (TEMPORAL_CONFIG_FILE, --config-file); point it at your temporal.toml or unset it`,
    );
  }
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: vars });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const name = vars.TEMPORAL_PROFILE ?? '';
    const defaultFile = vars.TEMPORAL_CONFIG_FILE === undefined ? defaultConfigFile(vars) : undefined;
    const hint = !/not found in config data/.test(reason)
      ? `cannot read the Temporal config file ${file}: ${reason}`
      : defaultFile !== undefined && !existsSync(defaultFile)
        ? `profile ${name} not found: there is no config file ${defaultFile} (TEMPORAL_PROFILE, --profile); create it with \`temporal config set --profile ${name} …\` or name the file with --config-file`
        : `profile ${name} not found in ${file} (TEMPORAL_PROFILE, --profile); add [profile.${name}] to it or name another profile`;
    throw new Error(`invalid configuration: ${hint}`, { cause: err });
  }
  const tls = profile.tls;
  if (tls && !tls.disabled && Boolean(tls.clientCert) !== Boolean(tls.clientKey)) {
    const [has, lacks] = tls.clientCert
      ? ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH']
      : ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_CERT_PATH'];
    throw new Error(`invalid configuration: mTLS needs both a client certificate and its key: ${has} (or its profile key) is set, ${lacks} is not`);
  }
  return withoutUndefined({
    address: profile.address ?? DEFAULT_TEMPORAL_ADDRESS,
    namespace: profile.namespace ?? DEFAULT_TEMPORAL_NAMESPACE,
    apiKey: profile.apiKey,
    tls,
    grpcMeta: profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? profile.grpcMeta : undefined,
    profile: vars.TEMPORAL_PROFILE,
    disableHostVerification: /^(true|1)$/i.test(vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION ?? '') ? true : undefined,
  });
}

/**
 * Connection options for the worker (`native`) and for clients (`client`), reading the certificate files now.
 * An API key turns TLS on (Temporal Cloud); so does any TLS setting; `TEMPORAL_TLS=false` turns it off.
 */
export function temporalConnectionOptions(settings: TemporalConnectionSettings): TemporalConnectionOptions {
  let options: NativeConnectionOptions;
  try {
    ({ connectionOptions: options } = toClientOptions({
      address: settings.address,
      namespace: settings.namespace,
      apiKey: settings.apiKey,
      tls: settings.tls,
      grpcMeta: settings.grpcMeta,
    }));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`cannot read a Temporal TLS file (${tlsPaths(settings.tls)}): ${reason}`, { cause: err });
  }
  const common = withoutUndefined({ address: settings.address, apiKey: options.apiKey, tls: options.tls, metadata: options.metadata });
  const tlsOn =
    options.tls === true || (typeof options.tls === 'object' && options.tls !== null) || (options.tls === undefined && options.apiKey !== undefined);
  const client = settings.disableHostVerification && tlsOn ? withoutHostVerification(common) : { ...common };
  return { namespace: settings.namespace, native: { ...common }, client };
}

/**
 * Client options that check the server's certificate against the CA but not its name: the SDK has no such TLS
 * option, so the gRPC credentials are made here (and the API key goes as the header it would have become).
 */
function withoutHostVerification(options: {
  address: string;
  apiKey?: unknown;
  tls?: NativeConnectionOptions['tls'];
  metadata?: ConnectionOptions['metadata'];
}): ConnectionOptions {
  const tls = typeof options.tls === 'object' && options.tls !== null ? options.tls : {};
  const bytes = (value: string | Uint8Array | undefined) =>
    value === undefined ? undefined : typeof value === 'string' ? Buffer.from(value) : Buffer.from(value);
  const credentials = grpcCredentials.createSsl(bytes(tls.serverRootCACertificate), bytes(tls.clientCertPair?.key), bytes(tls.clientCertPair?.crt), {
    checkServerIdentity: () => undefined,
  });
  const metadata = { ...options.metadata, ...(typeof options.apiKey === 'string' ? { Authorization: `Bearer ${options.apiKey}` } : {}) };
  return withoutUndefined({
    address: options.address,
    credentials,
    metadata: Object.keys(metadata).length ? metadata : undefined,
    channelArgs: tls.serverNameOverride
      ? { 'grpc.ssl_target_name_override': tls.serverNameOverride, 'grpc.default_authority': tls.serverNameOverride }
      : undefined,
  });
}

/** How a connection is secured, for messages: `TLS`, `mTLS`, `TLS, API key`, or `plain text`. */
export function describeTemporalSecurity(settings: TemporalConnectionSettings): string {
  const tlsOn = settings.tls ? !settings.tls.disabled : settings.apiKey !== undefined;
  const parts = [tlsOn ? (settings.tls?.clientCert ? 'mTLS' : 'TLS') : 'plain text'];
  if (settings.apiKey !== undefined) parts.push('API key');
  if (settings.profile) parts.push(`profile ${settings.profile}`);
  return parts.join(', ');
}

/** Where envconfig looks for the config file on Linux and macOS-like setups: `$XDG_CONFIG_HOME` or `~/.config`, then `temporalio/temporal.toml`. */
function defaultConfigFile(vars: Record<string, string>): string | undefined {
  const base = vars.XDG_CONFIG_HOME ?? (vars.HOME === undefined ? undefined : join(vars.HOME, '.config'));
  return base === undefined || process.platform === 'win32' || process.platform === 'darwin' ? undefined : join(base, 'temporalio', 'temporal.toml');
}

/** The variables of `env` that envconfig reads, without undefined values (its overrides are `Record<string, string>`). */
function definedVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    const relevant = key.startsWith('TEMPORAL_') || CONFIG_DIR_VARIABLES.includes(key);
    if (relevant && value !== undefined) vars[key] = value;
  }
  return vars;
}

function tlsPaths(tls: ClientConfigTLS | undefined): string {
  const sources: [string, ConfigDataSource | undefined][] = [
    ['server CA', tls?.serverCACert],
    ['client cert', tls?.clientCert],
    ['client key', tls?.clientKey],
  ];
  const paths = sources.flatMap(([name, source]) => (source && 'path' in source ? [`${name} ${source.path}`] : []));
  return paths.length ? paths.join(', ') : 'inline data';
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as T;
}
