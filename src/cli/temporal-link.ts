// The CLI's connection to Temporal, replaceable: after an outage the CLI dials a fresh connection instead of
// waiting out the old channel's own reconnect backoff (which grows to minutes).
import { InterceptingCall, Metadata, status as GrpcStatus, type Interceptor } from '@grpc/grpc-js';
import type { InterceptingCallInterface } from '@grpc/grpc-js/build/src/client-interceptors';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { codecDataConverter } from '../codec';
import { activeTracing } from '../observability/tracing';
import { describeTemporalSecurity, temporalConnectionOptions } from '../config/temporal';
import type { CliSettings } from './context';
import { probeConnection, type ConnectionCause, type ConnectionDiagnosis } from './connection-probe';
import { CliError } from './failure';
import { retryWhileUnreachable, TEMPORAL_UNREACHABLE, type RetryWhileUnreachableOptions } from './reconnect';

/** Longest wait for one reconnection attempt (ms); the retry loop then waits and dials again. */
const RECONNECT_ATTEMPT_TIMEOUT_MS = 5_000;

/** gRPC attempts the client makes on UNAVAILABLE before the CLI's own loop takes over (and says so). */
const UNAVAILABLE_ATTEMPTS = 4;
const GRPC_UNAVAILABLE = 14;

/**
 * Connects to Temporal; an unreachable server is a one-line CLI error that says how to point at one. The client
 * itself retries an UNAVAILABLE call only briefly: longer outages are the CLI's to report and ride out.
 */
export async function connectTemporal(settings: CliSettings, connectTimeoutMs?: number): Promise<Connection> {
  // address, API key, TLS (CA, client certificate pair) and gRPC headers as envconfig resolved them
  const { client: options } = temporalConnectionOptions(settings);
  const cli = cliConnectionOptions();
  const connecting = Connection.connect({ ...options, ...cli, channelArgs: { ...options.channelArgs, ...cli.channelArgs }, connectTimeout: connectTimeoutMs });
  // gRPC's own error says only "Failed to connect before the deadline": dial beside it to learn why, and fail as soon
  // as the cause is certain (a name that does not resolve, a certificate refused) rather than at gRPC's deadline
  const probing = probeConnection(settings);
  const definite = probing.then((diagnosis) => (diagnosis && DEFINITE_CAUSES.has(diagnosis.cause) ? diagnosis : new Promise<never>(() => undefined)));
  try {
    const first = await Promise.race([connecting, definite]);
    if (first instanceof Connection) return first;
    // the connection lost the race: close it if it ever comes up
    connecting
      .then(
        (connection) => connection.close(),
        () => undefined,
      )
      .catch(() => undefined);
    throw unreachable(settings, first, undefined);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const diagnosis = await probing.catch(() => undefined);
    throw unreachable(settings, diagnosis, err);
  }
}

/** Causes the probe is sure of: connecting longer cannot help. */
const DEFINITE_CAUSES: ReadonlySet<ConnectionCause> = new Set([
  'dns',
  'refused',
  'tls-ca',
  'tls-hostname',
  'tls-expired',
  'tls-client-certificate',
  'tls-not-tls',
  'tls-required',
]);

/** `cannot reach Temporal at <address> (<security>): <cause>`; gRPC's reason and a checklist when the probe found none. */
function unreachable(settings: CliSettings, diagnosis: ConnectionDiagnosis | undefined, err: unknown): CliError {
  const reason = err instanceof Error ? err.message : String(err);
  const why = diagnosis ? diagnosis.message : `${reason} (${unreachableHint(settings)})`;
  return new CliError(TEMPORAL_UNREACHABLE, `cannot reach Temporal at ${settings.address} (${describeTemporalSecurity(settings)}): ${why}`, undefined, {
    cause: diagnosis ? undefined : err,
  });
}

/**
 * The CLI's gRPC settings: a channel of its own, brief retries of UNAVAILABLE, and a call that cannot be created
 * ends as CANCELLED instead of throwing. The client's retry interceptor re-dials a failed call from a timer; a call
 * abandoned mid-outage (a progress query when the CLI gives up or reconnects) then re-dials on a closed channel,
 * and the throw ("Channel has been shut down") would crash the process.
 */
