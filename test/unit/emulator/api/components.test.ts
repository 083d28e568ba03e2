import { type Json, TOKEN, client, createBucket, createTable, useMemoryEmulator } from '../../../harness/emulator-api';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/;
const VERSION_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const CREATOR = { id: 101, description: 'test token' };

/** Components and configurations as the service's API documentation shows them (`apiary.apib`). */
describe('components and configurations', () => {
  const env = useMemoryEmulator();
  const base = '/branch/default/components/keboola.ex-db-mysql/configs';

  test('POST configs answers 201 with the configuration as sent, version 1 and its change description; detail, list and the index show it', async () => {
    const res = await env.api('POST', base, {
      json: { name: 'My new configuration', configuration: { key: 'value', nested: { a: [1, 2] } }, changeDescription: 'Initial configuration' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'My new configuration',
      description: '',
      created: expect.stringMatching(TIMESTAMP),
      creatorToken: CREATOR,
      version: 1,
      changeDescription: 'Initial configuration',
      isDisabled: false,
      isDeleted: false,
      configuration: { key: 'value', nested: { a: [1, 2] } },
      state: {},
      currentVersion: {
        created: expect.stringMatching(TIMESTAMP),
        creatorToken: CREATOR,
        changeDescription: 'Initial configuration',
        versionIdentifier: expect.stringMatching(VERSION_ID),
      },
      rowsSortOrder: [],
    });
    const detail = await env.api('GET', `${base}/${res.body.id}`);
    expect(detail.body).toEqual({ ...res.body, rows: [] });
    expect((await env.api('GET', base)).body).toEqual([detail.body]);
    expect((await env.api('GET', `/components/keboola.ex-db-mysql/configs/${res.body.id}`)).body).toEqual(detail.body);
    const index = (await env.api('GET', '', { token: null })).body;
    expect(index.components).toEqual([expect.objectContaining({ id: 'keboola.ex-db-mysql' })]);
    const components = (await env.api('GET', '/branch/default/components?include=configuration')).body;
    expect(components).toEqual([
      expect.objectContaining({
        id: 'keboola.ex-db-mysql',
        configurations: [expect.objectContaining({ id: res.body.id, configuration: { key: 'value', nested: { a: [1, 2] } } })],
      }),
    ]);
  });

  test('a configuration with its own id (form-encoded, configuration as a JSON string, as the PHP client sends it); a second one of that id is 400', async () => {
    const res = await env.api('POST', base, { form: { name: 'Main1', configurationId: 'main-1', configuration: '{"x":"y"}' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: 'main-1', configuration: { x: 'y' }, version: 1, changeDescription: '' });
    const again = await env.api('POST', base, { json: { name: 'Main1', configurationId: 'main-1' } });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('storage.components.configurations.alreadyExists');
  });

  test('PUT makes a version with its change description; rows add, change and delete versions too; versions list newest first', async () => {
    const put = await env.api('PUT', `${base}/main-1`, { json: { configuration: { x: 'z' }, changeDescription: 'x is z' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ version: 2, changeDescription: 'x is z', configuration: { x: 'z' } });
    const stateOnly = await env.api('PUT', `${base}/main-1`, { json: { state: { cursor: 5 } } });
    expect(stateOnly.body).toMatchObject({ version: 2, state: { cursor: 5 } });

    const row = await env.api('POST', `${base}/main-1/rows`, { json: { rowId: 'row1', name: 'first', configuration: { key2: 'val2' } } });
    expect(row.status).toBe(201);
    // a row created without a state has none: null, as on the service (issue 39)
    expect(row.body).toEqual({
      id: 'row1',
      name: 'first',
      description: '',
      configuration: { key2: 'val2' },
      state: null,
      isDisabled: false,
      version: 1,
      created: expect.stringMatching(TIMESTAMP),
      creatorToken: CREATOR,
      changeDescription: '',
    });
    expect((await env.api('GET', `${base}/main-1`)).body).toMatchObject({ version: 3, changeDescription: 'Row row1 added', rows: [row.body] });
    const changed = await env.api('PUT', `${base}/main-1/rows/row1`, { json: { configuration: { key2: 'v3' }, changeDescription: 'row tuned' } });
    expect(changed.body).toMatchObject({ id: 'row1', version: 2, configuration: { key2: 'v3' }, changeDescription: 'row tuned' });
    expect((await env.api('GET', `${base}/main-1/rows`)).body).toEqual([changed.body]);
    expect((await env.api('GET', `${base}/main-1/rows/row1`)).body).toEqual(changed.body);
    expect((await env.api('DELETE', `${base}/main-1/rows/row1`)).status).toBe(204);
    expect((await env.api('GET', `${base}/main-1/rows/row1`)).status).toBe(404);

    const versions = (await env.api('GET', `${base}/main-1/versions`)).body;
    expect(versions.map((v: Json) => [v.version, v.changeDescription])).toEqual([
      [5, 'Row row1 deleted'],
      [4, 'row tuned'],
      [3, 'Row row1 added'],
      [2, 'x is z'],
      [1, ''],
    ]);
    expect(versions[3]).toEqual({
      version: 2,
      created: expect.stringMatching(TIMESTAMP),
      versionIdentifier: expect.stringMatching(VERSION_ID),
      creatorToken: CREATOR,
      changeDescription: 'x is z',
      isDeleted: false,
      name: 'Main1',
      description: '',
    });
    const first = (await env.api('GET', `${base}/main-1/versions/1`)).body;
    expect(first).toMatchObject({ version: 1, configuration: { x: 'y' }, rows: [] });
  });

  test('DELETE marks a configuration deleted (listed with isDeleted=true), a second DELETE purges it; an unknown one is 404', async () => {
    expect((await env.api('DELETE', `${base}/main-1`)).status).toBe(204);
    expect((await env.api('GET', `${base}/main-1`)).status).toBe(404);
    expect((await env.api('GET', base)).body.map((c: Json) => c.id)).not.toContain('main-1');
    expect((await env.api('GET', `${base}?isDeleted=true`)).body).toEqual([
      expect.objectContaining({ id: 'main-1', isDeleted: true, version: 6, changeDescription: 'Configuration deleted' }),
    ]);
    expect((await env.api('DELETE', `${base}/main-1`)).status).toBe(204);
    expect((await env.api('GET', `${base}?isDeleted=true`)).body).toEqual([]);
    const missing = await env.api('GET', `${base}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'storage.components.configurations.notFound', error: 'Configuration nope not found' });
  });

  test('a token without componentAccess gets 403; one with componentAccess to the component may use it', async () => {
    const limited = (await env.api('POST', '/tokens', { json: { description: 'no access' } })).body.token;
    const denied = await client(env.emulator)('GET', base, { token: limited });
    expect(denied.status).toBe(403);
    const allowed = (await env.api('POST', '/tokens', { json: { description: 'access', componentAccess: ['keboola.ex-db-mysql'] } })).body.token;
    expect((await client(env.emulator)('GET', base, { token: allowed })).status).toBe(200);
    expect((await client(env.emulator)('GET', base, { token: TOKEN })).status).toBe(200);
  });

  test('triggers: POST answers 201 in the documented shape, list filters by component and configuration, PUT changes, DELETE removes', async () => {
    await createBucket(env.api, 'trig');
    await createTable(env.api, 'in.c-trig', 'watched', 'id\n1\n');
    const res = await env.api('POST', '/triggers', {
      json: { runWithTokenId: 101, component: 'orchestration', configurationId: '123', coolDownPeriodMinutes: 20, tableIds: ['in.c-trig.watched'] },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      runWithTokenId: 101,
      component: 'orchestration',
      configurationId: '123',
      lastRun: null,
      coolDownPeriodMinutes: 20,
      creatorToken: CREATOR,
      tables: [{ tableId: 'in.c-trig.watched' }],
    });
    expect((await env.api('GET', `/triggers/${res.body.id}`)).body).toEqual(res.body);
    expect((await env.api('GET', '/triggers?component=orchestration&configurationId=123')).body).toEqual([res.body]);
    expect((await env.api('GET', '/triggers?configurationId=other')).body).toEqual([]);
    const put = await env.api('PUT', `/triggers/${res.body.id}`, { json: { coolDownPeriodMinutes: 5 } });
    expect(put.body).toEqual({ ...res.body, coolDownPeriodMinutes: 5 });
    const bad = await env.api('POST', '/triggers', {
      json: { runWithTokenId: 101, component: 'orchestration', configurationId: '1', coolDownPeriodMinutes: 0, tableIds: ['in.c-trig.nope'] },
    });
    expect(bad.status).toBe(400);
    expect((await env.api('DELETE', `/triggers/${res.body.id}`)).status).toBe(204);
    expect((await env.api('GET', `/triggers/${res.body.id}`)).status).toBe(404);
  });

  describe('components as the service lists them (issue 39)', () => {
    test('listed components carry uri, type and name: ex-generic-v2 is extractor / Generic, an unknown id other / its id; the detail is served', async () => {
      const generic = await env.api('POST', '/branch/default/components/ex-generic-v2/configs', {
        json: { name: 'API', configuration: { parameters: { api: { baseUrl: 'https://example.com/' } } } },
      });
      expect(generic.status).toBe(201);
      expect((await env.api('POST', '/branch/default/components/acme.custom/configs', { json: { name: 'Custom' } })).status).toBe(201);
      const components = (await env.api('GET', '/branch/default/components')).body;
      const byId = Object.fromEntries(components.map((c: Json) => [c.id, c]));
      expect(byId['ex-generic-v2']).toMatchObject({
        id: 'ex-generic-v2',
        type: 'extractor',
        name: 'Generic',
        uri: `${env.emulator.url}/v2/storage/components/ex-generic-v2`,
        configurations: [expect.objectContaining({ id: generic.body.id, name: 'API' })],
      });
      expect(byId['acme.custom']).toMatchObject({
        id: 'acme.custom',
        type: 'other',
        name: 'acme.custom',
        uri: `${env.emulator.url}/v2/storage/components/acme.custom`,
      });
      expect(byId['keboola.ex-db-mysql']).toMatchObject({ type: 'extractor', name: 'MySQL' });
      const detail = await env.api('GET', '/branch/default/components/ex-generic-v2');
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({
        id: 'ex-generic-v2',
        type: 'extractor',
        name: 'Generic',
        uri: `${env.emulator.url}/v2/storage/components/ex-generic-v2`,
      });
      expect((await env.api('GET', '', { token: null })).body.components).toContainEqual({
        id: 'ex-generic-v2',
        type: 'extractor',
        name: 'Generic',
        uri: `${env.emulator.url}/v2/storage/components/ex-generic-v2`,
      });
    });

    test('the configurations of a component that does not exist are 404 storage.components.notFound; a known component without configurations lists []', async () => {
      for (const path of [
        '/branch/default/components/no.such-component/configs',
        '/components/no.such-component/configs',
        '/branch/default/components/no.such-component',
      ]) {
        const res = await env.api('GET', path);
        expect([path, res.status, res.body.code, res.body.error]).toEqual([
          path,
          404,
          'storage.components.notFound',
          'Component "no.such-component" not found',
        ]);
      }
      const known = await env.api('GET', '/branch/default/components/keboola.ex-http/configs');
      expect([known.status, known.body]).toEqual([200, []]);
    });

    test('configuration metadata: POST answers 201 with all entries {id, key, value, timestamp}, a key set again changes its value; GET lists; DELETE removes one', async () => {
      const cfg = (await env.api('POST', '/branch/default/components/ex-generic-v2/configs', { json: { name: 'With metadata' } })).body;
      const path = `/branch/default/components/ex-generic-v2/configs/${cfg.id}/metadata`;
      const res = await env.api('POST', path, {
        json: {
          metadata: [
            { key: 'KBC.configuration.folderName', value: 'Sales' },
            { key: 'owner', value: 'ann' },
          ],
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual([
        { id: expect.stringMatching(/^\d+$/), key: 'KBC.configuration.folderName', value: 'Sales', timestamp: expect.stringMatching(TIMESTAMP) },
        { id: expect.stringMatching(/^\d+$/), key: 'owner', value: 'ann', timestamp: expect.stringMatching(TIMESTAMP) },
      ]);
      const again = await env.api('POST', path, { json: { metadata: [{ key: 'owner', value: 'bob' }] } });
      expect(again.body.map((m: Json) => [m.id, m.key, m.value])).toEqual([
        [res.body[0].id, 'KBC.configuration.folderName', 'Sales'],
        [res.body[1].id, 'owner', 'bob'],
      ]);
      expect((await env.api('GET', path)).body).toEqual(again.body);
      expect((await env.api('DELETE', `${path}/${res.body[1].id}`)).status).toBe(204);
      expect((await env.api('GET', path)).body.map((m: Json) => m.key)).toEqual(['KBC.configuration.folderName']);
      expect((await env.api('DELETE', `${path}/${res.body[1].id}`)).status).toBe(404);
      const bad = await env.api('POST', path, { json: { metadata: [{ key: 'no spaces', value: 'x' }] } });
      expect(bad.status).toBe(400);
      expect((await env.api('GET', '/branch/default/components/ex-generic-v2/configs/nope/metadata')).status).toBe(404);
    });

    test('search/component-configurations finds configurations by component, id and metadata keys; include=filteredMetadata adds the matching entries', async () => {
      const all = (await env.api('GET', '/branch/default/search/component-configurations')).body;
      expect(all).toEqual(
        expect.arrayContaining([
          { idComponent: 'ex-generic-v2', configurationId: expect.any(String) },
          { idComponent: 'acme.custom', configurationId: expect.any(String) },
        ]),
      );
      const generic = (await env.api('GET', '/branch/default/search/component-configurations?componentId=ex-generic-v2')).body;
      expect(new Set(generic.map((c: Json) => c.idComponent))).toEqual(new Set(['ex-generic-v2']));
      expect(generic).toHaveLength(2);
      const byKey = (
        await env.api('GET', '/branch/default/search/component-configurations?metadataKeys[]=KBC.configuration.folderName&include=filteredMetadata')
      ).body;
      expect(byKey).toEqual([
        {
          idComponent: 'ex-generic-v2',
          configurationId: expect.any(String),
          metadata: [{ id: expect.any(String), key: 'KBC.configuration.folderName', value: 'Sales', timestamp: expect.stringMatching(TIMESTAMP) }],
        },
      ]);
      const byId = (await env.api('GET', `/branch/default/search/component-configurations?configurationId=${byKey[0].configurationId}`)).body;
      expect(byId).toEqual([{ idComponent: 'ex-generic-v2', configurationId: byKey[0].configurationId }]);
      // a branch-only route, as on the service
      expect((await env.api('GET', '/search/component-configurations')).status).toBe(404);
    });

    test('GET components filters by componentType', async () => {
      const extractors = (await env.api('GET', '/branch/default/components?componentType=extractor')).body.map((c: Json) => c.id);
      expect(extractors).toEqual(['ex-generic-v2', 'keboola.ex-db-mysql']);
      expect((await env.api('GET', '/branch/default/components?componentType=writer')).body).toEqual([]);
    });

    test('PUT …/configs/{id}/state and …/rows/{rowId}/state replace the state without a new version, answering the configuration and the row', async () => {
      const cfg = (await env.api('POST', '/branch/default/components/ex-generic-v2/configs', { json: { name: 'Stateful' } })).body;
      const path = `/branch/default/components/ex-generic-v2/configs/${cfg.id}`;
      const res = await env.api('PUT', `${path}/state`, { json: { state: { lastId: 123 } } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: cfg.id, version: 1, state: { lastId: 123 }, rows: [] });
      await env.api('POST', `${path}/rows`, { json: { rowId: 'r1', name: 'row' } });
      const row = await env.api('PUT', `${path}/rows/r1/state`, { json: { state: { cursor: 'x' } } });
      expect(row.status).toBe(200);
      expect(row.body).toMatchObject({ id: 'r1', version: 1, state: { cursor: 'x' } });
      expect((await env.api('GET', path)).body).toMatchObject({
        version: 2,
        state: { lastId: 123 },
        rows: [expect.objectContaining({ id: 'r1', state: { cursor: 'x' } })],
      });
      const missing = await env.api('PUT', `${path}/state`, { json: {} });
      expect([missing.status, missing.body.code]).toEqual([400, 'storage.components.validation']);
    });
  });
});
