import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { areasTable, DOC, withTable } from '../../scripts/docs-areas.ts';
import { AREAS } from '../../src/wiring/areas.ts';
import { assemble } from '../../src/wiring/assemble.ts';
import { type AreaDefinition, type AreaName, AreaNotBuilt, defineArea } from '../../src/wiring/define-area.ts';
import { LIFECYCLE } from '../../src/wiring/lifecycle.ts';
import { createState } from '../../src/wiring/state.ts';
import { testConfig } from '../harness.ts';
import { FakeRuntime } from '../support/fake-runtime.ts';

// The shape of the wiring (src/wiring/areas.ts): who builds which folder, who needs whom, in which order.
const modules = readdirSync(new URL('../../src/modules/', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

function sharedState() {
  return createState(testConfig(), { runtime: new FakeRuntime() });
}

describe('the areas (src/wiring/areas.ts)', () => {
  it('every src/modules folder is claimed by exactly one area, and every claimed folder exists', () => {
    const claims = AREAS.flatMap((a) => a.folders.map((f) => [f, a.name] as const));
    const byFolder = new Map<string, string[]>();
    for (const [f, area] of claims) byFolder.set(f, [...(byFolder.get(f) ?? []), area]);
    expect(modules.length).toBeGreaterThan(20);
    for (const m of modules) expect(byFolder.get(m), `src/modules/${m}`).toHaveLength(1);
    expect([...byFolder.keys()].filter((f) => !modules.includes(f))).toEqual([]);
  });

  it('names are unique; every need is an area listed before; every later one is listed after', () => {
    const names: string[] = AREAS.map((a) => a.name);
    expect(new Set(names).size).toBe(names.length);
    AREAS.forEach((a, i) => {
      for (const need of a.needs) expect(names.indexOf(need), `${a.name} needs ${need}`).toBeGreaterThanOrEqual(0);
      for (const need of a.needs) expect(names.indexOf(need), `${a.name} needs ${need}`).toBeLessThan(i);
      for (const l of a.later ?? []) expect(names.indexOf(l), `${a.name} calls ${l} later`).toBeGreaterThan(i);
    });
  });

  it('builds every area; its units are exactly those LIFECYCLE lists, in its order', () => {
    const shared = sharedState();
    try {
      const { units, area, appHooks } = assemble(shared);
      expect(units.map((u) => u.name)).toEqual([...LIFECYCLE]);
      expect(typeof area('logs').append).toBe('function');
      // The containers area's hooks come first (removing containers before the addon servers).
      expect(appHooks.length).toBeGreaterThanOrEqual(5);
      expect(appHooks[0].beforeDelete).toBeTypeOf('function');
    } finally {
      shared.db.close();
    }
  });

  it('the table of areas in docs/architecture.md is the one npm run docs:areas writes', async () => {
    const doc = readFileSync(DOC, 'utf8');
    const table = await areasTable();
    expect(withTable(doc, table), 'run npm run docs:areas').toBe(doc);
    expect(table).toContain('| `logs` | `modules/logs`, `modules/drains` |');
    expect(table).toContain('`addon-servers`, `addons` |');
  });
});

// Every area file in src/wiring/ (the ones calling defineArea), read as text: the wiring's one builder shape and
// its import graph are properties of the source, not of what the builders return.
const WIRING = new URL('../../src/wiring/', import.meta.url);
const wiringFiles = readdirSync(WIRING).filter((f) => f.endsWith('.ts'));
const sourceOf = (file: string) => readFileSync(new URL(file, WIRING), 'utf8');

/** Why an area file's builder is not `build(shared, deps) { … }` inside its defineArea call; empty when it is. */
function builderShapeProblems(source: string): string[] {
  const problems: string[] = [];
  const methods = source.match(/^ {2}build\((shared|shared, deps)\) \{$/gm) ?? [];
  if (methods.length !== 1) problems.push(`${methods.length} \`build(shared, deps) {\` methods (one expected)`);
  if (/\bbuild\s*:/.test(source)) problems.push('a `build:` property (write the method `build(shared, deps) { … }`)');
  // A builder outside the definition: a function taking the shared state, or callbacks handed in as a third argument.
  for (const m of source.matchAll(/function (\w+)\([^)]*: Shared\b/g)) problems.push(`function ${m[1]} takes Shared`);
  for (const m of source.matchAll(/interface (\w+(?:Needs|Later))\b/g))
    problems.push(`interface ${m[1]} repeats the area's needs (deps is typed from \`needs\`)`);
  if (/export type \w+ = ReturnType<typeof build/.test(source)) problems.push('an API inferred from its builder');
  return problems;
}

/** The first import cycle among src/wiring/ files (static, type-only and dynamic imports), or null. */
function importCycle(files: Map<string, string>): string[] | null {
  const edges = new Map<string, string[]>();
  for (const [file, source] of files) {
    const targets = [...source.matchAll(/(?:from|import\()\s*'\.\/([\w.-]+\.ts)'/g)].map((m) => m[1]);
    edges.set(
      file,
      targets.filter((t) => files.has(t)),
    );
  }
  const done = new Set<string>();
  const visit = (file: string, path: string[]): string[] | null => {
    if (path.includes(file)) return [...path.slice(path.indexOf(file)), file];
    if (done.has(file)) return null;
    for (const next of edges.get(file) ?? []) {
      const cycle = visit(next, [...path, file]);
      if (cycle) return cycle;
    }
    done.add(file);
    return null;
  };
  for (const file of files.keys()) {
    const cycle = visit(file, []);
    if (cycle) return cycle;
  }
  return null;
}

describe('the wiring files (src/wiring/)', () => {
  const areaFiles = wiringFiles.filter((f) => /^export const \w+ = defineArea\(/m.test(sourceOf(f)));

  it('every area is one file whose builder has the one shape: build(shared, deps) { … } in its defineArea', () => {
    expect(areaFiles).toHaveLength(AREAS.length);
    for (const f of areaFiles) expect(builderShapeProblems(sourceOf(f)), f).toEqual([]);
  });

  it('the shape check refuses the other shapes', () => {
    const method = "defineArea({\n  name: 'x',\n  build(shared, deps) {\n    return { api: {} };\n  },\n});";
    expect(builderShapeProblems(method)).toEqual([]);
    expect(
      builderShapeProblems('defineArea({\n  build: (s) => buildX(s),\n});\nfunction buildX(s: Shared) {}'),
    ).toEqual([
      '0 `build(shared, deps) {` methods (one expected)',
      'a `build:` property (write the method `build(shared, deps) { … }`)',
      'function buildX takes Shared',
    ]);
    expect(builderShapeProblems(`${method}\ninterface XNeeds { a: 1 }`)).toHaveLength(1);
    expect(builderShapeProblems(`${method}\nexport type X = ReturnType<typeof buildX>['api'];`)).toHaveLength(1);
  });

  it('no import cycle among them, type-only and dynamic imports included', () => {
    const files = new Map(wiringFiles.map((f) => [f, sourceOf(f)]));
    expect(files.size).toBeGreaterThan(AREAS.length);
    expect(importCycle(files)).toBeNull();
    // define-area.ts names every area's API without importing an area: the APIs are in a module of types only.
    expect(sourceOf('define-area.ts')).not.toMatch(/from '\.\/(areas|accounts|apps|containers)\.ts'/);
    const apis = sourceOf('area-apis.ts');
    expect(valueImports(apis), 'area-apis.ts imports values').toEqual([]);
    expect(apis.match(/^export (?!interface |type ).*/gm) ?? [], 'area-apis.ts exports values').toEqual([]);
  });

  it('the cycle check finds a cycle through a type-only import', () => {
    const files = new Map([
      ['a.ts', "import { b } from './b.ts';"],
      ['b.ts', "import type { C } from './c.ts';"],
      ['c.ts', "const a = () => import('./a.ts');"],
      ['d.ts', "import { a } from './a.ts';"],
    ]);
    expect(importCycle(files)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
    files.set('c.ts', '');
    expect(importCycle(files)).toBeNull();
  });
});

describe('assemble()', () => {
  type Any = AreaDefinition<AreaName, AreaName, AreaName>;
  const logs = defineArea({
    name: 'logs',
    folders: [],
    needs: [],
    build: () => ({ api: { append: () => true } as never }),
  });

  it('a dependency asked for before it is built is AreaNotBuilt(area, asker), not a ReferenceError', () => {
    const shared = sharedState();
    try {
      const early = defineArea({
        name: 'containers',
        folders: [],
        needs: [],
        later: ['logs'],
        build: (_shared, deps) => ({ api: deps.late('logs') as never }),
      });
      const err = (() => {
        try {
          assemble(shared, [early, logs] as Any[], []);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(AreaNotBuilt);
      expect(err).toMatchObject({ name: 'AreaNotBuilt', area: 'logs', asker: 'containers' });
      expect(String(err)).toContain('area "logs" asked for by "containers" before it is built');
    } finally {
      shared.db.close();
    }
  });

  it('a need listed after its user fails at once with both names', () => {
    const shared = sharedState();
    try {
      const user = defineArea({
        name: 'containers',
        folders: [],
        needs: ['logs'],
        build: () => ({ api: {} as never }),
      });
      expect(() => assemble(shared, [user, logs] as Any[], [])).toThrow(new AreaNotBuilt('logs', 'containers'));
    } finally {
      shared.db.close();
    }
  });

  it('a later area is reached from a callback once everything is built', () => {
    const shared = sharedState();
    try {
      let call: (() => unknown) | undefined;
      const early = defineArea({
        name: 'containers',
        folders: [],
        needs: [],
        later: ['logs'],
        build: (_shared, deps) => {
          call = () => deps.late('logs').append('a', 'web-1', 'x');
          return { api: {} as never };
        },
      });
      assemble(shared, [early, logs] as Any[], []);
      expect(call?.()).toBe(true);
    } finally {
      shared.db.close();
    }
  });

  it('a unit missing from the lifecycle list is refused', () => {
    const shared = sharedState();
    try {
      const withUnit = defineArea({
        name: 'logs',
        folders: [],
        needs: [],
        build: () => ({ api: {} as never, units: [{ name: 'logs' }] }),
      });
      expect(() => assemble(shared, [withUnit] as Any[], [])).toThrow('unit "logs" is not in LIFECYCLE');
    } finally {
      shared.db.close();
    }
  });
});

/** The names a module's imports bring in as values: every one not marked `type` (`import { type X }`, `import type`). */
function valueImports(source: string): string[] {
  const names: string[] = [];
  for (const [statement, specifiers] of source.matchAll(/^import\s+(?!type\s)([^'"]*?)\s+from\s/gm)) {
    const braced = /^\{([^}]*)\}$/s.exec(specifiers.trim());
    if (!braced) names.push(statement.trim());
    else
      names.push(
        ...braced[1]
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s && !s.startsWith('type ')),
      );
  }
  return names;
}
