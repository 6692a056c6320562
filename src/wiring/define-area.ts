// How an area is written. Each area is one file, one `defineArea({ name, folders, needs, later, build })`:
// - `needs`: areas built before it, handed to `build` as `deps.<name>` (typed from the list: no other declaration);
// - `later`: areas built after it, reached with `deps.late(name)` from callbacks that run once everything is built
//   (made inside `build`, as closures);
// - `build(shared, deps) { … return { api, units, appHooks } }`: `api` is what the others may use, an interface of
//   area-apis.ts (types only, so that this file imports no area and the wiring has no import cycle).
// AREAS (areas.ts) lists the definitions in build order; assemble() (assemble.ts) builds them in that order.
import { type AppHooks } from '../modules/apps/apps.service.ts';
import { type RouteGroup, type Shared, type Unit } from './area.ts';
import { type AreaApis } from './area-apis.ts';

export type AreaName = keyof AreaApis;

/** What an area's build gives back: what others may use of it, its lifecycle units, its app hooks. */
export interface Built<Api> {
  api: Api;
  /** Opened, started and stopped in the order LIFECYCLE (lifecycle.ts) gives their names. */
  units?: Unit[];
  /** Registered on the apps service in AREAS order once every area is built (deletion, rename, transfer). */
  appHooks?: AppHooks[];
}

export type Deps<N extends AreaName, L extends AreaName> = { readonly [K in N]: AreaApis[K] } & {
  /** An area built after this one; throws AreaNotBuilt when called before it is built (during a build). */
  late<K extends L>(name: K): AreaApis[K];
  /** The route groups of every area built so far, in LIFECYCLE order (the http area, built last). */
  routes(): RouteGroup[];
};

export interface AreaDefinition<
  Name extends AreaName = AreaName,
  N extends AreaName = AreaName,
  L extends AreaName = AreaName,
> {
  name: Name;
  /** The src/modules folders this area assembles: each folder belongs to exactly one area. */
  folders: readonly string[];
  needs: readonly N[];
  later?: readonly L[];
  build(shared: Shared, deps: Deps<N, L>): Built<AreaApis[Name]>;
}

export function defineArea<Name extends AreaName, N extends AreaName = never, L extends AreaName = never>(
  def: AreaDefinition<Name, N, L>,
): AreaDefinition<Name, N, L> {
  return def;
}

/** An area was asked for before assemble() built it: `asker` needs `name` earlier, or only from a callback. */
export class AreaNotBuilt extends Error {
  override name = 'AreaNotBuilt';

  constructor(
    readonly area: string,
    readonly asker: string,
  ) {
    super(`area "${area}" asked for by "${asker}" before it is built`);
  }
}
