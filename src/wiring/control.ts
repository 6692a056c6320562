// The emulator's own surface: health, the control plane (/_emulator/*: reset, snapshots, faults, clock,
// --import / --export-on-exit) and the dashboard. The control unit opens before the servers (an imported
// snapshot is the state before anything answers) and stops after the work under way ended (the export
// holds its outcome).

import { adminFailureWindow } from '../modules/control/admin-auth.ts';
import { controlRoutes } from '../modules/control/control.routes.ts';
import { createControl } from '../modules/control/control.ts';
import { dashboardRoutes } from '../modules/dashboard/dashboard.routes.ts';
import { emulatorRoutes } from '../modules/health/emulator.routes.ts';
import { healthRoutes } from '../modules/health/health.routes.ts';
import { VERSION } from '../version.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';

export const controlArea = defineArea({
  name: 'control',
  folders: ['health', 'control', 'dashboard'],
  needs: ['accounts', 'apps', 'containers', 'monitoring', 'logs'],
  build(shared, deps) {
    const { config, db, logger } = shared;
    const { auth, keys } = deps.accounts;
    const { apps } = deps.apps;
    const control = createControl({
      config,
      db,
      clock: shared.clock,
      logger,
      runtime: shared.runtime,
      instanceId: shared.instanceId,
      dataDir: shared.dataDir,
      stateDir: shared.stateDir,
      faults: shared.faults,
      apps,
      auth,
      orchestrator: deps.containers.orchestrator,
      containers: deps.containers.containersStore,
      startupToken: deps.accounts.startupToken,
      archivesDir: deps.logs.archiver.dir,
      afterStateReplaced: () => {
        deps.logs.maintain(true);
        // The configured SSH keys are there again after a restore of a snapshot from elsewhere.
        keys
          .syncConfigured(config.users)
          .catch((err) => logger.warn({ err }, 'could not register the configured SSH keys'));
      },
    });
    const adminToken = () => shared.adminToken;
    const adminFailures = adminFailureWindow({ perMinute: config.rateLimit.perMinute, clock: shared.wallClock });
    const dashboard = dashboardRoutes({
      auth,
      apps,
      usernames: () => config.users.map((u) => u.username),
      adminToken,
      adminFailures,
      // Whether an alert is firing (the dashboard shows it).
      alertActive: (id) => deps.monitoring.engine.isActive(id),
      bearerTtlSeconds: config.auth.bearerTtlSeconds,
    });
    const units: Unit[] = [
      {
        name: 'health',
        routes: [
          healthRoutes({ db, runtime: shared.runtime, startedAt: shared.startedAt, version: VERSION }),
          emulatorRoutes(),
        ],
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
  },
});
