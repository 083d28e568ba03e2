/**
 * Deterministic records of the sample API: the same index always gives the same record, so tests can compute
 * what an extraction must produce without storing anything.
 */

/** A sample user: nested objects, booleans, nulls, floats and arrays (for child tables). */
export interface SampleUser {
  id: number;
  name: string;
  email: string;
  active: boolean;
  score: number | null;
  address: { street: string; city: string; geo: { lat: number; lng: number } };
  tags: string[];
  contacts: Array<{ type: string; value: string }>;
}

/** A sample order of a user (`GET /users/{id}/orders`). */
export interface SampleOrder {
  orderId: string;
  userId: number;
  total: number;
  paid: boolean;
}

const CITIES = ['Prague', 'Brno', 'Ostrava'];

/** The user at 0-based `index` (its `id` is `index + 1`). */
export function makeUser(index: number): SampleUser {
  const id = index + 1;
  return {
    id,
    name: `User ${id}`,
    email: `user${id}@example.com`,
    active: id % 2 === 1,
    score: id % 5 === 0 ? null : ((id * 37) % 100) / 10,
    address: { street: `${id} Main Street`, city: CITIES[id % 3], geo: { lat: 50 + id / 1000, lng: 14 + id / 1000 } },
    tags: Array.from({ length: id % 3 }, (_, i) => `tag-${(id + i) % 7}`),
    contacts: id % 4 === 0 ? [{ type: 'phone', value: `+420 600 000 ${String(id).padStart(3, '0')}` }] : [],
  };
}

/** `count` users, ids 1..count. */
export function makeUsers(count: number): SampleUser[] {
  return Array.from({ length: count }, (_, i) => makeUser(i));
}

/** Orders of a user: `userId % 4` of them (so some users have none). */
export function ordersOf(userId: number): SampleOrder[] {
  return Array.from({ length: userId % 4 }, (_, i) => ({
    orderId: `${userId}-${i + 1}`,
    userId,
    total: ((userId * 13 + i * 7) % 1000) / 10,
    paid: (userId + i) % 2 === 0,
  }));
}

/** Records on page `page` (1-based) of the large dataset: 1 to 10 small records, generated on the fly. */
export function largePage(page: number): Array<{ id: string; page: number; value: number; even: boolean }> {
  const count = 1 + ((page * 7) % 10);
  return Array.from({ length: count }, (_, i) => ({ id: `${page}-${i + 1}`, page, value: (page * 31 + i) % 997, even: (page + i) % 2 === 0 }));
}

/** Number of records in pages 1..pages of the large dataset. */
export function largeRecordCount(pages: number): number {
  let total = 0;
  for (let p = 1; p <= pages; p++) total += 1 + ((p * 7) % 10);
  return total;
}

/** An item of the `/paging/*` routes (1-based `id`): small, flat, deterministic. */
export interface PagingItem {
  id: number;
  name: string;
  value: number;
}

/** The `/paging/*` items with ids 1..count. */
export function pagingItems(count: number): PagingItem[] {
  return Array.from({ length: count }, (_, i) => ({ id: i + 1, name: `Item ${i + 1}`, value: ((i + 1) * 31) % 997 }));
}

/** Parent row `id` of the wide fan-out routes (`GET /wide/parents`). */
export function wideParent(id: number): { id: number; name: string } {
  return { id, name: `Parent ${id}` };
}

/** Items of wide parent `id` (`GET /wide/parents/{id}/items`): `id % 3` of them (so a third have none). */
export function wideItemsOf(id: number): Array<{ n: number; parentId: number; label: string }> {
  return Array.from({ length: id % 3 }, (_, i) => ({ n: i + 1, parentId: id, label: `item ${id}-${i + 1}` }));
}

/** An event of `GET /events` (dated data for backfills): `perDay` of them each UTC day, ids `<day>-<n>`. */
export interface DatedEvent {
  id: string;
  day: string;
  n: number;
  value: number;
}

/** The events of the days from `from` (inclusive) to `to` (exclusive), `YYYY-MM-DD`, `perDay` a day, in order. */
export function datedEvents(from: string, to: string, perDay: number): DatedEvent[] {
  const events: DatedEvent[] = [];
  for (let ms = Date.parse(`${from}T00:00:00Z`); ms < Date.parse(`${to}T00:00:00Z`); ms += 86_400_000) {
    const day = new Date(ms).toISOString().slice(0, 10);
    for (let n = 1; n <= perDay; n++) events.push({ id: `${day}-${n}`, day, n, value: (ms / 86_400_000 + n * 7) % 101 });
  }
  return events;
}
