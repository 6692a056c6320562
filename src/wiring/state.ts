// What every area shares: the data directory, the database, the container runtime (through the fault
// layer of the control plane), the clock, the logger, the URLs and the WebSocket upgrade table. Its unit
// comes first in LIFECYCLE, so it closes last: the engine connection, the database, an in-memory run's
// temporary directory.

import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type EmulatorConfig } from '../config/schema.ts';
import { lockDataDir } from '../db/data-dir-lock.ts';
import { metaValue, openDatabase } from '../db/database.ts';
import { createUpgradeTable } from '../http/ws.ts';
import { createFaults } from '../modules/control/faults.ts';
import { withFaults } from '../modules/control/runtime-faults.ts';
import { type UpstreamSource } from '../router/proxy.ts';
import { createDockerRuntime } from '../runtime/docker-runtime.ts';
import { removingOnlyOwned } from '../runtime/ownership.ts';
import { type ContainerRuntime } from '../runtime/runtime.ts';
import { withShutdownGate } from '../runtime/shutdown-gate.ts';
import { createSwarmRuntime } from '../runtime/swarm-runtime.ts';
import { type Clock, ManualClock, systemClock } from '../shared/clock.ts';
import { secret } from '../shared/ids.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { type Urls } from '../shared/urls.ts';
import { type Shared } from './area.ts';
import { defineArea } from './define-area.ts';

export interface StateOptions {
  logger?: Logger;
  clock?: Clock;
  /** Real time (Shared.wallClock); default the system clock. */
  wallClock?: Clock;
  runtime?: ContainerRuntime;
  upstreams?: UpstreamSource;
}

export function createState(config: EmulatorConfig, opts: StateOptions): Shared {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const clock = opts.clock ?? (config.clock === 'manual' ? new ManualClock() : systemClock);
  const adminToken = config.adminToken ?? `ad-${secret(24).replace(/[^A-Za-z0-9]/g, '0')}`;
  const dataDir = config.inMemory ? null : resolve(config.dataDir);
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Only its owner reads the state (variables, tokens, logs): 0700 whatever the umask, also for an older dir.
  if (dataDir) chmodSync(dataDir, 0o700);
  // One process per data dir: a second one would reconcile the engine against its own view of the same apps.
  const dataDirLock = dataDir ? lockDataDir(dataDir) : null;
  let db;
  try {
    db = openDatabase({ file: dataDir ? join(dataDir, 'emulator.sqlite') : undefined, inMemory: config.inMemory });
  } catch (err) {
    dataDirLock?.release();
    throw err;
  }
  const stateDir = dataDir ?? mkdtempSync(join(tmpdir(), 'scalingo-emu-'));
  // One id per data directory (random per in-memory run): the label of the containers it owns.
  const instanceId = metaValue(db, 'instance_id', () => randomBytes(4).toString('hex'));
  // Workload faults (docker_unavailable, log_delay) act on the runtime every area sees.
  const faults = createFaults({ clock });
  // docker.mode: one engine, or a swarm behind its manager (the same engine options name the manager).
  const docker = config.docker;
  const engine = {
    host: docker.host,
    socketPath: docker.socketPath || undefined,
    tls: docker.tls,
    publishHost: docker.publishHost,
    network: docker.network,
  };
  const makeRuntime = () =>
    docker.mode === 'swarm'
      ? createSwarmRuntime({ ...engine, oneOffNode: docker.swarm.oneOffNode })
      : createDockerRuntime(engine);
  // Removals reach only what carries this instance's labels, whatever the database names (runtime/ownership.ts).
  const owned = removingOnlyOwned(opts.runtime ?? makeRuntime(), instanceId, (kind, name) =>
    logger.warn({ [kind]: name }, `left the ${kind} ${name} in place: it is not this emulator's`),
  );
  // Closed first at a stop: nothing new starts on the engine while the work under way drains.
  const shutdownGate = withShutdownGate(withFaults(owned, faults));
  const runtime = shutdownGate.runtime;

  // Known once the ports are bound (port 0 picks a free one): the servers and git areas fill them in.
  const bracketed = config.host.includes(':') ? `[${config.host}]` : config.host;
  let urls: Urls = {
    api: `http://${config.host}:${config.port}`,
    router: `http://localhost:${config.routerPort}`,
    routerPort: config.routerPort,
    git: `ssh://git@${bracketed}:${config.sshPort}`,
  };

  const shared: Shared = {
    config,
    logger,
    clock,
    wallClock: opts.wallClock ?? systemClock,
    db,
    runtime,
    shutdownGate,
    instanceId,
    dataDir,
    dataDirLock,
    stateDir,
    urls: () => urls,
    upgrades: createUpgradeTable({ logger }),
    setUrls(next) {
      urls = { ...urls, ...next };
    },
    faults,
    adminToken,
    startedAt: Date.now(),
    upstreams: opts.upstreams,
  };
  return shared;
}

/** The shared state's own units: closed last (engine connection, database, temp dir), and open WebSockets. */
export const stateArea = defineArea({
  name: 'state',
  folders: [],
  needs: [],
  build(shared) {
    return {
      api: {},
      units: [
        {
          name: 'state',
          async stop() {
            try {
              await shared.runtime.close();
            } finally {
              if (shared.db.open) shared.db.close();
              if (!shared.dataDir) rmSync(shared.stateDir, { recursive: true, force: true });
              shared.dataDirLock?.release();
            }
          },
        },
        /** WebSockets still open once the servers closed (attach, deployments stream…). */
        { name: 'upgrades', stop: () => shared.upgrades.closeAll() },
      ],
    };
  },
});
