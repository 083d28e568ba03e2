/**
 * `sapi-temporal backfill extract|import` inputs: the configuration validated as its first window runs it, and a
 * backfill that would clobber (a replacing load, a bad range, a file twice) refused before anything starts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backfillExtractInput, backfillImportInput, type BackfillExtractFlags } from '../../../src/cli/backfill';
import { cancelRefusal } from '../../../src/cli/control';
import type { ExtractProgress } from '../../../src/contracts/extract';

const dir = mkdtempSync(join(tmpdir(), 'backfill-cli-'));
const job = (params: Record<string, unknown>) => ({ endpoint: 'events', dataField: 'events', params });
function configFile(name: string, incremental: boolean, params: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      parameters: { api: { baseUrl: 'https://api.example.com/' }, config: { outputBucket: 'ev', incrementalOutput: incremental, jobs: [job(params)] } },
    }),
  );
  return path;
}
const flags = (more: Partial<BackfillExtractFlags> = {}) =>
  ({ from: '2025-01-01', to: '2025-02-01', window: 'P7D', load: true, ...more }) as BackfillExtractFlags;

describe('backfill command inputs', () => {
  it('builds the extraction backfill, validating the configuration with the first window in parameters.config.backfill', () => {
    const path = configFile('ok.json', true, { from: { attr: 'backfill.from' }, to: { attr: 'backfill.to' } });
    const input = backfillExtractInput(path, flags({ parallel: 2, stateKey: 'live', advanceState: true }));
    expect(input).toMatchObject({
      kind: 'extract',
      from: '2025-01-01',
      to: '2025-02-01',
      window: 'P7D',
      parallel: 2,
      advanceState: true,
      extract: { stateKey: 'live' },
    });
  });

  it('refuses a reference to a window key that does not exist, a replacing load and a bad window, before anything starts', () => {
    expect(() => backfillExtractInput(configFile('typo.json', true, { from: { attr: 'backfill.start' } }), flags())).toThrow(
      /SAPI_EXTRACT_CONFIG_INVALID|backfill\.start/,
    );
    expect(() => backfillExtractInput(configFile('full.json', false, { from: { attr: 'backfill.from' } }), flags())).toThrow(/--incremental/);
    expect(() => backfillExtractInput(configFile('w.json', true, {}), flags({ window: '1w' }))).toThrow(/window must be an ISO 8601 duration/);
    expect(() => backfillExtractInput(configFile('adv.json', true, {}), flags({ advanceState: true }))).toThrow(/advanceState needs extract.stateKey/);
  });

  it('builds an import backfill with absolute local sources, loading into the existing table, and refuses one without --incremental', () => {
    const input = backfillImportInput(
      ['a.csv', 's3://bucket/b.csv'],
      { bucket: 'in.c-main', table: 'orders', incremental: true, parallel: 3 } as never,
      '/data',
    );
    expect(input).toEqual({
      kind: 'import',
      import: { bucketId: 'in.c-main', table: 'orders', mode: 'load', incremental: true },
      sources: ['/data/a.csv', 's3://bucket/b.csv'],
      parallel: 3,
    });
    expect(() => backfillImportInput(['a.csv'], { bucket: 'in.c-main', table: 'orders' } as never, '/data')).toThrow(/import.incremental must be true/);
  });

  it('lets a running or paused backfill be cancelled, not one that ended', () => {
    const state = (phase: string) => ({ phase }) as unknown as ExtractProgress;
    expect(cancelRefusal('backfillWorkflow', state('running'))).toBeUndefined();
    expect(cancelRefusal('backfillWorkflow', state('paused'))).toBeUndefined();
    expect(cancelRefusal('backfillWorkflow', state('done'))).toBe('cannot cancel: the backfill is done');
  });
});
