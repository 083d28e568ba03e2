/**
 * `node -r ./scripts/ts-register.js test/harness/ge-examples/report.ts [regex]`: runs the reference extractor's
 * documentation examples (all, or the folders matching `regex`) and prints one line per example and the count.
 */
import { startMockApi } from './mock-api';
import { EXAMPLES_DIR, exampleFolders, runExample } from './run-example';

async function main(filter?: string): Promise<void> {
  const mock = await startMockApi(EXAMPLES_DIR);
  const folders = exampleFolders().filter((f) => !filter || new RegExp(filter).test(f));
  const counts: Record<string, number> = {};
  try {
    for (const folder of folders) {
      const outcome = await runExample(folder, mock);
      counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
      const detail = outcome.status === 'pass' ? '' : outcome.status === 'differs' ? outcome.differences.join(' | ') : outcome.message;
      process.stdout.write(`${folder.padEnd(48)} ${outcome.status.padEnd(9)} ${detail.replace(/\s+/g, ' ').slice(0, 400)}\n`);
    }
  } finally {
    await mock.close();
  }
  process.stdout.write(`\n${counts.pass ?? 0} of ${folders.length} pass; ${JSON.stringify(counts)}\n`);
}

void main(process.argv[2]);
