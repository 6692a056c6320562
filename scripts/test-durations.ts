// npm run test:durations: records how long each test file took in the last run (vitest's JSON report,
// .vitest-report.json, written by vitest.config.ts) into test/file-durations.json, which the test
// sequencer (test/support/file-order.ts) reads to start the longest files first where vitest's own
// results cache has no figure (a fresh clone, CI). Files the report lacks keep their figure; files
// that no longer exist are dropped. Run it after a whole `npm test` (a run from scratch for CI's order).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DURATIONS_FILE } from '../test/support/file-order.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const reportPath = new URL('../.vitest-report.json', import.meta.url);
if (!existsSync(reportPath)) {
  console.error('no .vitest-report.json: run the tests first (npm test)');
  process.exit(1);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8')) as {
  testResults: { name: string; startTime: number; endTime: number }[];
};
const durations: Record<string, number> = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
/** The path from the repository root; a report of another checkout (a fresh clone's CI run) maps to this one. */
const fromRoot = (name: string) => {
  const path = relative(root, name);
  return path.startsWith('..') ? name.slice(name.lastIndexOf('/test/') + 1) : path;
};
for (const file of report.testResults)
  durations[fromRoot(file.name)] = Math.round((file.endTime - file.startTime) / 100) / 10;
const kept = Object.keys(durations)
  .filter((path) => existsSync(new URL(path, new URL('..', import.meta.url))))
  .sort();
writeFileSync(DURATIONS_FILE, `${JSON.stringify(Object.fromEntries(kept.map((p) => [p, durations[p]])), null, 2)}\n`);
console.log(`test/file-durations.json: ${kept.length} files, ${report.testResults.length} from this report`);
