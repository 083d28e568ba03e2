import { columnNamesFor, safeName, VERBATIM_KEY_MARK } from '../../../src/extractor/table-names';
import { PARENT_KEY_MARK } from '../../../src/extractor/json-parser';
import { alignRow, columnsOf, createTableSchema, csvLine, mergeTableSchema } from '../../../src/extractor/table-schema';

describe('safe table and column names', () => {
  it.each([
    ['users', 'users'],
    ['users/{id}/orders', 'users_id_orders'],
    ['v2/users.json?x=1', 'v2_users_json_x_1'],
    ['_id', 'id'],
    ['a__b', 'a_b'],
    ['keep-dashes', 'keep-dashes'],
    ['  spaced  name ', 'spaced_name'],
    ['čeština', 'e_tina'],
  ])('%j becomes %j', (input, expected) => {
    expect(safeName(input)).toBe(expected);
  });

  it('shortens names longer than 64 characters to at most 64', () => {
    const long = `${'very_long_segment_'.repeat(6)}end`;
    const name = safeName(long);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name).toMatch(/end$/);
    expect(safeName(long)).toBe(name);
  });

  it('gives later keys that collide after sanitizing the suffixes _u0, _u1 (first appearance wins)', () => {
    expect(columnNamesFor(['id', '_id', 'i.d', 'a.b', 'a_b', 'id_'])).toEqual(['id', 'id_u0', 'i_d', 'a_b', 'a_b_u0', 'id_u1']);
  });

  it('keeps a verbatim key (the legacy parser names its columns itself) as it is, also after the parent mark', () => {
    expect(columnNamesFor([`${VERBATIM_KEY_MARK}a__b`, `${PARENT_KEY_MARK}${VERBATIM_KEY_MARK}_x`, 'a__b'])).toEqual(['a__b', '_x', 'a_b']);
  });
});

describe('table schema accumulated page by page', () => {
  it('keeps the union of keys in first-appearance order across pages and tables', () => {
    let schema = createTableSchema();
    schema = mergeTableSchema(schema, [{ name: 'users', keys: ['id', 'name'] }]);
    schema = mergeTableSchema(schema, [
      { name: 'users', keys: ['id', 'email', 'name'] },
      { name: 'users_tags', keys: ['data', 'JSON_parentId'] },
    ]);
    expect(schema).toEqual({ users: ['id', 'name', 'email'], users_tags: ['data', 'JSON_parentId'] });
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
    expect(columnsOf(schema, 'users')).toEqual(['id', 'name', 'email']);
  });

  it("merges pages in the order of the reference's structure: a nested object's new key joins its siblings, parent columns stay last", () => {
    const P = PARENT_KEY_MARK;
    let schema = mergeTableSchema(createTableSchema(), [{ name: 'contacts', keys: ['type', 'properties.street', 'primary', `${P}JSON_parentId`] }]);
    schema = mergeTableSchema(schema, [{ name: 'contacts', keys: ['type', 'properties.city', 'properties.a\\.b.c', 'extra', `${P}JSON_parentId`] }]);
    schema = mergeTableSchema(schema, [{ name: 'contacts', keys: ['properties.a\\.b.d', `${P}parent_id`] }]);
    expect(columnsOf(schema, 'contacts')).toEqual([
      'type',
      'properties_street',
      'properties_city',
      'properties_a_b_c',
      'properties_a_b_d',
      'primary',
      'extra',
      'JSON_parentId',
      'parent_id',
    ]);
  });

  it('re-aligns a stored row to the final header, missing keys as empty strings', () => {
    expect(alignRow(['id', 'name', 'email'], { email: 'a@b', id: '1' })).toEqual(['1', '', 'a@b']);
  });

  it('writes RFC 4180 lines with every field quoted and quotes doubled', () => {
    expect(csvLine(['a', 'say "hi"', 'x,y\nz'])).toBe('"a","say ""hi""","x,y\nz"\n');
  });
});
