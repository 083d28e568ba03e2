// Prints the fault matrix's summary table from the results the matrix test files wrote (`make test-matrix` runs it
// after jest) and writes .data/fault-matrix/summary.json. Lists n/a cells with their reasons when given --na.
import { formatSummary, readAllResults, writeSummary } from './summary';

const all = readAllResults();
if (all.length === 0) {
  process.stdout.write('fault matrix: no results under .data/fault-matrix (did the matrix run?)\n');
} else {
  process.stdout.write(`\nThe fault matrix\n${formatSummary(all, { listNa: process.argv.includes('--na') })}\n`);
  process.stdout.write(`summary written to ${writeSummary(all)}\n`);
}
