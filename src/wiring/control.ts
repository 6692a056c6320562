// The emulator's own surface: health, the control plane (/_emulator/*: reset, snapshots, faults, clock,
// --import / --export-on-exit) and the dashboard. The control unit opens before the servers (an imported
// snapshot is the state before anything answers) and stops after the work under way ended (the export
// holds its outcome).
import { healthRoutes } from '../modules/health/health.routes.ts';
import { emulatorRoutes } from '../modules/health/emulator.routes.ts';
import { dashboardRoutes } from '../modules/dashboard/dashboard.routes.ts';
import { createControl } from '../modules/control/control.ts';
import { controlRoutes } from '../modules/control/control.routes.ts';
import { adminFailureWindow } from '../modules/control/admin-auth.ts';
import { VERSION } from '../version.ts';
import type { Shared, Unit } from './area.ts';
import type { Accounts } from './accounts.ts';
import type { Apps } from './apps.ts';
import type { Containers } from './containers.ts';
import type { Logs } from './logs.ts';
import type { Monitoring } from './monitoring.ts';
import { defineArea } from './define-area.ts';

export const controlArea = defineArea({
  name: 'control',
  folders: ['health', 'control', 'dashboard'],
  needs: ['accounts', 'apps', 'containers', 'monitoring', 'logs'],
  build: (s, deps) => buildControl(s, deps),
});

interface ControlNeeds {
  accounts: Pick<Accounts, 'auth' | 'keys' | 'startupToken'>;
  apps: Pick<Apps, 'apps'>;
  containers: Pick<Containers, 'orchestrator' | 'containersStore'>;
  monitoring: Pick<Monitoring, 'engine'>;
  logs: Pick<Logs, 'archiver' | 'maintain'>;
}

function buildControl(s: Shared, needs: ControlNeeds) {
  const { config, db, logger } = s;
  const { auth, keys } = needs.accounts;
  const { apps } = needs.apps;
  const control = createControl({
    config,
    db,
    clock: s.clock,
    logger,
    runtime: s.runtime,
    instanceId: s.instanceId,
    dataDir: s.dataDir,
    stateDir: s.stateDir,
    faults: s.faults,
    apps,
    auth,
    orchestrator: needs.containers.orchestrator,
    containers: needs.containers.containersStore,
    startupToken: needs.accounts.startupToken,
    archivesDir: needs.logs.archiver.dir,
    afterStateReplaced: () => {
      needs.logs.maintain(true);
      // The configured SSH keys are there again after a restore of a snapshot from elsewhere.
      keys
        .syncConfigured(config.users)
        .catch((err) => logger.warn({ err }, 'could not register the configured SSH keys'));
    },
  });
  const adminToken = () => s.adminToken;
  const adminFailures = adminFailureWindow({ perMinute: config.rateLimit.perMinute, clock: s.wallClock });
  const dashboard = dashboardRoutes({
    auth,
    apps,
    usernames: () => config.users.map((u) => u.username),
    adminToken,
    adminFailures,
    // Whether an alert is firing (the dashboard shows it).
    alertActive: (id) => needs.monitoring.engine.isActive(id),
    bearerTtlSeconds: config.auth.bearerTtlSeconds,
  });
  const units: Unit[] = [
    {
      name: 'health',
      routes: [healthRoutes({ db, runtime: s.runtime, startedAt: s.startedAt, version: VERSION }), emulatorRoutes()],
    },
    {
      name: 'control',
      routes: [controlRoutes({ control, adminToken, adminFailures })],
      // --import: the state of a snapshot file, before anything answers (Docker follows in ready()).
      open: async () => {
        if (config.importFile) await control.importFile(config.importFile);
      },
      // --export-on-exit: the state as it is once the work under way ended.
      stop: () => void (config.exportOnExit && db.open && control.exportTo(config.exportOnExit)),
    },
    { name: 'dashboard', routes: [dashboard] },
  ];
  return { api: { control }, units };
}

export type ControlArea = ReturnType<typeof buildControl>['api'];
