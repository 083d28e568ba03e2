/** One request the emulator saw. */
export interface RequestLogEntry {
  method: string;
  /** URL path without the query string. */
  path: string;
  /** Raw query string without `?` ('' when none). */
  query: string;
  /** HTTP status sent; 0 when the connection was reset or the response dropped by a fault. */
  status: number;
  /** When the request arrived (epoch ms). */
  time: number;
  durationMs: number;
  /** Fault action applied to this request, if any. */
  fault?: string;
}

/** A bounded, oldest-first request log; the array is exposed live on the handle. */
export class RequestLog {
  readonly entries: RequestLogEntry[] = [];
  constructor(private readonly limit: number) {}

  add(entry: RequestLogEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  clear(): void {
    this.entries.length = 0;
  }
}
