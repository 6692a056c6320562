// npm run docs:areas: writes the table of areas in docs/architecture.md (between its two markers) from the
// area definitions (src/wiring/areas.ts), so the table cannot drift; test/unit/area-registry.test.ts fails
// when the doc's table differs from what this script writes.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { stopUnits } from '../src/wiring/area.ts';
import { AREAS } from '../src/wiring/areas.ts';
import { assemble } from '../src/wiring/assemble.ts';
import { createState } from '../src/wiring/state.ts';

export const DOC = fileURLToPath(new URL('../docs/architecture.md', import.meta.url));
export const BEGIN = '<!-- areas:begin (npm run docs:areas writes this table from src/wiring/areas.ts) -->';
export const END = '<!-- areas:end -->';

const list = (names: readonly string[]) => (names.length ? names.map((n) => `\`${n}\``).join(', ') : '—');

/** The table, one row per area in build order; the units are read from an emulator built in memory (nothing started). */
export async function areasTable(): Promise<string> {
  const config = loadConfig({ ignoreDefaultFile: true, env: {}, overrides: { inMemory: true, logLevel: 'silent' } });
  const shared = createState(config, {});
  const { units, unitsOf } = assemble(shared);
  try {
    const rows = AREAS.map((a, i) => {
      const folders = list(a.folders.map((f) => `modules/${f}`));
      return `| ${i + 1} | \`${a.name}\` | ${folders} | ${list(a.needs)} | ${list(a.later ?? [])} | ${list(unitsOf(a.name))} |`;
    });
    const head =
      '| # | area | folders | needs (built before) | later (called back, built after) | units (in LIFECYCLE) |';
    return [head, '|---|---|---|---|---|---|', ...rows].join('\n');
  } finally {
    await stopUnits(units, shared.logger);
  }
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
  const next = withTable(doc, await areasTable());
  if (next !== doc) writeFileSync(DOC, next);
  console.log(
    next === doc
      ? 'docs/architecture.md: the table of areas is up to date'
      : 'docs/architecture.md: table of areas written',
  );
  // The areas were built, never started: a handle opened while building them (a MessagePort, not from src/) is not closed
  // by stop(), which the emulator's process does not need either. The script is done.
  process.exit(0);
}
