import { createHash } from 'node:crypto';
import { mapRecords, mappedPrimaryKeys, serializeUserData } from '../../../src/extractor/mapping';
import { ExtractorConfigError } from '../../../src/extractor/errors';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { runExtraction } from '../../harness/run-extraction';
import { fakeFetch } from './fake-api';

function mappedJob(mapping: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { job: makeConfigWithMappings({ users: mapping }, extra).config.jobs[0] };
}

/** A parsed configuration with `mappings` (and `userData`) at the config level. */
function makeConfigWithMappings(mappings: unknown, jobExtra: Record<string, unknown> = {}, userData?: unknown) {
  return parseExtractorConfig({
    parameters: {
      api: { baseUrl: 'http://api.test/v1/' },
      config: { outputBucket: 'test', jobs: [{ endpoint: 'users', dataType: 'users', ...jobExtra }], mappings, ...(userData ? { userData } : {}) },
    },
  });
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const rowsOf = (tables: ReturnType<typeof mapRecords>) => Object.fromEntries(tables.map((t) => [t.name, { keys: t.keys, rows: t.rows }]));

describe('output mappings (the reference mapper, keboola/php-csvmap)', () => {
  it('maps columns in mapping order, shorthand strings included, and absent values as empty cells', () => {
    const { job } = mappedJob({ 'a.b': { mapping: { destination: 'ab' } }, id: 'ident', missing: { type: 'column', mapping: { destination: 'm' } } });
    const tables = mapRecords(
      [
        { id: 1, a: { b: true } },
        { id: 0.1 + 0.2, a: { b: 1e25 } },
      ],
      job.mapping!,
    );
    expect(rowsOf(tables)).toEqual({
      users: {
        keys: ['ab', 'ident', 'm'],
        // numbers as PHP prints them into the CSV (floats with 14 significant digits)
        rows: [
          { ab: '1', ident: '1', m: '' },
          { ab: '1.0E+25', ident: '0.3', m: '' },
        ],
      },
    });
  });

  it('fails on a value that is not a scalar unless forceType, which stores it as PHP JSON', () => {
    const { job } = mappedJob({ tags: { mapping: { destination: 'tags' } } });
    expect(() => mapRecords([{ tags: ['a/b'] }], job.mapping!)).toThrow("Error writing 'tags' column");
    const forced = mappedJob({ tags: { mapping: { destination: 'tags' }, forceType: true } });
    expect(mapRecords([{ tags: ['a/b'] }], forced.job.mapping!)[0].rows).toEqual([{ tags: '["a\\/b"]' }]);
  });

  it('links child-table rows by the MD5 of the parent record serialized, with the user data when there is some', () => {
    const { job } = mappedJob({ id: 'id', tags: { type: 'table', destination: 'tags', tableMapping: { '.': 'tag' } } });
    const serialized = 'O:8:"stdClass":2:{s:2:"id";i:1;s:4:"tags";a:1:{i:0;s:1:"x";}}';
    const plain = rowsOf(mapRecords([{ id: 1, tags: ['x'] }], job.mapping!));
    expect(plain.users.rows).toEqual([{ id: '1', tags: md5(serialized) }]);
    expect(plain.tags).toEqual({ keys: ['tag', 'users_pk'], rows: [{ tag: 'x', users_pk: md5(serialized) }] });
    const withUser = rowsOf(mapRecords([{ id: 1, tags: ['x'] }], job.mapping!, { parent_id: 7 }));
    expect(withUser.users.rows).toEqual([{ id: '1', tags: md5(`${serialized}a:1:{s:9:"parent_id";i:7;}`) }]);
  });

  it('links by the primary key values joined with a comma when the table has one, and drops the link column from the parent', () => {
    const { job } = mappedJob({
      first: { mapping: { destination: 'first', primaryKey: true } },
      last: { mapping: { destination: 'last', primaryKey: true } },
      tags: { type: 'table', destination: 'tags', parentKey: { destination: 'person', primaryKey: true }, tableMapping: { '.': 'tag' } },
    });
    expect(rowsOf(mapRecords([{ first: 'J', last: 'D', tags: ['x', 'y'] }], job.mapping!))).toEqual({
      users: { keys: ['first', 'last'], rows: [{ first: 'J', last: 'D' }] },
      tags: {
        keys: ['tag', 'person'],
        rows: [
          { tag: 'x', person: 'J,D' },
          { tag: 'y', person: 'J,D' },
        ],
      },
    });
  });

  it('fails when a primary key value is not a scalar', () => {
    const { job } = mappedJob({
      id: { mapping: { destination: 'id', primaryKey: true } },
      tags: { type: 'table', destination: 't', tableMapping: { '.': 'v' } },
    });
    expect(() => mapRecords([{ id: { a: 1 }, tags: [1] }], job.mapping!)).toThrow('Only scalar values are allowed in primary key');
  });

  it('writes an empty link (and no child rows) for an empty value when the table has no primary key', () => {
    const { job } = mappedJob({ id: 'id', tags: { type: 'table', destination: 'tags', tableMapping: { '.': 'tag' } } });
    expect(rowsOf(mapRecords([{ id: 1, tags: [] }], job.mapping!))).toEqual({
      users: { keys: ['id', 'tags'], rows: [{ id: '1', tags: '' }] },
    });
  });

  it('writes child rows into the own table before the parent row when the destination is the same table', () => {
    const { job } = mappedJob({ id: 'id', kids: { type: 'table', destination: 'users', parentKey: { disable: true } } });
    const tables = mapRecords([{ id: 1, kids: [{ id: 2, kids: [{ id: 3 }] }] }], job.mapping!);
    expect(rowsOf(tables)).toEqual({ users: { keys: ['id'], rows: [{ id: '3' }, { id: '2' }, { id: '1' }] } });
  });

  it('serializes the user data as a PHP array (integer-like keys become integers)', () => {
    expect(serializeUserData({ tag: 'x', '5': 1, parent_id: 2.5 })).toBe('a:3:{i:5;i:1;s:3:"tag";s:1:"x";s:9:"parent_id";d:2.5;}');
  });

  it('reads user columns from the user data (parent_<field> included)', () => {
    const { job } = mappedJob({ id: 'id', parent_id: { type: 'user', mapping: { destination: 'user_id' } } });
    expect(mapRecords([{ id: 1 }], job.mapping!, { parent_id: 5 })[0].rows).toEqual([{ id: '1', user_id: '5' }]);
  });

  it('gives every mapped table, with its columns and primary key, even when the job returned no rows', async () => {
    const config = makeConfigWithMappings({
      users: { id: { mapping: { destination: 'id', primaryKey: true } }, tags: { type: 'table', destination: 'tags', tableMapping: { '.': 'tag' } } },
    });
    const result = await runExtraction(config, { fetchPage: fakeFetch([[]]) });
    expect(result.tables).toEqual({
      users: { columns: ['id'], rows: [], primaryKey: ['id'] },
      tags: { columns: ['tag', 'users_pk'], rows: [] },
    });
  });

  it('lists the primary keys of every mapped table for creating the tables', () => {
    const config = makeConfigWithMappings({
      users: {
        id: { mapping: { destination: 'id', primaryKey: true } },
        addresses: {
          type: 'table',
          destination: 'user-address',
          parentKey: { destination: 'userId', primaryKey: true },
          tableMapping: { index: { mapping: { destination: 'index', primaryKey: true } } },
        },
      },
    });
    expect(mappedPrimaryKeys(config)).toEqual({ users: ['id'], 'user-address': ['index', 'userId'] });
  });
});

describe('mapping configuration errors name the key', () => {
  const issuesOf = (mappings: unknown, jobExtra: Record<string, unknown> = {}, userData?: unknown) => {
    try {
      makeConfigWithMappings(mappings, jobExtra, userData);
    } catch (err) {
      if (err instanceof ExtractorConfigError) return err.issues.map((i) => `${i.path}: ${i.message}`);
      throw err;
    }
    return [];
  };

  it('refuses unsupported types, missing destinations, unknown keys and self tables without parentKey.disable', () => {
    expect(
      issuesOf({
        users: {
          d: { type: 'date', mapping: { destination: 'd' } },
          c: { type: 'column', mapping: {} },
          x: { type: 'column', mapping: { destination: 'x', primary: true } },
          t: { type: 'table', destination: 'users' },
          u: { type: 'table', destination: 'other' },
        },
      }),
    ).toEqual([
      `parameters.config.mappings["users"]["d"].type: Mapping type 'date' (column 'd') is not supported by this extractor (supported: column, user, table).`,
      `parameters.config.mappings["users"]["c"].mapping.destination: Key 'mapping.destination' is not set for column 'c'.`,
      `parameters.config.mappings["users"]["x"].mapping.primary: Unknown mapping property 'primary' (allowed here: destination, primaryKey).`,
      `parameters.config.mappings["users"]["t"].parentKey.disable: 'parentKey.disable' must be true to parse child values into parent's table`,
      `parameters.config.mappings["users"]["u"].tableMapping: Key 'tableMapping' is not set for table 'u'.`,
    ]);
  });

  it('refuses an empty mapping, a column twice and one table with different columns', () => {
    expect(issuesOf({ users: {} })).toEqual([`parameters.config.mappings["users"]: Empty mapping for 'users' data type in 'mappings' config.`]);
    expect(issuesOf({ users: { a: 'x', b: 'x' } })).toEqual([
      `parameters.config.mappings["users"]: Column 'x' appears twice in the mapped table 'users'; use distinct destinations.`,
    ]);
    const twoJobs = { children: [{ endpoint: 'orders/{id}', dataType: 'orders', placeholders: { id: 'id' } }] };
    expect(
      issuesOf(
        {
          users: { a: { type: 'table', destination: 't', tableMapping: { x: 'x' } } },
          orders: { b: { type: 'table', destination: 't', tableMapping: { y: 'y' } } },
        },
        twoJobs,
      ),
    ).toEqual([`parameters.config.mappings["orders"]: Multiple results for 't' table have different columns! (x, users_pk / y, orders_pk)`]);
  });

  it('refuses a mapping for a data type no job has, instead of ignoring it', () => {
    expect(issuesOf({ users: { id: 'id' }, orders: { id: 'id' } })).toEqual([
      `parameters.config.mappings["orders"]: No job has the data type 'orders' (data types of the jobs: users): the mapping would never be used; set it for a job's 'dataType' (which defaults to its endpoint) or remove it.`,
    ]);
  });

  it('refuses a table written both by a mapping and by a job without mapping', () => {
    expect(
      issuesOf(
        { users: { tags: { type: 'table', destination: 'orders', tableMapping: { '.': 'tag' } } } },
        { children: [{ endpoint: 'orders/{id}', dataType: 'orders', placeholders: { id: 'id' } }] },
      ),
    ).toEqual([
      "parameters.config.jobs[0].children[0].dataType: Table 'orders' is written by a mapping and by this job without mapping: add a mapping for 'orders' or use another dataType.",
    ]);
  });

  it('refuses an object in userData that is not a user function, and a recursionFilter with bad syntax or on a top-level job', () => {
    expect(issuesOf(undefined, {}, { at: { date: 'Y' } })).toEqual([
      `parameters.config.userData.at: 'userData.at' must be a string, number, boolean, null or a user function ({"function": …} or {"attr"|"time": …}).`,
    ]);
    expect(issuesOf(undefined, { recursionFilter: 'a==1', children: [{ endpoint: 'x/{id}', placeholders: { id: 'id' }, recursionFilter: 'oops' }] })).toEqual([
      "parameters.config.jobs[0].recursionFilter: 'recursionFilter' applies to child jobs only (it filters the parent's rows).",
      "parameters.config.jobs[0].children[0].recursionFilter: Error creating a filter from oops: Operator couldn't be determined. Please use one of [==, !=, >=, <=, >, <, ~~, !~]",
    ]);
  });
});
