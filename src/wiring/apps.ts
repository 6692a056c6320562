// Apps and what hangs on them without a container: collaborators, projects, custom domains, variables,
// the events feed, the account's listings, stacks and build caches. The apps area's routes hold the
// `/v1/apps/:app` catch-alls: it is the last row of the table.
import { createAppsStore } from '../modules/apps/apps.store.ts';
import { createAppsService } from '../modules/apps/apps.service.ts';
import { appsRoutes } from '../modules/apps/apps.routes.ts';
import type { AppViewContext } from '../modules/apps/apps.view.ts';
import { createCollaboratorsStore } from '../modules/collaborators/collaborators.store.ts';
import { createCollaboratorsService } from '../modules/collaborators/collaborators.service.ts';
import { collaboratorsRoutes } from '../modules/collaborators/collaborators.routes.ts';
import { createProjectsStore } from '../modules/projects/projects.store.ts';
import { createProjectsService } from '../modules/projects/projects.service.ts';
import { projectsRoutes } from '../modules/projects/projects.routes.ts';
import { createDomainsStore } from '../modules/domains/domains.store.ts';
import { createDomainsService } from '../modules/domains/domains.service.ts';
import { domainsRoutes } from '../modules/domains/domains.routes.ts';
import { createVariablesStore } from '../modules/variables/variables.store.ts';
import { variablesRoutes } from '../modules/variables/variables.routes.ts';
import { createVariablesService } from '../modules/variables/variables.service.ts';
import { eventsRoutes } from '../modules/events/events.routes.ts';
import { accountRoutes } from '../modules/account/account.routes.ts';
import { stacksRoutes } from '../modules/stacks/stacks.routes.ts';
import { cachesRoutes } from '../modules/caches/caches.routes.ts';
import type { Area, Shared } from './area.ts';
import type { Accounts } from './accounts.ts';

export function buildApps(s: Shared, accounts: Pick<Accounts, 'auth' | 'events'>) {
  const { db, clock, config } = s;
  const { auth, events } = accounts;
  const billingUrl = () => `${s.urls().api}/_emulator/billing`;
  const collaboratorsStore = createCollaboratorsStore(db);
  const apps = createAppsService({
    db,
    store: createAppsStore(db),
    collaborators: collaboratorsStore,
    events,
    clock,
    stacks: config.stacks,
    defaultStack: config.defaultStack,
    billingUrl,
    userByEmail: auth.userByEmail,
    userById: auth.userById,
  });
  const projects = createProjectsService({ db, store: createProjectsStore(db), events, clock, userById: auth.userById, visibleApp: (u, key) => apps.visibleApp(u, key) });
  const collaborators = createCollaboratorsService({
    db,
    store: collaboratorsStore,
    apps,
    events,
    clock,
    userByEmail: auth.userByEmail,
    userById: auth.userById,
    invitationUrl: (token) => `${s.urls().api}/v1/apps/collaboration?token=${token}`,
  });
  // Custom domains: API, and the router's table of hostnames (redirects to the canonical one).
  const domains = createDomainsService({ db, store: createDomainsStore(db), apps, events, clock });
  const variablesStore = createVariablesStore(db);

  /** How an app is shown (URLs, owner, parent, project) by every area that answers with one. */
  const view: AppViewContext = {
    get urls() {
      return s.urls();
    },
    region: config.region.name,
    ownerOf: (a) => auth.userById(a.owner_id),
    parentName: (a) => (a.parent_id ? (apps.find(a.parent_id)?.name ?? null) : null),
    projectOf: (a) => projects.ofApp(a),
  };

  const area = (name: string, ...routes: NonNullable<Area['routes']>): Area => ({ name, routes });
  return {
    apps,
    projects,
    collaborators,
    domains,
    variablesStore,
    view,
    billingUrl,
    areas: {
      events: area('events', eventsRoutes({ events, pagination: config.pagination })),
      collaborators: area('collaborators', collaboratorsRoutes({ collaborators, view })),
      domains: area('domains', domainsRoutes({ domains })),
      caches: area('caches', cachesRoutes({ events, stateDir: s.stateDir })),
      stacks: area('stacks', stacksRoutes({ stacks: config.stacks, defaultStack: config.defaultStack })),
      variables: area('variables', variablesRoutes({ variables: createVariablesService({ db, store: variablesStore, apps, events }) })),
      projects: area('projects', projectsRoutes({ projects })),
      account: area('account', accountRoutes({ pagination: config.pagination })),
      apps: area('apps', appsRoutes({ apps, view, pagination: config.pagination, projects })),
    },
  };
}

export type Apps = ReturnType<typeof buildApps>;
