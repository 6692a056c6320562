// Builds the areas of AREAS in their order, each from the shared state and the areas it needs; then puts
// their lifecycle units in LIFECYCLE order and gathers their app hooks in AREAS order.
import { type AppHooks } from '../modules/apps/apps.service.ts';
import { routesOf, type Shared, type Unit } from './area.ts';
import { type AreaApis } from './area-apis.ts';
import { AREAS } from './areas.ts';
import { type AreaDefinition, type AreaName, AreaNotBuilt, type Built, type Deps } from './define-area.ts';
import { LIFECYCLE } from './lifecycle.ts';

export interface Assembled {
  /** What an area gives the others (and the tests); AreaNotBuilt before it is built. */
  area<K extends AreaName>(name: K): AreaApis[K];
  /** Every area's units, in LIFECYCLE order. */
  units: Unit[];
  /** Every area's app hooks, in AREAS order. */
  appHooks: AppHooks[];
  /** The names of an area's units (the table of areas in docs/architecture.md). */
  unitsOf(name: AreaName): string[];
}

type AnyArea = AreaDefinition<AreaName, AreaName, AreaName>;

export function assemble(
  shared: Shared,
  areas: readonly AnyArea[] = AREAS,
  lifecycle: readonly string[] = LIFECYCLE,
): Assembled {
  const built = new Map<string, Built<unknown>>();
  const get = (name: string, asker: string) => {
    const area = built.get(name);
    if (!area) throw new AreaNotBuilt(name, asker);
    return area.api;
  };
  const builtUnits = () => [...built.values()].flatMap((b) => b.units ?? []);

  for (const def of areas) {
    const deps = {
      late: (name: string) => get(name, def.name),
      routes: () => routesOf(inOrder(builtUnits(), lifecycle)),
    };
    // Asked for at once: a need that is not built yet fails here, with both names.
    for (const need of def.needs) Object.defineProperty(deps, need, { value: get(need, def.name), enumerable: true });
    built.set(def.name, def.build(shared, deps as Deps<AreaName, AreaName>));
  }
  return {
    area: <K extends AreaName>(name: K) => get(name, 'the emulator') as AreaApis[K],
    units: inOrder(builtUnits(), lifecycle),
    appHooks: areas.flatMap((def) => built.get(def.name)?.appHooks ?? []),
    unitsOf: (name) => (built.get(name)?.units ?? []).map((u) => u.name),
  };
}

/** The units in the order their names have in `order`; a unit not listed, or listed twice, is a mistake. */
export function inOrder(units: readonly Unit[], order: readonly string[]): Unit[] {
  const byName = new Map<string, Unit>();
  for (const u of units) {
    if (!order.includes(u.name)) throw new Error(`unit "${u.name}" is not in LIFECYCLE (src/wiring/lifecycle.ts)`);
    if (byName.has(u.name)) throw new Error(`two units are named "${u.name}"`);
    byName.set(u.name, u);
  }
  return order.flatMap((name) => byName.get(name) ?? []);
}
