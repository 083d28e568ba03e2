/**
 * Azure Blob Storage clients from the service's SAS credentials (`absCredentials`), the expiry check and the mapping
 * of Azure errors to the error registry. The connection string names the blob endpoint, so no endpoint setting is
 * needed (Azurite's path-style `http://host:port/<account>` works as the real `https://<account>.blob.core.windows.net`).
 */
import type { ContainerClient, StoragePipelineOptions } from '@azure/storage-blob';
import { attemptBudgetMs, type Deadline } from '../http/deadline';
import { loadOptional } from '../optional-deps';
import { assertNotExpiring, whereOf } from './store-helpers';
import { SapiCredentialsExpiredError, SapiError, SapiErrorCode, SapiInvalidInputError, SapiTransferError } from '../errors';
import { DEFAULT_CREDENTIALS_MARGIN_MS } from './s3-client';

/** Azure credentials as the service issues them (`absUploadParams.absCredentials`, file detail `absCredentials`). */
export interface AbsCredentials {
  /** `BlobEndpoint=…;SharedAccessSignature=…`: a secret (never logged, sealed in history). */
  SASConnectionString: string;
  /** ISO 8601 with offset. */
  expiration: string;
}

/** Attempts the SDK makes per Azure call (its own retry of throttling/5xx/network). Default 4, like S3. */
const DEFAULT_ABS_MAX_TRIES = 4;

/** A container client authorised by the SAS of `credentials`. */
export function createContainerClient(credentials: AbsCredentials, container: string, options: StoragePipelineOptions = {}): ContainerClient {
  if (!/SharedAccessSignature=/i.test(credentials.SASConnectionString)) {
    throw new SapiInvalidInputError(`absCredentials.SASConnectionString has no SharedAccessSignature [container=${container}]`);
  }
  // loaded on first use (an optional peer dependency): a worker that never meets an Azure stack needs no SDK installed
  // and holds none (~250 modules, ~20 MB RSS); without it, SAPI_MISSING_DEPENDENCY names the install command
  const { BlobServiceClient } = loadOptional('@azure/storage-blob', 'azure');
  return BlobServiceClient.fromConnectionString(credentials.SASConnectionString, {
    retryOptions: { maxTries: DEFAULT_ABS_MAX_TRIES },
    ...options,
  }).getContainerClient(container);
}

/** Why {@link attemptSignal} aborted: the activity attempt's time is up. */
class AttemptDeadline extends Error {
  constructor() {
    super("the activity attempt's deadline came");
    this.name = 'AttemptDeadline';
  }
}

/**
 * A signal that aborts at the end of the activity attempt's budget (its deadline less the margin, see
 * `attemptBudgetMs`); undefined without a deadline. The Azure SDK retries throttling, 5xx and network errors itself
 * (up to {@link DEFAULT_ABS_MAX_TRIES} tries, waits of seconds to minutes between them) and has no hook to skip a
 * retry that would not fit, so its calls carry this signal: a wait or a try still running when the budget ends is
 * aborted, and {@link mapAbsError} makes that a retryable failure that names the deadline (Temporal's next attempt
 * starts with a budget of its own) instead of the SDK working on for an attempt already timed out.
 */
export function attemptSignal(deadline: Deadline | undefined, nowMs: number = Date.now()): AbortSignal | undefined {
  const budget = attemptBudgetMs(deadline?.(), nowMs);
  if (budget === undefined) return undefined;
  const controller = new AbortController();
  setTimeout(() => controller.abort(new AttemptDeadline()), budget).unref();
  return controller.signal;
}

/** The caller's signal and the attempt's, either aborting the call. */
export function withAttemptSignal(signal: AbortSignal | undefined, attempt: AbortSignal | undefined): AbortSignal | undefined {
  if (!attempt) return signal;
  return signal ? AbortSignal.any([signal, attempt]) : attempt;
}

