// npm run docs:areas: writes the table of areas in docs/architecture.md (between its two markers) from the
// area definitions (src/wiring/areas.ts), so the table cannot drift; test/unit/area-registry.test.ts fails
// when the doc's table differs from what this script writes.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AREAS } from '../src/wiring/areas.ts';

export const DOC = fileURLToPath(new URL('../docs/architecture.md', import.meta.url));
export const BEGIN = '<!-- areas:begin (npm run docs:areas writes this table from src/wiring/areas.ts) -->';
export const END = '<!-- areas:end -->';

const list = (names: readonly string[]) => (names.length ? names.map((n) => `\`${n}\``).join(', ') : '—');

/** The table, one row per area in build order. */
export function areasTable(): string {
  const rows = AREAS.map(
    (a, i) =>
      `| ${i + 1} | \`${a.name}\` | ${list(a.folders.map((f) => `modules/${f}`))} | ${list(a.needs)} | ${list(a.later ?? [])} |`,
  );
  return ['| # | area | folders | needs (built before) | later (called back, built after) |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The doc with its table replaced by `table`. */
export function withTable(doc: string, table: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOC}: the markers ${BEGIN} … ${END} are missing`);
  return `${doc.slice(0, start + BEGIN.length)}\n${table}\n${doc.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = readFileSync(DOC, 'utf8');
  const next = withTable(doc, areasTable());
  if (next !== doc) writeFileSync(DOC, next);
  console.log(next === doc ? 'docs/architecture.md: the table of areas is up to date' : 'docs/architecture.md: table of areas written');
}
