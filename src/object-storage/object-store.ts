/**
 * The one interface of object storage: every backend implements it (S3 with temporary credentials or the worker's
 * own keys, Azure Blob Storage with a SAS, Google Cloud Storage with an access token, a local folder, memory), and
 * transfers, extraction staging and run-state storage meet a backend only through it.
 *
 * An adapter maps these operations onto its store's API and its errors onto our registry (`SapiError` codes); the
 * generic parts — sliced upload and its manifest (`sliced-upload.ts`), whole and sliced download, in place or through
 * a work folder, with hashing (`download.ts`), the staging layout (`stage-store.ts`) — are written once over it.
 * What adapters share: `store-helpers.ts`. How to add a backend: docs/architecture.md.
 */
import { type Readable } from 'node:stream';
import { type SapiError } from '../errors';
import { type ByteSource } from './sources';

/** The service's name of a backend (`provider` of a file resource). */
export type StoreProvider = 'aws' | 'azure' | 'gcp';

/** What serves an {@link ObjectStore}: a backend of the service, or a store of the worker's own (staging, tests). */
type StoreKind = StoreProvider | 'local' | 'memory';

/** One answer of a ranged read. */
interface RangedRead {
  /** The bytes from the asked offset (or from 0 when `fromStart` is false). */
  body: Readable;
  /** Size of the whole object, when the answer says it. */
  total?: number;
  /**
   * True when `body` starts at the asked offset. A store that ignores the range answers the whole object
   * (`fromStart: false` for a start > 0): the reader then starts over.
   */
  fromStart: boolean;
}

/** A plain GET of a whole object (URL and headers, valid for the seconds asked), for the download threads. */
export interface PlainGet {
  url: string;
  headers: Record<string, string>;
  /** The error of an answer other than 200. */
  failure(status: number, body: string, errorCode?: string): SapiError;
}

/** A stored object we can read from an offset and measure. */
export interface ObjectReader {
  /** For messages: `s3://bucket/key`, `gs://…`, `azure container=…, blob=…`, a redacted URL. */
  label: string;
  /** The name ends in `.gz`. */
  gz: boolean;
  /** The bytes from `start`; a start at or past the end answers an empty body with `total: start`. */
  get(start: number, signal?: AbortSignal): Promise<RangedRead>;
  /** Size in bytes (undefined: the store does not say). */
  size(signal?: AbortSignal): Promise<number | undefined>;
  plainGet(validSeconds: number): Promise<PlainGet>;
}

/** What {@link ObjectStore.upload} needs: one object, from one source. */
export interface StoreUploadOptions {
  key: string;
  source: ByteSource;
  /** Part (block, chunk) size wish; each adapter fits it to its store's limits. */
  partSizeBytes?: number;
  /** Parts in flight for this object (a store whose protocol is sequential sends one at a time). */
  concurrency?: number;
  /** Compress on the fly (such an upload never resumes: the compressed bytes may differ on a second run). */
  gzip?: boolean;
  contentType?: string;
  /**
   * What {@link StoreUploadOptions.onProgress} reported last, from an earlier attempt (a heartbeat). Opaque to the
   * caller; the adapter checks it belongs to this object and ignores it otherwise.
   */
  resume?: unknown;
  /** The upload's resume point after each part the store confirmed (JSON, secrets sealed), and the bytes it holds. Keep it cheap. */
  onProgress?: (state: unknown, bytesSent: number) => void;
  signal?: AbortSignal;
}

/** What {@link ObjectStore.upload} stored. */
export interface StoredObject {
  /** Parts of the stored object. */
  parts: number;
  /** Parts sent by this call (the others an earlier attempt had sent). */
  partsUploaded: number;
  /** Bytes stored (compressed size with gzip). */
  bytes: number;
  /** Bytes read from the source. */
  sourceBytes: number;
  /** Hex sha256 of the source bytes. */
  sha256?: string;
  /** True when an earlier attempt's progress was used. */
  resumed: boolean;
}

/**
 * One bucket (Azure: container) of one backend, with the credentials the service gave for one file.
 *
 * Errors: every operation throws `SapiError`s of the registry: `SAPI_CREDENTIALS_EXPIRED` for credentials that no
 * longer work (the workflow prepares again), `SAPI_UPLOAD_FAILED` / `SAPI_DOWNLOAD_FAILED` (retryable or not),
 * `SAPI_CHECKSUM_MISMATCH`, `SAPI_INVALID_INPUT`.
 */
export interface ObjectStore {
  readonly provider: StoreKind;
  /** Bucket or container name; a local store's absolute folder. */
  readonly container: string;
  /** When the credentials expire (ISO 8601), if they say. */
  readonly expiration?: string;
  /**
   * The object's URL as a sliced file's manifest names it (`s3://`, `azure://`, `gs://`), what other components read
   * it by (a local store: the file's absolute path).
   */
  urlOf(key: string): string;
  /** The key of a manifest entry; throws (not retryable) for an entry outside this bucket. */
  keyOf(url: string): string;
  /** Reads one object: ranged GET, head (its size), a plain GET for the download threads. */
  reader(key: string): ObjectReader;
  /** Stores (or replaces) a small object in one request (a manifest, a staged page). Default content type: `application/octet-stream`. */
  put(key: string, body: Buffer | string, contentType?: string, signal?: AbortSignal): Promise<void>;
  /** Stores (or replaces) one object in bounded parts (multipart, blocks, a session), resumably (see {@link StoreUploadOptions.resume}). */
  upload(options: StoreUploadOptions): Promise<StoredObject>;
  /** Keys that start with `prefix`, sorted. */
  list(prefix: string, signal?: AbortSignal): Promise<string[]>;
  /** Deletes the objects (missing ones are ignored). */
  delete(keys: readonly string[], signal?: AbortSignal): Promise<void>;
  /**
   * Opens a new append-only log (replacing any object of that key): one write per `append`, read back as an object.
   * Only on stores that can append (a local folder); absent elsewhere.
   */
  openLog?(key: string): Promise<AppendLog>;
  /** Throws `SAPI_CREDENTIALS_EXPIRED` when the credentials expire within `marginMs`. */
  assertFresh(where: string, marginMs: number): void;
  /** Releases what the adapter opened itself (clients it made). */
  close(): void;
}

/** An append-only object (see {@link ObjectStore.openLog}). */
export interface AppendLog {
  /** Writes `text` at the end of the log, whole, before it resolves. */
  append(text: string): Promise<void>;
  close(): Promise<void>;
}

/** Seals the secrets of a resume point before it goes to history, opens them on a retry (see activities/sealing). */
export interface StateSealer {
  seal(value: unknown): string;
  open<T>(sealed: string): T;
}
