/** Project events (`GET events`): what the emulator did, newest first, kept in the state log. */
import { randomBytes } from 'node:crypto';
import { type DocLog } from './doc-log';
import { type EventRecord } from './model';
import { formatTimestamp } from './time';

const EVENT = 'event';
/** Events kept; older ones are dropped first. */
export const EVENT_LOG_LIMIT = 10_000;

export type NewEvent = Omit<EventRecord, 'id' | 'created' | 'idBranch' | 'params' | 'results' | 'runId' | 'uuid'> &
  Partial<Pick<EventRecord, 'params' | 'results' | 'runId' | 'idBranch'>>;

/** A UUID v7 (time-ordered, like the service's event uuids): 48 bits of epoch ms, version and variant, random rest. */
export function uuidV7(ms = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class EventLog {
  constructor(
    private readonly state: DocLog,
    private readonly nextId: () => number,
  ) {}

  add(input: NewEvent): EventRecord {
    const event: EventRecord = {
      params: {},
      results: {},
      runId: null,
      idBranch: 1,
      ...input,
      id: this.nextId(),
      uuid: uuidV7(),
      created: formatTimestamp(),
    };
    this.state.put(EVENT, event.id, event);
    const all = this.state.all<EventRecord>(EVENT);
    if (all.length > EVENT_LOG_LIMIT) {
      for (const old of all.sort((a, b) => a.id - b.id).slice(0, all.length - EVENT_LOG_LIMIT)) this.state.delete(EVENT, old.id);
    }
    return event;
  }

  /** The event of an id or uuid. */
  get(idOrUuid: string): EventRecord | undefined {
    if (/^\d+$/.test(idOrUuid)) return this.state.get<EventRecord>(EVENT, Number(idOrUuid));
    return this.state.all<EventRecord>(EVENT).find((e) => e.uuid === idOrUuid);
  }

  /** Newest first. */
  list(): EventRecord[] {
    return this.state.all<EventRecord>(EVENT).sort((a, b) => b.id - a.id);
  }
}

/** The service's JSON shape of an event. */
export function eventResource(e: EventRecord): Record<string, unknown> {
  return {
    id: String(e.id),
    ...(e.uuid ? { uuid: e.uuid } : {}),
    event: e.event,
    component: e.component ?? 'storage',
    message: e.message,
    description: e.description ?? '',
    type: e.type,
    runId: e.runId,
    created: e.created,
    params: e.params,
    results: e.results,
    performance: e.duration === undefined ? {} : { duration: e.duration },
    warnings: [],
    attachments: [],
    token: { id: String(e.token.id), name: e.token.description },
    configurationId: e.configurationId ?? null,
    objectId: e.objectId,
    objectName: e.objectName,
    objectType: e.objectType,
    idBranch: e.idBranch,
  };
}
