/** `sapi-temporal extract-state show|reset|import`: the run state in the workers' stage store (a local folder here). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStateCommand, stageStoreFromEnv } from '../../../src/cli/extract-state-run';
import { extractInput, importStateOf } from '../../../src/cli/extract';

function store() {
  const dir = mkdtempSync(join(tmpdir(), 'extract-state-cli-'));
  return { dir, store: stageStoreFromEnv({ SAPI_STAGING_URL: join(dir, 'staging') }) };
}

describe('sapi-temporal extract-state', () => {
  it('imports a reference state.json, shows it, resets it', async () => {
    const { dir, store: s } = store();
    const file = join(dir, 'state.json');
    writeFileSync(
      file,
      JSON.stringify({ time: { previousStart: 1492606006 }, 'json_parser.struct': { users: { id: 'scalar' } }, 'json_parser.structVersion': 2 }),
    );
    expect(await runStateCommand(s, 'show', 'cfg')).toBe("no run state stored for 'cfg' (the next run starts with previousStart 0)");
    expect(await runStateCommand(s, 'import', 'cfg', file)).toBe(
      `stored ${join(dir, 'staging', 'run-state', 'cfg.json')}: the next run of 'cfg' starts with previousStart 1492606006`,
    );
    expect(JSON.parse(await runStateCommand(s, 'show', 'cfg'))).toEqual({
      time: { previousStart: 1492606006 },
      'json_parser.struct': { users: { id: 'scalar' } },
      'json_parser.structVersion': 2,
    });
    await runStateCommand(s, 'reset', 'cfg');
    expect(await runStateCommand(s, 'show', 'cfg')).toMatch(/^no run state stored/);
  });

  it('refuses a file that is not a state, saying what is wrong', async () => {
    const { dir, store: s } = store();
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ time: { previousStart: 'yesterday' } }));
    await expect(runStateCommand(s, 'import', 'cfg', file)).rejects.toThrow(/'time\.previousStart' must be Unix seconds/);
  });
});

describe('sapi-temporal extract --state-key / --import-state / --reset-state', () => {
  it('puts the state key and the state to start from in the workflow input', () => {
    const { dir } = store();
    const file = join(dir, 'state.json');
    writeFileSync(file, '{"time": {"previousStart": 5}}');
    expect(extractInput({}, { load: true, stateKey: 'cfg', importState: file })).toMatchObject({
      stateKey: 'cfg',
      importState: { time: { previousStart: 5 } },
    });
    expect(extractInput({}, { load: true, stateKey: 'cfg', resetState: true })).toMatchObject({ stateKey: 'cfg', importState: {} });
    expect(extractInput({}, { load: true, stateKey: 'cfg' })).not.toHaveProperty('importState');
  });

  it('refuses --reset-state or --import-state without --state-key, and both together', () => {
    expect(() => importStateOf({ resetState: true })).toThrow(/need --state-key/);
    expect(() => importStateOf({ stateKey: 'k', resetState: true, importState: 'x.json' })).toThrow(/either --reset-state or --import-state/);
  });
});
