import { SearchAttributeType } from '@temporalio/common';
import {
  attributeUpdates,
  exportAttributes,
  extractAttributes,
  hostOf,
  importAttributes,
  registerCommand,
  runMetadata,
  searchAttributeDefinitions,
} from '../../../src/contracts/search-attributes';
import { listQuery } from '../../../src/cli/list';
import { withLive } from '../../../src/live-progress';

describe('search attributes and run summaries', () => {
  it('describe every attribute for the dev server and for a real cluster', () => {
    expect(searchAttributeDefinitions()).toEqual(expect.arrayContaining(['SapiTableId=Keyword', 'SapiRows=Int', 'SapiBytes=Int', 'SapiApiHost=Keyword']));
    expect(registerCommand('prod', ['SapiTableId', 'SapiRows'])).toBe(
      'temporal operator search-attribute create --namespace prod --name SapiTableId --type Keyword --name SapiRows --type Int',
    );
  });

  it('derive what an import, an export and an extraction are searchable by, never more than the namespace registered', () => {
    expect(importAttributes({ source: 's3://b/k/orders.csv', bucketId: 'in.c-main', table: 'orders' })).toEqual({
      SapiOperation: 'import',
      SapiTableId: 'in.c-main.orders',
      SapiBucket: 'in.c-main',
      SapiConnection: 'default',
      SapiSourceKind: 's3',
    });
    expect(importAttributes({ source: '/a', slices: ['/a', '/b'], bucketId: 'in.c-x', table: 't', connection: 'eu' })).toMatchObject({
      SapiSourceKind: 'sliced',
      SapiConnection: 'eu',
    });
    expect(exportAttributes({ tableId: 'out.c-x.t', destination: '/tmp/t.csv' })).toMatchObject({ SapiBucket: 'out.c-x', SapiDestinationKind: 'local' });
    expect(extractAttributes({ config: { parameters: { api: { baseUrl: 'https://user:pw@API.crm.example:8443/v1/' } } }, stateKey: 'crm' })).toMatchObject({
      SapiApiHost: 'api.crm.example',
      SapiStateKey: 'crm',
    });
    expect(hostOf('not a url')).toBeUndefined();
    const updates = attributeUpdates({ SapiTableId: 'in.c-x.t', SapiRows: 3, SapiPhase: undefined }, new Set(['SapiRows']));
    expect(updates.map((u) => [u.key.name, u.key.type, u.value])).toEqual([['SapiRows', SearchAttributeType.INT, 3]]);
  });

  it('summarize a run in one line, with the size when known', () => {
    const { staticSummary, staticDetails } = runMetadata(
      { workflowType: 'importTableWorkflow', input: { source: '/data/orders.csv', bucketId: 'in.c-main', table: 'orders' }, sizeBytes: 3_100_000_000 },
      'cli',
    );
    expect(staticSummary).toBe('import orders.csv → in.c-main.orders (direct, 3.1 GB)');
    expect(staticDetails).toContain('**table**: in.c-main.orders');
    expect(
      runMetadata({
        workflowType: 'importTableWorkflow',
        input: { source: 'https://x/y.csv', bucketId: 'in.c-main', table: 'o', mode: 'load', incremental: true, via: 'importer' },
      }).staticSummary,
    ).toBe('import y.csv → in.c-main.o (importer, incremental load)');
    expect(runMetadata({ workflowType: 'exportTableWorkflow', input: { tableId: 'in.c-main.o', destination: 's3://b/o.csv' } }).staticSummary).toBe(
      'export in.c-main.o → o.csv (s3)',
    );
  });

  it('build the list query from the filters, quoting values', () => {
    expect(listQuery({})).toBe('WorkflowType IN ("importTableWorkflow", "exportTableWorkflow", "extractWorkflow", "backfillWorkflow")');
    expect(listQuery({ table: 'in.c-x."t"', operation: 'import', status: 'running', apiHost: 'API.example' })).toBe(
      'WorkflowType IN ("importTableWorkflow", "exportTableWorkflow", "extractWorkflow", "backfillWorkflow") AND SapiTableId = "in.c-x.\\"t\\"" AND SapiOperation = "import" AND SapiApiHost = "api.example" AND ExecutionStatus = "Running"',
    );
  });

  it('add the heartbeat of the step in flight to the progress query answer', () => {
    expect(withLive({ phase: 'uploading', bytes: 0 }, { kind: 'transfer', report: { bytes: 500, totalBytes: 1000 } })).toEqual({
      phase: 'uploading',
      bytes: 500,
      totalBytes: 1000,
    });
    expect(withLive({ phase: 'importing', bytes: 1000 }, { kind: 'transfer', report: { bytes: 500 } })).toEqual({ phase: 'importing', bytes: 1000 });
    expect(
      withLive(
        { phase: 'extracting', bytes: 10, pages: 2, records: 20, tables: { users: 20 } },
        { kind: 'batch', page: 5, cursor: '6', pages: 3, records: 30, bytes: 5, rows: { users: 30 } },
      ),
    ).toEqual({
      phase: 'extracting',
      bytes: 15,
      pages: 5,
      records: 50,
      page: 5,
      cursor: '6',
      tables: { users: 50 },
    });
  });

  it('leave out a heartbeat its batch was already counted by (no progress running backwards)', () => {
    // the batch ended at page 13 and the checkpoint counts it; the heartbeat read before still says page 13, 4 pages
    const counted = { phase: 'extracting' as const, bytes: 130, pages: 13, records: 130, page: 13, cursor: '14' };
    expect(withLive(counted, { kind: 'batch', page: 13, cursor: '14', pages: 4, records: 40, bytes: 40, rows: {} })).toEqual(counted);
    // the next batch in flight is added
    expect(withLive(counted, { kind: 'batch', page: 15, cursor: '16', pages: 2, records: 20, bytes: 20, rows: {} })).toMatchObject({ pages: 15, page: 15 });
  });

  it("add a batch of child runs only while the run still waits for that very batch (the parent's page and cursor stay)", () => {
    // the parent's page 1 waits for its children; a batch from child 0 runs as runs 2… (tag c2:0)
    const waiting = { phase: 'extracting' as const, bytes: 10, pages: 1, records: 5, page: 0, cursor: null, childBatch: 'c2:0' };
    const live = { kind: 'batch' as const, page: 1, cursor: null, pages: 300, records: 600, bytes: 900, rows: {}, childBatch: 'c2:0' };
    expect(withLive(waiting, live)).toEqual({ ...waiting, pages: 301, records: 605, bytes: 910 });
    // once the batch is counted, the run waits for the next one (c302:300): the old heartbeat is left out
    const counted = { ...waiting, pages: 301, records: 605, bytes: 910, childBatch: 'c302:300' };
    expect(withLive(counted, live)).toEqual(counted);
    // (nor is it added once the children are done and the parent pages on)
    expect(withLive({ ...counted, childBatch: undefined, page: 1 }, live)).toEqual({ ...counted, childBatch: undefined, page: 1 });
  });
});
