import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';

/**
 * A tiny persistent document store: every change is one appended JSON line, replayed (and compacted) at open.
 * Synchronous appends keep the order of changes equal to the order of calls; documents are small (files, buckets,
 * jobs), so the log stays cheap. Without a path the documents live in memory only (the emulator's memory store).
 */
export class DocLog {
  private readonly docs = new Map<string, Map<string, unknown>>();
  private fd: number | undefined;
  private closed = false;

  constructor(private readonly path: string | undefined) {
    if (path === undefined) return;
    if (existsSync(path)) {
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        let entry: { k: string; id: string; d?: unknown; del?: boolean };
        try {
          entry = JSON.parse(line);
        } catch {
          continue; // a line cut short by a crash: the change it described was never acknowledged
        }
        if (entry.del) this.kind(entry.k).delete(entry.id);
        else this.kind(entry.k).set(entry.id, entry.d);
      }
    }
    const compacted: string[] = [];
    for (const [k, docs] of this.docs) for (const [id, d] of docs) compacted.push(JSON.stringify({ k, id, d }));
    writeFileSync(`${path}.tmp`, compacted.length ? `${compacted.join('\n')}\n` : '');
    renameSync(`${path}.tmp`, path);
    this.fd = openSync(path, 'a');
  }

  private kind(kind: string): Map<string, unknown> {
    let docs = this.docs.get(kind);
    if (!docs) {
      docs = new Map();
      this.docs.set(kind, docs);
    }
    return docs;
  }

  all<T>(kind: string): T[] {
    return [...this.kind(kind).values()] as T[];
  }

  get<T>(kind: string, id: string | number): T | undefined {
    return this.kind(kind).get(String(id)) as T | undefined;
  }

  put<T>(kind: string, id: string | number, doc: T): void {
    this.kind(kind).set(String(id), doc);
    this.append({ k: kind, id: String(id), d: doc });
  }

  delete(kind: string, id: string | number): void {
    if (!this.kind(kind).delete(String(id))) return;
    this.append({ k: kind, id: String(id), del: true });
  }

  private append(entry: object): void {
    if (this.closed) throw new Error(`state log is closed [path=${this.path ?? '(memory)'}]`);
    if (this.fd !== undefined) writeSync(this.fd, `${JSON.stringify(entry)}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.closed = true;
  }
}
