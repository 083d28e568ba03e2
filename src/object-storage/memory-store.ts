/**
 * The in-memory adapter of {@link ObjectStore}: objects in a map, for tests of the generic transfer and staging code
 * (and any caller that needs a store with no outside system). Its upload is a minimal part protocol over the shared
 * part pipeline (parts kept per key until completed, resumed from the reported parts), like a real adapter. It
 * counts what reached it (part requests, reads, parts in flight) and injects faults on demand, each once: a part that
 * fails, a part stored whose answer is lost, a read that ends early. `serve()` answers plain GETs of its objects
 * over HTTP on a free loopback port (the download threads need a URL).
 */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { SapiCredentialsExpiredError, SapiErrorCode, SapiTransferError } from '../errors';
import type { ObjectReader, ObjectStore, StoreUploadOptions, StoredObject } from './object-store';
import { runPartPipeline } from './part-pipeline';

/** The resume point of one upload: the parts the store confirmed. */
export interface MemoryUploadState {
  key: string;
  partSizeBytes: number;
  parts: { index: number; size: number; md5: string }[];
  bytesSent: number;
}

/** What goes wrong, once each (a fault fires once, then is removed). */
export interface Faults {
  /** `key#part` whose request fails before the store keeps it. */
  failPart: Set<string>;
  /** `key#part` the store keeps, but whose answer never arrives. */
  loseAnswer: Set<string>;
  /** Key whose next read ends after this many bytes (the answer still says the whole size). */
  shortRead: Map<string, number>;
}

interface MemoryStore extends ObjectStore {
  objects: Map<string, Buffer>;
  faults: Faults;
  /** Part requests that reached the store (`key#part`), in order. */
  partRequests: string[];
  /** Reads (`key@start`), in order. */
  reads: string[];
  /** Most part requests in flight at once. */
  maxInFlight: number;
  /** Part buffers the last upload allocated (its memory, in parts). */
  partBuffers: number;
  /** Serves plain GETs of the objects (for the in-place download threads); call before plainGet. */
  serve(): Promise<void>;
  stop(): Promise<void>;
}

const md5Of = (data: Buffer): string => createHash('md5').update(data).digest('base64');

