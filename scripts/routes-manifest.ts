// npm run routes:manifest: writes src/wiring/routes-manifest.ts, the method, path, auth and area of every route of the
// lazy route groups (src/wiring/lazy-routes.ts), read from the groups themselves (each routes file imported and its
// group built, in an emulator assembled in memory, nothing started). test/unit/lazy-routes.test.ts fails when the file
// differs from what this script writes.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { routesOf, stopUnits } from '../src/wiring/area.ts';
import { assemble } from '../src/wiring/assemble.ts';
import { LazyRoutes } from '../src/wiring/lazy-routes.ts';
import { createState } from '../src/wiring/state.ts';

export const MANIFEST = fileURLToPath(new URL('../src/wiring/routes-manifest.ts', import.meta.url));

const HEAD = `// Written by \`npm run routes:manifest\` (scripts/routes-manifest.ts) from the lazy route groups (lazy-routes.ts): do not
// edit. Each group's routes in declaration order: methods, path, auth, area.
import { type RouteAuth } from '../http/api-routes.ts';

export type ManifestRoute = readonly [methods: readonly string[], path: string, auth: RouteAuth, area: string];
`;

/** The manifest's source, one line a route, from an emulator built in memory with every optional area on. */
export async function manifestSource(): Promise<string> {
  const config = loadConfig({ ignoreDefaultFile: true, env: {}, overrides: { inMemory: true, logLevel: 'silent' } });
  const shared = createState(config, {});
  const { units } = assemble(shared);
  try {
    const groups = routesOf(units).filter((r): r is LazyRoutes => r instanceof LazyRoutes);
    const lines = [`${HEAD}\nexport const ROUTES_MANIFEST: Readonly<Record<string, readonly ManifestRoute[]>> = {`];
    for (const group of groups) {
      lines.push(`  ${group.key}: [`);
      for (const route of await group.actualRoutes()) lines.push(`    ${JSON.stringify(route).replaceAll('"', "'")},`);
      lines.push('  ],');
    }
    lines.push('};\n');
    return formatted(lines.join('\n'));
  } finally {
    await stopUnits(units, shared.logger);
  }
}

/** The source as the repository's formatter writes it (npm run lint checks the file like any other). */
function formatted(source: string): string {
  const biome = fileURLToPath(new URL('../node_modules/.bin/biome', import.meta.url));
  return execFileSync(biome, ['format', `--stdin-file-path=${MANIFEST}`], { input: source, encoding: 'utf8' });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const next = await manifestSource();
  const changed = next !== readFileSync(MANIFEST, 'utf8');
  if (changed) writeFileSync(MANIFEST, next);
  console.log(changed ? 'src/wiring/routes-manifest.ts written' : 'src/wiring/routes-manifest.ts is up to date');
  // As docs:areas: the areas were built, never started; a handle opened while building them is not closed by stop().
  process.exit(0);
}
