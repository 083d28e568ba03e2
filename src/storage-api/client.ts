/**
 * The Storage API client: one method per endpoint we use, one input object each, typed results validated with
 * zod. Transport, timeouts and retries live in `http.ts` / `retry-policy.ts`; the calls, by resource, in
 * `file-calls.ts`, `table-calls.ts` (buckets and tables) and `job-calls.ts`; this file builds the transport once,
 * discovers the importer and puts the groups together.
 */
import { type Dispatcher } from 'undici';
import { SapiInvalidInputError, SapiInvalidResponseError } from '../errors';
import { type CallContext, type CallOptions, seg } from './calls';
import { fileCalls, type FileCalls } from './file-calls';
import { createDefaultDispatcher, createHttpTransport, DEFAULT_TIMEOUTS, type HttpTimeouts, type HttpTransport, type HttpTransportOptions } from './http';
import { jobCalls, type JobCalls } from './job-calls';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy';
import { indexSchema, tokenSchema, type StorageIndex, type TokenInfo } from './schemas';
import { tableCalls, type TableCalls } from './table-calls';

export { type CallOptions, type MarkedCallOptions } from './calls';
export { IMPORTER_MAX_BYTES, type GetFileInput, type ListFilesInput, type PrepareFileInput, type UploadViaImporterInput } from './file-calls';
export { type ListJobsInput } from './job-calls';
export {
  type ColumnDefinitionInput,
  type CreateBucketInput,
  type CreateTableAsyncInput,
  type CreateTableDefinitionInput,
  type ExportTableAsyncInput,
  type LoadTableAsyncInput,
  type MetadataPair,
  type PreviewTableInput,
  type SetTableMetadataInput,
  type TablePreview,
  type WhereFilter,
  PREVIEW_MAX_ROWS,
} from './table-calls';

export interface StorageClientOptions {
  /** Base URL of the service, e.g. `https://connection.keboola.com` (no `/v2/storage`). */
  url: string;
  /** Storage API token, sent as `X-StorageApi-Token`. */
  token: string;
  /** Dev branch: files, buckets and tables go through `/v2/storage/branch/{branchId}/…` (jobs never do). */
  branchId?: string | number;
  /** Sent as `X-KBC-RunId` to group the calls in the service's events. */
  runId?: string;
  /** Importer URL; discovered from the index (`services[id=import]`) when absent. */
  importUrl?: string;
  /** Per-exchange timeouts. Defaults {@link DEFAULT_TIMEOUTS}. */
  timeouts?: Partial<HttpTimeouts>;
  /** Retry policy. Defaults {@link DEFAULT_RETRY_POLICY}. */
  retry?: Partial<RetryPolicy>;
  /** undici dispatcher to use (a `Pool`/`Agent`); by default an `Agent` owned (and closed) by the client. */
  dispatcher?: Dispatcher;
  /** Sockets per origin of the default agent. Default {@link DEFAULT_CONNECTIONS_PER_ORIGIN}. */
  connections?: number;
  /** Called before each retry (logs, metrics, tests). */
  onRetry?: HttpTransportOptions['onRetry'];
  /** The end of the time each request has, retries included (the activity attempt's); default: none. */
  deadline?: () => number | undefined;
}

export interface StorageClient extends FileCalls, TableCalls, JobCalls {
  /** Base URL as configured (without a trailing slash). */
  readonly url: string;
  readonly branchId?: string;
  /** `GET /v2/storage/tokens/verify`. */
  verifyToken(input?: CallOptions): Promise<TokenInfo>;
  /** `GET /v2/storage` (the index). */
  getIndex(input?: CallOptions): Promise<StorageIndex>;
  /** The importer URL: the option, or `services[id=import].url` from the index (cached). */
  getImportUrl(input?: CallOptions): Promise<string>;
  /** Closes the default dispatcher (a dispatcher passed in stays open). */
  close(): Promise<void>;
}

/** Creates a Storage API client. Settings are merged with the exported defaults once and frozen. */
export function createStorageClient(options: StorageClientOptions): StorageClient {
  if (!options.url || !/^https?:\/\//i.test(options.url)) {
    throw new SapiInvalidInputError(`storage url must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  }
  if (!options.token) throw new SapiInvalidInputError('storage token is required (set it in the connection settings)');
  const timeouts: HttpTimeouts = Object.freeze({ ...DEFAULT_TIMEOUTS, ...options.timeouts });
  const retry: RetryPolicy = Object.freeze({ ...DEFAULT_RETRY_POLICY, ...options.retry });
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createDefaultDispatcher({ connectMs: timeouts.connectMs, connections: options.connections });
  const http: HttpTransport = createHttpTransport({
    url: options.url,
    token: options.token,
    runId: options.runId,
    timeouts,
    retry,
    dispatcher,
    onRetry: options.onRetry,
    deadline: options.deadline,
  });
  const branchId = options.branchId === undefined ? undefined : String(options.branchId);
  const ctx: CallContext = {
    http,
    branchId,
    scoped: (rest) => (branchId !== undefined ? `/v2/storage/branch/${seg(branchId)}/${rest}` : `/v2/storage/${rest}`),
  };
  let importUrl: Promise<string> | undefined = options.importUrl ? Promise.resolve(options.importUrl.replace(/\/+$/, '')) : undefined;

  async function getIndex(input: CallOptions = {}): Promise<StorageIndex> {
    return (await http.request({ method: 'GET', path: '/v2/storage', schema: indexSchema, signal: input.signal })).data;
  }

  async function getImportUrl(input: CallOptions = {}): Promise<string> {
    if (!importUrl) {
      importUrl = getIndex(input).then((index) => {
        const svc = index.services.find((s) => s.id === 'import');
        if (!svc) {
          throw new SapiInvalidResponseError({
            request: { method: 'GET', path: '/v2/storage' },
            problem: `no importer in services (found: ${index.services.map((s) => s.id).join(', ') || 'none'}); set importUrl explicitly`,
          });
        }
        return svc.url.replace(/\/+$/, '');
      });
      // Do not cache a failure.
      importUrl.catch(() => (importUrl = undefined));
    }
    return importUrl;
  }

  const jobs = jobCalls(ctx, options.url);
  return {
    url: http.baseUrl,
    branchId,

    async verifyToken(input = {}) {
      return (await http.request({ method: 'GET', path: '/v2/storage/tokens/verify', schema: tokenSchema, signal: input.signal })).data;
    },

    getIndex,
    getImportUrl,
    ...fileCalls(ctx, getImportUrl),
    ...tableCalls(ctx, jobs),
    ...jobs,

    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}