/** A fresh, empty store named `container`, whose credentials expire at `expiration` (ISO). */
export function memoryStore(container = 'mem', expiration?: string): MemoryStore {
  const objects = new Map<string, Buffer>();
  const staged = new Map<string, Map<number, Buffer>>();
  const faults: Faults = { failPart: new Set(), loseAnswer: new Set(), shortRead: new Map() };
  const partRequests: string[] = [];
  const reads: string[] = [];
  let inFlight = 0;
  let server: http.Server | undefined;

  const reader = (key: string): ObjectReader => ({
    label: `mem://${container}/${key}`,
    gz: key.endsWith('.gz'),
    async get(start) {
      reads.push(`${key}@${start}`);
      const data = objects.get(key);
      if (!data) throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: 'no such object', context: { container, key }, retryable: false });
      if (start >= data.length) return { body: Readable.from([]), total: start, fromStart: true };
      let body = data.subarray(start);
      const cut = faults.shortRead.get(key);
      if (cut !== undefined) {
        faults.shortRead.delete(key);
        body = body.subarray(0, cut);
      }
      // several chunks, as a socket delivers them
      const chunks: Buffer[] = [];
      for (let i = 0; i < body.length; i += 64 * 1024) chunks.push(body.subarray(i, i + 64 * 1024));
      return { body: Readable.from(chunks), total: data.length, fromStart: true };
    },
    async size() {
      return objects.get(key)?.length;
    },
    async plainGet() {
      if (!server) throw new Error('call serve() first');
      const { port } = server.address() as AddressInfo;
      return {
        url: `http://127.0.0.1:${port}/${encodeURIComponent(key)}`,
        headers: {},
        failure: (status, body) =>
          new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: `answered ${status} ${body}`, context: { key }, status }),
      };
    },
  });

  const upload = async (o: StoreUploadOptions): Promise<StoredObject> => {
    const previous = o.resume as MemoryUploadState | undefined;
    const resume = previous?.key === o.key ? previous : undefined;
    const partSize = resume?.partSizeBytes ?? o.partSizeBytes ?? 1024;
    const done = new Map<number, { index: number; size: number; md5: string }>();
    for (const p of resume?.parts ?? []) done.set(p.index, p);
    const parts = staged.get(o.key) ?? new Map<number, Buffer>();
    staged.set(o.key, parts);
    let partsUploaded = 0;
    const report = (): void => {
      const list = [...done.values()].sort((a, b) => a.index - b.index);
      o.onProgress?.(
        { key: o.key, partSizeBytes: partSize, parts: list, bytesSent: list.reduce((n, p) => n + p.size, 0) } satisfies MemoryUploadState,
        list.reduce((n, p) => n + p.size, 0),
      );
    };
    const read = await runPartPipeline({
      source: o.source,
      partSize,
      concurrency: o.concurrency ?? 4,
      gzip: o.gzip,
      context: { container, key: o.key },
      signal: o.signal,
      part(index, data) {
        const md5 = md5Of(data);
        if (done.get(index)?.md5 === md5) return undefined;
        return async () => {
          const name = `${o.key}#${index}`;
          partRequests.push(name);
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          try {
            await new Promise((resolve) => setImmediate(resolve));
            if (faults.failPart.delete(name))
              throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'injected failure', context: { part: index } });
            parts.set(index, Buffer.from(data)); // the caller reuses its buffer
            if (faults.loseAnswer.delete(name))
              throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: 'injected lost answer', context: { part: index } });
          } finally {
            inFlight--;
          }
          done.set(index, { index, size: data.length, md5 });
          partsUploaded++;
          report();
        };
      },
    });
    const ordered: Buffer[] = [];
    for (let i = 1; i <= read.lastPart; i++) {
      const part = parts.get(i);
      if (!part) throw new SapiTransferError({ code: SapiErrorCode.UPLOAD_FAILED, message: `part ${i} is missing`, context: { key: o.key } });
      ordered.push(part);
    }
    objects.set(o.key, Buffer.concat(ordered));
    partBuffers = read.partBuffers;
    staged.delete(o.key);
    return { parts: read.lastPart, partsUploaded, bytes: read.storedBytes, sourceBytes: read.sourceBytes, sha256: read.sha256, resumed: resume !== undefined };
  };

  let maxInFlight = 0;
  let partBuffers = 0;
  const store: MemoryStore = {
    provider: 'memory',
    container,
    expiration,
    objects,
    faults,
    partRequests,
    reads,
    get maxInFlight() {
      return maxInFlight;
    },
    get partBuffers() {
      return partBuffers;
    },
    urlOf: (key) => `s3://${container}/${key}`, // a scheme the service's manifests allow
    keyOf(url) {
      const prefix = `s3://${container}/`;
      if (!url.startsWith(prefix))
        throw new SapiTransferError({ code: SapiErrorCode.DOWNLOAD_FAILED, message: `outside ${container}`, context: { url }, retryable: false });
      return url.slice(prefix.length);
    },
    reader,
    async put(key, body) {
      objects.set(key, Buffer.from(body));
    },
    upload,
    list: async (prefix) => [...objects.keys()].filter((key) => key.startsWith(prefix)).sort(),
    async delete(keys) {
      for (const key of keys) objects.delete(key);
    },
    assertFresh(where, marginMs) {
      if (expiration !== undefined && Date.parse(expiration) - Date.now() < marginMs) throw new SapiCredentialsExpiredError({ where, expiration });
    },
    close: () => undefined,
    async serve() {
      server = http.createServer((req, res) => {
        const data = objects.get(decodeURIComponent((req.url ?? '/').slice(1)));
        if (!data) {
          res.writeHead(404).end('no such object');
          return;
        }
        res.writeHead(200, { 'content-length': data.length }).end(data);
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    },
    async stop() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
  return store;
}
