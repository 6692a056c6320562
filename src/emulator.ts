import { type EmulatorConfig } from './config/schema.ts';
import { type Urls } from './shared/urls.ts';
import { openUnits, resumeUnits, type Shared, startUnits, stopUnits } from './wiring/area.ts';
import { type AreaApis } from './wiring/area-apis.ts';
import { assemble } from './wiring/assemble.ts';
import { type AreaName } from './wiring/define-area.ts';
import { createState, type StateOptions } from './wiring/state.ts';

export { VERSION } from './version.ts';

/** A logger, a clock, a runtime or the router's upstreams other than the defaults (tests). */
export type EmulatorOptions = StateOptions;

/** One emulator instance: the shared state (src/wiring/area.ts), every area (`area(name)`), its lifecycle. */
export interface Emulator extends Omit<Shared, 'urls' | 'setUrls' | 'upstreams'> {
  readonly urls: Urls;
  /** What an area gives the others (src/wiring/area-apis.ts): `emu.area('logs').append(…)`. */
  area<K extends AreaName>(name: K): AreaApis[K];
  /** The HTTP app of the API port (`app.request()` in process). */
  app: AreaApis['http']['app'];
  /** Ready-to-use API token of the first configured user, replaced at each start. */
  startupToken: string;
  /** Binds the ports; resolves as soon as the API answers. */
  start(): Promise<Urls>;
  /** Resolves once the start-up work is done: containers reconciled, logs followed, bound directories watched. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The composition root: the shared state, then every area of AREAS (src/wiring/areas.ts) built in order,
 * their app hooks registered in that order, their units run in LIFECYCLE order (src/wiring/lifecycle.ts).
 * Nothing is global, so tests start many.
 */
export function createEmulator(config: EmulatorConfig, opts: EmulatorOptions = {}): Emulator {
  const shared = createState(config, opts);
  const { logger, runtime } = shared;
  const { area, units, appHooks } = assemble(shared);
  for (const h of appHooks) area('apps').apps.addHooks(h);

  let readiness: Promise<void> | undefined;
  // The API answers from start() on; Docker and the database are brought in line in the background
  // (`ready()`), so a start does not wait on the engine.
  const startUp = async () => {
    const engine = await runtime.probe();
    if (!engine.ok) {
      logger.warn(
        { error: engine.error },
        'Docker engine unavailable: container endpoints answer 503 until it is back',
      );
      // Once it answers, what needs it runs as a start would have.
      const off = runtime.onEngine((st) => {
        if (st !== 'up') return;
        off();
        void resumeUnits(units, logger).catch((err) =>
          logger.warn({ err }, 'could not reconcile containers with Docker'),
        );
      });
    }
    await startUnits(units, logger, { engineUp: engine.ok });
  };
  // The shared state, but the URLs as a getter: they are known once the ports are bound.
  const { urls, setUrls, upstreams, ...state } = shared;
  return {
    ...state,
    get urls() {
      return urls();
    },
    area,
    app: area('http').app,
    startupToken: area('accounts').startupToken,
    async start() {
      await openUnits(units, logger);
      logger.debug({ urls: shared.urls() }, 'listening');
      shared.dataDirLock?.describe({ api: shared.urls().api, routerPort: shared.urls().routerPort });
      readiness = startUp();
      return shared.urls();
    },
    ready: () => readiness ?? Promise.resolve(),
    async stop() {
      await readiness?.catch((err) => logger.warn({ err }, 'start-up work failed'));
      await stopUnits(units, logger);
    },
  };
}
