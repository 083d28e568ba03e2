/** What a download reports as it goes (its heartbeat) and what it returns, whichever way it runs. */

/** Progress of a download: heartbeat it, pass it back as `resume` (JSON, no secrets). */
export interface DownloadState {
  slices: number;
  /** Indexes (manifest order) of slices fully downloaded (to the work folder, or in place: see `inPlace`). */
  finishedSlices: number[];
  /** Bytes of finished slices as stored (compressed when gzipped). */
  bytesDownloaded: number;
  /**
   * Set when the slices are written at their offsets in `<destination>.partial` (no work folder): the stored file
   * they belong to and the slice sizes learned so far (null: not yet; every finished slice's and its predecessors'
   * are known). A retry keeps the finished slices only for the same file, when `<destination>.partial` still holds
   * them, and checks the sizes against the store's answers.
   */
  inPlace?: { source: string; sizes: Array<number | null> };
}

export interface DownloadFileResult {
  /** The local path, or the `s3://` destination. */
  path: string;
  /** Bytes written to the destination. */
  bytes: number;
  /** Hex sha256 of the bytes written. */
  sha256: string;
  /** Slices in the manifest (1 when unsliced). */
  slices: number;
  sliced: boolean;
  /** Slices fetched by this call (the others were complete on disk). */
  slicesDownloaded: number;
}
