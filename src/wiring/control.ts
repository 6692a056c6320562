// The emulator's own surface: health, the control plane (/_emulator/*: reset, snapshots, faults, clock,
// --import / --export-on-exit) and the dashboard. The control area opens before the servers (an imported
// snapshot is the state before anything answers) and stops after the work under way ended (the export
// holds its outcome).
import { healthRoutes } from '../modules/health/health.routes.ts';
import { emulatorRoutes } from '../modules/health/emulator.routes.ts';
import { dashboardRoutes } from '../modules/dashboard/dashboard.routes.ts';
import { createControl, type ControlDeps } from '../modules/control/control.ts';
import { controlRoutes } from '../modules/control/control.routes.ts';
import { adminFailureWindow } from '../modules/control/admin-auth.ts';
import type { Faults } from '../modules/control/faults.ts';
import type { Area, Shared } from './area.ts';

export interface ControlWiring extends Pick<ControlDeps, 'apps' | 'auth' | 'orchestrator' | 'containers' | 'startupToken' | 'archivesDir' | 'afterStateReplaced'> {
  faults: Faults;
  adminToken: string;
  startedAt: number;
  version: string;
  /** Whether an alert is firing (the dashboard shows it). */
  alertActive: (alertId: string) => boolean;
}

export function buildControl(s: Shared, w: ControlWiring) {
  const { config, db } = s;
  const control = createControl({ config, db, clock: s.clock, logger: s.logger, runtime: s.runtime, instanceId: s.instanceId, dataDir: s.dataDir, stateDir: s.stateDir, faults: w.faults, apps: w.apps, auth: w.auth, orchestrator: w.orchestrator, containers: w.containers, startupToken: w.startupToken, archivesDir: w.archivesDir, afterStateReplaced: w.afterStateReplaced });
  const adminToken = () => w.adminToken;
  const adminFailures = adminFailureWindow({ perMinute: config.rateLimit.perMinute, clock: s.clock });
  const areas = {
    health: { name: 'health', routes: [healthRoutes({ db, runtime: s.runtime, startedAt: w.startedAt, version: w.version }), emulatorRoutes()] } satisfies Area,
    control: {
      name: 'control',
      routes: [controlRoutes({ control, adminToken, adminFailures })],
      // --import: the state of a snapshot file, before anything answers (Docker follows in ready()).
      open: () => void (config.importFile && control.importFile(config.importFile)),
      // --export-on-exit: the state as it is once the work under way ended.
      stop: () => void (config.exportOnExit && db.open && control.exportTo(config.exportOnExit)),
    } satisfies Area,
    dashboard: {
      name: 'dashboard',
      routes: [dashboardRoutes({ auth: w.auth, apps: w.apps, usernames: () => config.users.map((u) => u.username), adminToken, adminFailures, alertActive: w.alertActive, bearerTtlSeconds: config.auth.bearerTtlSeconds })],
    } satisfies Area,
  };
  return { control, areas };
}
