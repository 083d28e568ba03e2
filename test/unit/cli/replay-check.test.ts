// `sapi-temporal replay-check --histories`: the saved histories of every past version's paths, replayed by the CLI
// a user runs before a deploy (the same `replayCheck` as the saved-histories test), and a version that would break
// one of them refused with the history named.
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readHistoryFiles } from '../../../src/replay-check';
import { repoRoot, runCli } from '../../harness/processes';
import { SAVED_HISTORIES_DIR } from '../../harness/replay';

jest.setTimeout(180_000);

describe('sapi-temporal replay-check --histories', () => {
  it('replays every saved history on this version: one ok line each, exit 0', async () => {
    const names = readHistoryFiles(SAVED_HISTORIES_DIR).map((h) => h.workflowId);
    const { code, stdout, stderr } = await runCli(['replay-check', '--histories', SAVED_HISTORIES_DIR]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    for (const name of names) expect(stdout).toMatch(new RegExp(`^ok +${name} +\\w+Workflow +\\d+ events$`, 'm'));
    expect(stdout).toContain(`${names.length} of ${names.length} replayed (${SAVED_HISTORIES_DIR}; tracing off)`);
  });

  it('names the history a diverging version would fail, with the non-determinism, and exits 1 (-o json lists each verdict)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-check-'));
    for (const name of ['import-direct-create', 'export-sliced']) copyFileSync(join(SAVED_HISTORIES_DIR, `${name}.json`), join(dir, `${name}.json`));
    const divergent = join(repoRoot, 'test', 'unit', 'workflows', 'divergent-workflows.ts');
    const text = await runCli(['replay-check', '--histories', dir, '--workflows', divergent]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^FAIL +import-direct-create +importTableWorkflow +\d+ events\n +DeterminismViolationError: .*[Nn]ondeterminism/m);
    expect(text.stdout).toContain('of 2 replayed');
    expect(text.stderr).toMatch(/^sapi-temporal: \d of 2 histories do not replay on this version: .*import-direct-create/);

    const json = await runCli(['replay-check', '--histories', dir, '--workflows', divergent, '--json']);
    expect(json.code).toBe(1);
    const { error } = JSON.parse(json.stdout) as { error: { code: string; verdicts: Array<{ workflowId: string; problem?: string }> } };
    expect(error.code).toBe('SAPI_CLI_REPLAY_FAILED');
    expect(error.verdicts.find((v) => v.workflowId === 'import-direct-create')?.problem).toMatch(/^DeterminismViolationError/);
  });

  it('refuses a file that is not a history, naming it', async () => {
    const { code, stderr } = await runCli(['replay-check', '--histories', join(SAVED_HISTORIES_DIR, '..', 'compose-spec', 'compose-spec.json')]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/compose-spec\.json: not a workflow history/);
  });
});
