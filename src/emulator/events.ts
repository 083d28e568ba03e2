/** Project events (`GET events`): what the emulator did, newest first, kept in the state log. */
import { type DocLog } from './doc-log';
import { type EventRecord } from './model';
import { formatTimestamp } from './time';

const EVENT = 'event';
/** Events kept; older ones are dropped first. */
export const EVENT_LOG_LIMIT = 10_000;

export type NewEvent = Omit<EventRecord, 'id' | 'created' | 'idBranch' | 'params' | 'results' | 'runId'> &
  Partial<Pick<EventRecord, 'params' | 'results' | 'runId' | 'idBranch'>>;

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
      created: formatTimestamp(),
    };
    this.state.put(EVENT, event.id, event);
    const all = this.state.all<EventRecord>(EVENT);
    if (all.length > EVENT_LOG_LIMIT) {
      for (const old of all.sort((a, b) => a.id - b.id).slice(0, all.length - EVENT_LOG_LIMIT)) this.state.delete(EVENT, old.id);
    }
    return event;
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
    event: e.event,
    component: 'storage',
    message: e.message,
    description: '',
    type: e.type,
    runId: e.runId,
    created: e.created,
    params: e.params,
    results: e.results,
    performance: {},
    warnings: [],
    attachments: [],
    token: { id: String(e.token.id), name: e.token.description },
    configurationId: null,
    objectId: e.objectId,
    objectName: e.objectName,
    objectType: e.objectType,
    idBranch: e.idBranch,
  };
}
