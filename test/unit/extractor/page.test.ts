import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { PARENT_KEY_MARK } from '../../../src/extractor/json-parser';
import { processPage } from '../../../src/extractor/page';
import { createScrollerState, nextStep } from '../../../src/extractor/scroller';
import { makeConfig } from './fake-api';

const config = makeConfig({
  pagination: { method: 'response.param', responseParam: 'next', queryParam: 'cursor' },
  jobs: [{ endpoint: 'users', children: [{ endpoint: 'users/{id}/orders', placeholders: { id: 'id' } }] }],
});
const job = config.config.jobs[0];
const fetched = (body: unknown, hash: string) => ({ body, bytes: JSON.stringify(body).length, hash });

describe('processing one fetched page for an activity', () => {
  it('returns rows, a body-free result for nextStep, the schema delta and the child runs', () => {
    const state = createScrollerState(job, config.api, 0);
    const page = processPage(state, job, fetched({ users: [{ id: 1, tags: ['x'] }], next: 'c2' }, 'h1'));
    expect(page.extract).toBe(true);
    expect(page.result).toEqual({ digest: { cursor: { found: true, value: 'c2' }, flag: null, limit: null }, bytes: 45, hash: 'h1', recordCount: 1 });
    expect(page.schemaDelta).toEqual([
      { name: 'users', keys: ['id', 'tags'] },
      { name: 'users_tags', keys: ['data', `${PARENT_KEY_MARK}JSON_parentId`] },
    ]);
    expect(page.children.map((c) => c.job.endpoint)).toEqual(['users/1/orders']);
    expect(JSON.stringify(page.result)).not.toContain('tags');
    expect(nextStep(state, page.result, 0).next?.url).toBe('http://api.test/v1/users?cursor=c2');
  });

  it('marks a repeat of the previous response as not to be extracted, with nothing to write or run', () => {
    const first = createScrollerState(job, config.api, 0);
    const body = { users: [{ id: 1 }], next: 'c2' };
    const state = nextStep(first, processPage(first, job, fetched(body, 'same')).result, 0).state;
    const page = processPage(state, job, fetched(body, 'same'));
    expect(page).toMatchObject({ extract: false, tables: [], children: [], schemaDelta: [] });
    expect(nextStep(state, page.result, 0)).toMatchObject({ extractPage: false, stopReason: 'duplicate-response' });
  });

  it('remembers a renamed parent column for every later page and job of the run (example 076: orders get tag_u0)', () => {
    const withUserData = parseExtractorConfig({
      parameters: {
        api: { baseUrl: 'http://api.test/' },
        config: {
          userData: { tag: 'development', price: '$10' },
          jobs: [
            { endpoint: 'users', dataType: 'users' },
            { endpoint: 'orders', dataType: 'orders' },
          ],
        },
      },
    });
    const [users, orders] = withUserData.config.jobs;
    const usersPage = processPage(createScrollerState(users, withUserData.api, 0), users, fetched([{ id: 1, tag: 'CFO' }], 'u'));
    expect(usersPage.schemaDelta[0].keys).toEqual(['id', 'tag', `${PARENT_KEY_MARK}tag_u0`, `${PARENT_KEY_MARK}price`]);
    expect(usersPage.parentAliases).toEqual({ tag: 'tag_u0' });

    const ordersRecords = [{ order_id: 9, price: '$42' }];
    const ordersPage = processPage(createScrollerState(orders, withUserData.api, 0), orders, fetched(ordersRecords, 'o'), {
      parentAliases: usersPage.parentAliases,
    });
    // no clash with 'tag' in orders, yet the renamed name stays; 'price' clashes here and joins the memory
    expect(ordersPage.schemaDelta[0].keys).toEqual(['order_id', 'price', `${PARENT_KEY_MARK}tag_u0`, `${PARENT_KEY_MARK}price_u0`]);
    expect(ordersPage.tables[0].rows).toEqual([
      { order_id: '9', price: '$42', [`${PARENT_KEY_MARK}tag_u0`]: 'development', [`${PARENT_KEY_MARK}price_u0`]: '$10' },
    ]);
    expect(ordersPage.parentAliases).toEqual({ tag: 'tag_u0', price: 'price_u0' });
    expect(usersPage.parentAliases).toEqual({ tag: 'tag_u0' }); // the given memory is not changed in place

    // without the memory (a fresh run), orders keeps 'tag'
    const fresh = processPage(createScrollerState(orders, withUserData.api, 0), orders, fetched(ordersRecords, 'o'));
    expect(fresh.schemaDelta[0].keys).toContain(`${PARENT_KEY_MARK}tag`);
  });
});