/** Throws `SAPI_CREDENTIALS_EXPIRED` (retryable) when the SAS expires within `marginMs`. */
export function assertAbsCredentialsFresh(
  credentials: AbsCredentials | undefined,
  where: string,
  marginMs: number = DEFAULT_CREDENTIALS_MARGIN_MS,
  nowMs: number = Date.now(),
): void {
  assertNotExpiring(credentials?.expiration, where, marginMs, nowMs);
}

/** Status and Azure error code (`AuthenticationFailed`, `BlobNotFound`, …) of an SDK error. */
export function absErrorInfo(err: unknown): { code?: string; status?: number } {
  if (typeof err !== 'object' || err === null) return {};
  const e = err as { code?: unknown; statusCode?: unknown; details?: { errorCode?: unknown } };
  const code = typeof e.details?.errorCode === 'string' ? e.details.errorCode : typeof e.code === 'string' ? e.code : undefined;
  return { code, status: typeof e.statusCode === 'number' ? e.statusCode : undefined };
}

/**
 * Maps an error of an Azure call to the registry: 403 (SAS expired, rejected or lacking a permission) →
 * `SAPI_CREDENTIALS_EXPIRED`; `Md5Mismatch` → `SAPI_CHECKSUM_MISMATCH`; other 4xx → non-retryable transfer error;
 * everything else (5xx, network) → retryable. Our own errors and aborts pass through.
 */
export function mapAbsError(err: unknown, op: 'upload' | 'download', context: Record<string, string | number | undefined>, signal?: AbortSignal): unknown {
  if (err instanceof SapiError) return err;
  if (signal?.aborted && signal.reason instanceof AttemptDeadline) {
    return new SapiTransferError({
      code: op === 'upload' ? SapiErrorCode.UPLOAD_FAILED : SapiErrorCode.DOWNLOAD_FAILED,
      message: `${op} did not end before the activity attempt's deadline (the Azure SDK's tries and waits were stopped there)`,
      context,
      retryable: true,
      cause: err,
    });
  }
  if (signal?.aborted) return signal.reason ?? err;
  const { code, status } = absErrorInfo(err);
  const where = whereOf(op, context);
  if (status === 403) return new SapiCredentialsExpiredError({ where, serviceCode: code ?? 'AuthenticationFailed', cause: err });
  if (code === 'Md5Mismatch' || code === 'Crc64Mismatch') {
    return new SapiTransferError({
      code: SapiErrorCode.CHECKSUM_MISMATCH,
      message: `${op} failed: the store rejected the checksum`,
      context,
      serviceCode: code,
      status,
      cause: err,
    });
  }
  const notRetryable = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
  return new SapiTransferError({
    code: op === 'upload' ? SapiErrorCode.UPLOAD_FAILED : SapiErrorCode.DOWNLOAD_FAILED,
    message: `${op} failed${code || status ? ` (${[code, status].filter(Boolean).join(' ')})` : ''}`,
    context,
    retryable: !notRetryable,
    serviceCode: code,
    status,
    cause: err,
  });
}

/** Host suffix of blob URLs in the service's manifests. */
const ABS_URL = /^(?:azure|https):\/\/([^./]+)\.blob\.core\.windows\.net\/([^/]+)\/(.+)$/;

/**
 * Splits a manifest entry of an Azure file, `azure://<account>.blob.core.windows.net/<container>/<blob>` (the
 * form the service and its PHP client write; `https://` accepted too), into its parts.
 */
export function parseAbsUrl(url: string): { account: string; container: string; blobName: string } {
  const m = ABS_URL.exec(url);
  if (!m) throw new SapiInvalidInputError(`expected azure://<account>.blob.core.windows.net/<container>/<blob>, got ${JSON.stringify(url)}`);
  return { account: m[1] as string, container: m[2] as string, blobName: m[3] as string };
}

/** The manifest entry URL of a blob, as the service writes it. */
export function absUrl(account: string, container: string, blobName: string): string {
  return `azure://${account}.blob.core.windows.net/${container}/${blobName}`;
}
