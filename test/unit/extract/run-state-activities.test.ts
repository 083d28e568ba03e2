/** readRunState / writeRunState against a local staging folder (the stage store's file adapter). */
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ActivityDeps } from '../../../src/activities/deps';
import { readRunState } from '../../../src/activities/extract-read-run-state';
import { writeRunState } from '../../../src/activities/extract-write-run-state';

function deps(): { deps: ActivityDeps; folder: string } {
  const folder = mkdtempSync(join(tmpdir(), 'run-state-'));
  return { deps: { settings: { stagingUrl: folder }, userS3: () => undefined } as unknown as ActivityDeps, folder };
}

const env = () => new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });

describe('run state activities', () => {
  it('reads null before any state was stored, then what was stored', async () => {
    const { deps: d, folder } = deps();
    expect(await env().run(readRunState(d), { stateKey: 'cfg-1' })).toEqual({ state: null, uri: join(folder, 'run-state', 'cfg-1.json') });
    const state = { time: { previousStart: 1504778400 }, 'json_parser.struct': { users: { id: 'scalar' } }, 'json_parser.structVersion': 2 };
    await env().run(writeRunState(d), { stateKey: 'cfg-1', state });
    expect(JSON.parse(readFileSync(join(folder, 'run-state', 'cfg-1.json'), 'utf8'))).toEqual(state);
    expect(((await env().run(readRunState(d), { stateKey: 'cfg-1' })) as { state: unknown }).state).toEqual(state);
  });

  it('fails non-retryably on a stored state that is not valid, naming where it is', async () => {
    const { deps: d, folder } = deps();
    mkdirSync(join(folder, 'run-state'));
    writeFileSync(join(folder, 'run-state', 'cfg.json'), '{"time": {"previousStart": "yesterday"}}');
    await expect(env().run(readRunState(d), { stateKey: 'cfg' })).rejects.toMatchObject({
      message: expect.stringMatching(/run-state\/cfg\.json is invalid: 'time\.previousStart' must be Unix seconds/),
    });
  });

  it('refuses a state key that is not a safe name', async () => {
    const { deps: d } = deps();
    await expect(env().run(writeRunState(d), { stateKey: '../escape', state: { time: { previousStart: 1 } } })).rejects.toMatchObject({
      message: expect.stringMatching(/stateKey must be 1-200 of/),
    });
  });
});
