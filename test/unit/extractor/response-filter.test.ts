import { applyResponseFilter } from '../../../src/extractor/response-filter';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';

const filter = (paths: string[], delimiter = '.', legacy = false) => ({ paths, delimiter, legacy });

describe('responseFilter: properties kept as one JSON cell', () => {
  it('JSON-encodes the value at each path (strings too), leaving records without it alone', () => {
    const out = applyResponseFilter([{ id: 1, color: 'green' }, { id: 2, color: { items: ['red'] } }, { id: 3 }], filter(['color']));
    expect(out).toEqual([{ id: 1, color: '"green"' }, { id: 2, color: '{"items":["red"]}' }, { id: 3 }]);
  });

  it('applies the rest of the path to every item of an array segment, with the configured delimiter', () => {
    const records = [{ contacts: [{ p: { a: 1 } }, { p: 'x' }], 'a.b': { tags: [] } }];
    expect(applyResponseFilter(records, filter(['contacts[].p']))).toEqual([{ contacts: [{ p: '{"a":1}' }, { p: '"x"' }], 'a.b': { tags: [] } }]);
    expect(applyResponseFilter(records, filter(['a.b#tags'], '#'))[0]).toEqual({ contacts: records[0].contacts, 'a.b': { tags: '[]' } });
    expect(records[0].contacts[0].p).toEqual({ a: 1 }); // input untouched
  });

  it('fails naming the key when an array segment is not an array', () => {
    expect(() => applyResponseFilter([{ contacts: 'x' }], filter(['contacts[].p']))).toThrow("Error filtering response. 'contacts' is not an array.");
  });

  it('with compatLevel 2 keeps scalars as text and leaves empty values alone (examples 121, 122)', () => {
    const out = applyResponseFilter([{ c: 'green' }, { c: { i: [1] } }, { c: [] }, { c: true }], filter(['c'], '.', true));
    expect(out).toEqual([{ c: 'green' }, { c: '{"i":[1]}' }, { c: [] }, { c: '1' }]);
  });
});

describe('configuration: responseFilter and compatLevel', () => {
  const config = (job: object, extra: object = {}) => ({
    parameters: { api: { baseUrl: 'http://api.test/' }, config: { jobs: [{ endpoint: 'users', ...job }], ...extra } },
  });

  it('normalizes a single path or a list, the delimiter and the compat level into each job', () => {
    const parsed = parseExtractorConfig(
      config({ responseFilter: 'a#b', responseFilterDelimiter: '#', children: [{ endpoint: 'x/{id}', responseFilter: ['c'] }] }, { compatLevel: 2 }),
    );
    expect(parsed.config.compatLevel).toBe(2);
    expect(parsed.config.jobs[0].responseFilter).toEqual({ paths: ['a#b'], delimiter: '#', legacy: true });
    expect(parsed.config.jobs[0].children[0].responseFilter).toEqual({ paths: ['c'], delimiter: '.', legacy: true });
    expect(parseExtractorConfig(config({})).config.jobs[0].responseFilter).toBeNull();
    expect(parseExtractorConfig(config({}, { compatLevel: '0' })).config.compatLevel).toBe(3);
  });

  it('selects the legacy JSON parser (and the legacy filter) for every job with compatLevel 1, only then', () => {
    const parsed = parseExtractorConfig(config({ responseFilter: 'a', children: [{ endpoint: 'x/{id}' }] }, { compatLevel: 1 }));
    expect(parsed.config.compatLevel).toBe(1);
    expect(parsed.config.jobs[0].legacyJsonParser).toBe(true);
    expect(parsed.config.jobs[0].children[0].legacyJsonParser).toBe(true);
    expect(parsed.config.jobs[0].responseFilter?.legacy).toBe(true);
    expect(parseExtractorConfig(config({}, { compatLevel: 2 })).config.jobs[0].legacyJsonParser).toBeUndefined();
  });

  it('refuses unknown compat levels, naming the key', () => {
    expect(() => parseExtractorConfig(config({}, { compatLevel: 7 }))).toThrow("parameters.config.compatLevel: 'compatLevel' must be 1, 2 or 3");
    expect(() => parseExtractorConfig(config({}, { compatLevel: -1 }))).toThrow("parameters.config.compatLevel: 'compatLevel' must be 1, 2 or 3");
    expect(() => parseExtractorConfig(config({ responseFilter: { a: 1 } }))).toThrow(
      "parameters.config.jobs[0].responseFilter: The 'responseFilter' property must be a path string or an array of path strings.",
    );
  });
});
