// Apps and what hangs on them without a container: collaborators, projects, custom domains, variables,
// the events feed, the account's listings, stacks and build caches. The apps unit's routes hold the
// `/v1/apps/:app` catch-alls: it is the last of LIFECYCLE.

import { createAppAnswerCache } from '../modules/apps/app-answer-cache.ts';
import { createAppsService } from '../modules/apps/apps.service.ts';
import { createAppsStore } from '../modules/apps/apps.store.ts';
import { type AppViewContext } from '../modules/apps/apps.view.ts';
import { dropBuildCacheOnEvent } from '../modules/caches/build-cache.ts';
import { createCollaboratorsService } from '../modules/collaborators/collaborators.service.ts';
import { createCollaboratorsStore } from '../modules/collaborators/collaborators.store.ts';
import { createDomainsService } from '../modules/domains/domains.service.ts';
import { createDomainsStore } from '../modules/domains/domains.store.ts';
import { createProjectsService } from '../modules/projects/projects.service.ts';
import { createProjectsStore } from '../modules/projects/projects.store.ts';
import { createVariablesService } from '../modules/variables/variables.service.ts';
import { createVariablesStore } from '../modules/variables/variables.store.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';
import { lazyRoutes } from './lazy-routes.ts';

export const appsArea = defineArea({
  name: 'apps',
  folders: ['apps', 'collaborators', 'projects', 'domains', 'variables', 'account', 'stacks', 'caches'],
  needs: ['accounts'],
  build(shared, deps) {
    const { db, clock, config } = shared;
    const { auth, events } = deps.accounts;
    const billingUrl = () => `${shared.urls().api}/_emulator/billing`;
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
    const projects = createProjectsService({
      db,
      store: createProjectsStore(db),
      events,
      clock,
      userById: auth.userById,
      visibleApp: (u, key) => apps.visibleApp(u, key),
    });
    const collaborators = createCollaboratorsService({
      db,
      store: collaboratorsStore,
      apps,
      events,
      clock,
      userByEmail: auth.userByEmail,
      userById: auth.userById,
      invitationUrl: (token) => `${shared.urls().api}/v1/apps/collaboration?token=${token}`,
    });
    // Custom domains: API, and the router's table of hostnames (redirects to the canonical one).
    const domains = createDomainsService({ db, store: createDomainsStore(db), apps, events, clock });
    const variablesStore = createVariablesStore(db);
    // At start: the caches routes are built at their first request, and a deletion must not wait for one.
    events.onRecord(dropBuildCacheOnEvent(shared.stateDir));

    /** How an app is shown (URLs, owner, parent, project) by every area that answers with one. */
    const view: AppViewContext = {
      get urls() {
        return shared.urls();
      },
      region: config.region.name,
      ownerOf: (a) => auth.userById(a.owner_id),
      parentName: (a) => (a.parent_id ? (apps.find(a.parent_id)?.name ?? null) : null),
      projectOf: (a) => projects.ofApp(a),
    };

    const unit = (name: string, ...routes: NonNullable<Unit['routes']>): Unit => ({ name, routes });
    const { pagination } = config;
    const variables = createVariablesService({ db, store: variablesStore, apps, events });
    return {
      api: { apps, projects, collaborators, domains, variablesStore, view, billingUrl },
      units: [
        unit(
          'events',
          lazyRoutes('eventsRoutes', () =>
            import('../modules/events/events.routes.ts').then((m) => m.eventsRoutes({ events, pagination })),
          ),
        ),
        unit(
          'collaborators',
          lazyRoutes('collaboratorsRoutes', () =>
            import('../modules/collaborators/collaborators.routes.ts').then((m) =>
              m.collaboratorsRoutes({ collaborators, view }),
            ),
          ),
        ),
        unit(
          'domains',
          lazyRoutes('domainsRoutes', () =>
            import('../modules/domains/domains.routes.ts').then((m) => m.domainsRoutes({ domains })),
          ),
        ),
        unit(
          'caches',
          lazyRoutes('cachesRoutes', () =>
            import('../modules/caches/caches.routes.ts').then((m) => m.cachesRoutes({ stateDir: shared.stateDir })),
          ),
        ),
        unit(
          'stacks',
          lazyRoutes('stacksRoutes', () =>
            import('../modules/stacks/stacks.routes.ts').then((m) =>
              m.stacksRoutes({ stacks: config.stacks, defaultStack: config.defaultStack }),
            ),
          ),
        ),
        unit(
          'variables',
          lazyRoutes('variablesRoutes', () =>
            import('../modules/variables/variables.routes.ts').then((m) => m.variablesRoutes({ variables })),
          ),
        ),
        unit(
          'projects',
          lazyRoutes('projectsRoutes', () =>
            import('../modules/projects/projects.routes.ts').then((m) => m.projectsRoutes({ projects })),
          ),
        ),
        unit(
          'account',
          lazyRoutes('accountRoutes', () =>
            import('../modules/account/account.routes.ts').then((m) => m.accountRoutes({ pagination })),
          ),
        ),
        unit(
          'apps',
          lazyRoutes('appsRoutes', () =>
            import('../modules/apps/apps.routes.ts').then((m) =>
              m.appsRoutes({
                apps,
                view,
                answers: createAppAnswerCache<string>(db, shared.urls),
                pagination,
                projects,
              }),
            ),
          ),
        ),
      ],
    };
  },
});
