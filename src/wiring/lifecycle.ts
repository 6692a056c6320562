// The order of the areas' units (by name): opened and started in this order, stopped in reverse order, route
// groups mounted in this order. A unit sits after what it needs, which is therefore still there while it
// stops. test/unit/area-registry.test.ts checks that every unit is listed once.
export const LIFECYCLE = [
  'state', // engine connection, database, temp dir: closed last
  'monitoring', // stats, alerts, notifiers: notifications of the work that ends below still go out
  'containers-on-exit', // docker.stopContainersOnExit, once the state is exported
  'health',
  'control', // --import before anything answers, --export-on-exit once the work under way ended
  'dashboard',
  'auth', // configured passwords hashed before the export
  'operations',
  'addon-servers', // reconciled first: the apps' containers connect to them
  'deployments',
  'containers', // reconciled with Docker; stops reacting to the engine before the work drains
  'upgrades', // WebSockets still open once the servers closed
  'git',
  'servers', // API and router ports; closed once the streams and terminals below ended
  'logs', // collection, drains; streams end before the servers close
  'addons', // addon routes after the drains ones; addon log streams, backups and restores end before the servers close
  'keys',
  'events',
  'collaborators', // /v1/apps/collaboration before the apps unit's /v1/apps/:app
  'domains',
  'autoscalers',
  'one-off',
  'cron',
  'bound-directories', // bound directories deployed once the rest runs
  'stats-sampler',
  'sources',
  'caches',
  'stacks',
  'variables',
  'projects',
  'account',
  'apps', // the /v1/apps/:app catch-alls: last
  'work-in-flight', // stops first: nothing new starts on the engine, builds and hooks under way end
] as const;
