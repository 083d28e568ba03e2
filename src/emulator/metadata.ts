/** Bucket, table and column metadata, kept in the state log; a typed table's `storage` entries live with the table. */
import { type DocLog } from './doc-log';
import { type MetadataObjectType, type MetadataRecord, type TableRecord } from './model';
import { formatTimestamp } from './time';

const METADATA = 'metadata';
/** Provider of the entries the service itself writes (`KBC.datatype.*` of typed tables); clients cannot use it. */
export const STORAGE_PROVIDER = 'storage';

/** A `{key, value}` pair to set. */
export interface MetadataInput {
  key: string;
  value: string;
}

/** The service's JSON shape of an entry. */
export function metadataResource(m: MetadataRecord): Record<string, unknown> {
  return { id: m.id, key: m.key, value: m.value, provider: m.provider, timestamp: m.timestamp };
}

export class MetadataStore {
  constructor(
    private readonly state: DocLog,
    private readonly nextId: () => number,
  ) {}

  /** Entries of one object, oldest first; for a table's columns, the table's `storage` entries come first. */
  list(objectType: MetadataObjectType, objectId: string): MetadataRecord[] {
    return this.state
      .all<MetadataRecord>(METADATA)
      .filter((m) => m.objectType === objectType && m.objectId === objectId)
      .sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** Sets entries (same object, provider and key: the value and timestamp change, the id stays); returns them. */
  upsert(objectType: MetadataObjectType, objectId: string, provider: string, entries: MetadataInput[]): MetadataRecord[] {
    const existing = this.list(objectType, objectId);
    const timestamp = formatTimestamp();
    return entries.map((entry) => {
      const found = existing.find((m) => m.provider === provider && m.key === entry.key);
      const record: MetadataRecord = found
        ? { ...found, value: entry.value, timestamp }
        : { id: String(this.nextId()), objectType, objectId, key: entry.key, value: entry.value, provider, timestamp };
      this.state.put(METADATA, record.id, record);
      if (!found) existing.push(record);
      return record;
    });
  }

  get(id: string): MetadataRecord | undefined {
    return this.state.get<MetadataRecord>(METADATA, id);
  }

  delete(id: string): void {
    this.state.delete(METADATA, id);
  }

  /** Forgets an object's entries; for a table also those of its columns, for a bucket those of its tables and columns. */
  deleteObject(objectType: 'branch' | 'bucket' | 'table', objectId: string): void {
    for (const m of this.state.all<MetadataRecord>(METADATA)) {
      const own = m.objectType === objectType && m.objectId === objectId;
      const inside = objectType !== 'branch' && (m.objectType === 'table' || m.objectType === 'column') && m.objectId.startsWith(`${objectId}.`);
      if (own || inside) this.state.delete(METADATA, m.id);
    }
  }
}

/** Entries of a table column: the table's own `storage` entries (typed tables), then the ones set over the API. */
export function columnMetadata(store: MetadataStore, table: TableRecord, column: string): MetadataRecord[] {
  const columnId = `${table.id}.${column}`;
  return [...(table.storageMetadata ?? []).filter((m) => m.objectId === columnId), ...store.list('column', columnId)];
}

/** `columnMetadata` of a table detail: column name → entries, only columns that have some. */
export function columnMetadataMap(store: MetadataStore, table: TableRecord): Record<string, Record<string, unknown>[]> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const column of table.columns) {
    const entries = columnMetadata(store, table, column);
    if (entries.length) out[column] = entries.map(metadataResource);
  }
  return out;
}
