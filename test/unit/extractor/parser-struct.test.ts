/**
 * The reference parser's stored structure (`json_parser.struct`) as columns: a table keeps the columns
 * of earlier runs, in the structure's order.
 */
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { PARENT_KEY_MARK } from '../../../src/extractor/json-parser';
import { schemaFromStruct, seedSchema } from '../../../src/extractor/parser-struct';
import { runExtraction } from '../../harness/run-extraction';
import { BASE_URL, fakeFetch } from './fake-api';

const scalar = (extra: Record<string, unknown> = {}) => ({ nodeType: 'scalar', ...extra });

/** Example 107's stored structure: `users` had a `previous` column. */
const STRUCT_107 = {
  data: { _users: { '[]': { _id: scalar(), _name: scalar(), _previous: scalar(), nodeType: 'object', headerNames: 'data' }, nodeType: 'array' } },
  parent_aliases: [],
};

describe('schemaFromStruct', () => {
  it('gives each table its header keys in structure order: nested objects inline, arrays as child tables, parent columns last', () => {
    const struct = {
      data: {
        '_users-2': {
          nodeType: 'array',
          '[]': {
            nodeType: 'object',
            _id: scalar(),
            _address: { nodeType: 'object', _city: scalar(), '_zip.code': scalar() },
            _tags: { nodeType: 'array', '[]': { nodeType: 'scalar', _JSON_parentId: scalar({ type: 'parent' }) } },
            _parent_id: scalar({ type: 'parent' }),
            _roles: { nodeType: 'array', '[]': { nodeType: 'object', _name: scalar(), _JSON_parentId: scalar({ type: 'parent' }) } },
          },
        },
      },
      parent_aliases: [],
    };
    expect(schemaFromStruct(struct)).toEqual({
      'users-2_tags': ['data', `${PARENT_KEY_MARK}JSON_parentId`],
      'users-2_roles': ['name', `${PARENT_KEY_MARK}JSON_parentId`],
      'users-2': ['id', 'address.city', 'address.zip\\.code', 'tags', 'roles', `${PARENT_KEY_MARK}parent_id`],
    });
  });

  it('reads nothing from a missing or partial structure', () => {
    expect(schemaFromStruct(undefined)).toEqual({});
    expect(schemaFromStruct({ data: { _users: { nodeType: 'array' } } })).toEqual({});
  });
});

describe('seedSchema', () => {
  it("puts the stored columns first and this run's new ones where the structure order puts them; tables only stored are left out", () => {
    const seed = { users: ['id', 'name', 'previous', `${PARENT_KEY_MARK}userData`], old: ['x'] };
    expect(seedSchema({ users: ['id', 'name', 'modified', `${PARENT_KEY_MARK}userData`] }, seed)).toEqual({
      users: ['id', 'name', 'previous', 'modified', `${PARENT_KEY_MARK}userData`],
    });
  });
});

describe('runExtraction with the previous run state', () => {
  it("keeps a column only the stored structure knows (example 107's 'previous'), empty in this run's rows", async () => {
    const config = parseExtractorConfig({ parameters: { api: { baseUrl: BASE_URL }, config: { outputBucket: 'test', jobs: [{ endpoint: 'users' }] } } });
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 3, name: 'John Doe', modified: '2017-04-20 19:05:12' }]]),
      runState: { time: { previousStart: 1492606006 }, 'json_parser.struct': STRUCT_107, 'json_parser.structVersion': 3 },
    });
    expect(result.tables.users.columns).toEqual(['id', 'name', 'previous', 'modified']);
    expect(result.tables.users.rows).toEqual([{ id: '3', name: 'John Doe', previous: '', modified: '2017-04-20 19:05:12' }]);
  });
});

describe('the structure a run leaves for the next one', () => {
  it("adds this run's columns to the stored structure, keeping what it had (107: 'modified' after 'previous')", async () => {
    const config = parseExtractorConfig({ parameters: { api: { baseUrl: BASE_URL }, config: { outputBucket: 'test', jobs: [{ endpoint: 'users' }] } } });
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 3, name: 'John Doe', modified: '2017-04-20 19:05:12' }]]),
      runState: { time: { previousStart: 1492606006 }, 'json_parser.struct': STRUCT_107, 'json_parser.structVersion': 3 },
    });
    expect(result.parserState).toEqual({
      'json_parser.struct': {
        data: {
          _users: {
            '[]': {
              _id: scalar(),
              _name: scalar(),
              _previous: scalar(),
              nodeType: 'object',
              headerNames: 'data',
              _modified: scalar({ headerNames: 'modified' }),
            },
            nodeType: 'array',
          },
        },
        parent_aliases: [],
      },
      'json_parser.structVersion': 3,
    });
  });

  it('describes nested objects, child tables, scalar items and parent columns so the next run reads the same columns back', async () => {
    const config = parseExtractorConfig({
      parameters: {
        api: { baseUrl: BASE_URL },
        config: { outputBucket: 'test', userData: { src: 'api' }, jobs: [{ endpoint: 'users', dataType: 'users-2' }] },
      },
    });
    const result = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 1, address: { city: 'Prague', 'zip.code': '110' }, tags: ['a', 'b'], roles: [{ name: 'admin' }] }]]),
    });
    const first = schemaFromStruct(result.parserState['json_parser.struct']);
    expect(Object.keys(first).sort()).toEqual(['users-2', 'users-2_roles', 'users-2_tags']);
    const next = await runExtraction(config, {
      fetchPage: fakeFetch([[{ id: 2 }]]),
      runState: { time: { previousStart: 1 }, ...result.parserState },
    });
    expect(next.tables['users-2'].columns).toEqual(result.tables['users-2'].columns);
    expect(next.tables['users-2'].rows).toEqual([{ id: '2', address_city: '', address_zip_code: '', tags: '', roles: '', src: 'api' }]);
  });
});

describe('renamed parent columns kept between runs (json_parser.struct.parent_aliases)', () => {
  const config = () =>
    parseExtractorConfig({
      parameters: {
        api: { baseUrl: BASE_URL },
        config: { outputBucket: 'test', userData: { tag: 'x' }, jobs: [{ endpoint: 'users' }, { endpoint: 'orders' }] },
      },
    });

  it('stores the renames of this run, and a next run keeps using them where nothing clashes', async () => {
    const first = await runExtraction(config(), { fetchPage: fakeFetch([[{ id: 1, tag: 'own' }], [{ order: 9 }]]) });
    expect(first.tables.orders.columns).toEqual(['order', 'tag_u0']);
    expect((first.parserState['json_parser.struct'] as { parent_aliases: unknown }).parent_aliases).toEqual({ tag: 'tag_u0' });

    const next = await runExtraction(config(), {
      fetchPage: fakeFetch([[{ id: 2 }], [{ order: 10 }]]),
      runState: { time: { previousStart: 1 }, ...first.parserState },
    });
    expect(next.tables.users.columns).toEqual(['id', 'tag', 'tag_u0']); // 'tag' kept from the stored structure
    expect(next.tables.orders.rows).toEqual([{ order: '10', tag_u0: 'x' }]);
  });

  it("reads the reference's empty list as no renames", async () => {
    const result = await runExtraction(config(), {
      fetchPage: fakeFetch([[{ id: 2 }], [{ order: 10 }]]),
      runState: { time: { previousStart: 1 }, 'json_parser.struct': { data: {}, parent_aliases: [] } },
    });
    expect(result.tables.users.columns).toEqual(['id', 'tag']);
    expect((result.parserState['json_parser.struct'] as { parent_aliases: unknown }).parent_aliases).toEqual([]);
  });
});
