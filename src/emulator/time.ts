/** Timestamps the way the real service writes them: `2017-02-14T10:34:45+0100` (UTC here: `+0000`). */
export function formatTimestamp(date: Date | number = Date.now()): string {
  const iso = new Date(date).toISOString();
  return `${iso.slice(0, 19)}+0000`;
}

/** ISO 8601 with a colon offset, as STS credentials' `Expiration`: `2017-02-14T22:34:45+00:00`. */
export function formatExpiration(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