export function cliConnectionOptions() {
  const retry = defaultGrpcRetryOptions();
  const interceptors: Interceptor[] = [
    makeGrpcRetryInterceptor({
      delayFunction: retry.delayFunction,
      retryableDecider: (attempt, status) => (status.code === GRPC_UNAVAILABLE ? attempt < UNAVAILABLE_ATTEMPTS : retry.retryableDecider(attempt, status)),
    }),
    (options, nextCall) => {
      try {
        return new InterceptingCall(nextCall(options));
      } catch (err) {
        return new InterceptingCall(cancelledCall(err instanceof Error ? err.message : String(err)));
      }
    },
  ];
  // a fresh connection gets a fresh channel, not the shared one still backing off from the outage
  return { channelArgs: { 'grpc.use_local_subchannel_pool': 1 }, interceptors };
}

/** A call that never reaches the channel: it ends with CANCELLED (`details`) as soon as it starts. */
function cancelledCall(details: string): InterceptingCallInterface {
  const ignore = () => undefined;
  return {
    start: (_metadata, listener) =>
      process.nextTick(() => {
        // no message, then the status, as a failed call delivers them (the retry interceptor expects both)
        listener?.onReceiveMessage?.(null);
        listener?.onReceiveStatus?.({ code: GrpcStatus.CANCELLED, details, metadata: new Metadata() });
      }),
    sendMessage: ignore,
    sendMessageWithContext: ignore,
    startRead: ignore,
    halfClose: ignore,
    cancelWithStatus: ignore,
    getPeer: () => '',
    getAuthContext: () => null,
  };
}

/** What to check when Temporal cannot be reached with `settings`. */
function unreachableHint(settings: CliSettings): string {
  const secured = settings.tls ? !settings.tls.disabled : settings.apiKey !== undefined;
  if (!secured)
    return 'set TEMPORAL_ADDRESS or --address; `sapi-temporal dev` runs a local server; a secured server needs TEMPORAL_TLS=true or a TEMPORAL_TLS_* setting';
  return "check TEMPORAL_ADDRESS or --address, TEMPORAL_TLS_SERVER_CA_CERT_PATH (the server's CA), TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH (mTLS), TEMPORAL_API_KEY, or the TEMPORAL_PROFILE in use";
}

/**
 * The CLI's client on `connection`: with the payload codec when keys are configured, so inputs leave encrypted; with
 * the SDK's OpenTelemetry plugin while a traced command runs (its start and updates carry the trace, its polling not).
 */
export function clientOf(settings: CliSettings, connection: Connection): Client {
  const tracing = activeTracing();
  return new Client({
    connection,
    namespace: settings.namespace,
    dataConverter: codecDataConverter(settings.codecKeys),
    ...(tracing ? { interceptors: { workflow: [tracing.quietPolling] }, plugins: [tracing.plugin] } : {}),
  });
}

/** A Temporal client whose connection is replaced after an outage; {@link retrying} runs calls through outages. */
export class TemporalLink {
  private constructor(
    readonly settings: CliSettings,
    private connection: Connection,
    private current: Client,
  ) {}

  /** Connects once; an unreachable server fails at once (nothing has started yet that could be lost). */
  static async open(settings: CliSettings): Promise<TemporalLink> {
    const connection = await connectTemporal(settings);
    return new TemporalLink(settings, connection, clientOf(settings, connection));
  }

  /** The client on the current connection (a new one after each reconnection: do not keep it). */
  get client(): Client {
    return this.current;
  }

  /** Dials a fresh connection and, once Temporal answers on it, closes the old one. */
  async reconnect(): Promise<void> {
    const connection = await connectTemporal(this.settings, RECONNECT_ATTEMPT_TIMEOUT_MS);
    const old = this.connection;
    this.connection = connection;
    this.current = clientOf(this.settings, connection);
    await old.close().catch(() => undefined);
  }

  /** Runs `call` with the current client, reconnecting and calling again while Temporal is unreachable. */
  retrying<T>(call: (client: Client) => Promise<T>, options: RetryWhileUnreachableOptions): Promise<T> {
    return retryWhileUnreachable(
      () => call(this.current),
      () => this.reconnect(),
      options,
    );
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}
