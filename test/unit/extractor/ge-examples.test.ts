/**
 * Conformance with the reference extractor's own documentation examples (`../shared/ge-examples/examples`): each
 * runs through the engine against a mock API following that folder's README, and its tables are compared with the
 * reference's `_sample_out` (names, columns in order, rows in order, primary key, incremental flag).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JUDGED_ELSEWHERE, PASSING } from '../../harness/ge-examples/expected';
import { startMockApi, type MockApi } from '../../harness/ge-examples/mock-api';
import { EXAMPLES_DIR, exampleFolders, runExample, type ExampleOutcome } from '../../harness/ge-examples/run-example';
import { repoRoot } from '../../harness/processes';

describe("the reference extractor's documentation examples", () => {
  let mock: MockApi;
  const outcomes = new Map<string, ExampleOutcome>();
  beforeAll(async () => {
    mock = await startMockApi(EXAMPLES_DIR);
    for (const folder of exampleFolders()) outcomes.set(folder, await runExample(folder, mock));
  });
  afterAll(() => mock?.close());

  const judged = () => [...outcomes.keys()].filter((f) => !(f in JUDGED_ELSEWHERE));
  const passing = () => judged().filter((f) => outcomes.get(f)?.status === 'pass');

  it('are all there (143)', () => {
    expect(outcomes.size).toBe(143);
  });

  it.each(PASSING.map((f) => [f]))("%s produces the reference's tables", (folder) => {
    expect(outcomes.get(folder)).toEqual({ status: 'pass' });
  });

  it('every example that passes is listed as passing (test/harness/ge-examples/expected.ts)', () => {
    expect(passing().filter((f) => !PASSING.includes(f))).toEqual([]);
  });

  it('docs/extraction.md states how many pass', () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'extraction.md'), 'utf8');
    expect(doc).toContain(`**${passing().length} of 143** documentation examples`);
  });
});
