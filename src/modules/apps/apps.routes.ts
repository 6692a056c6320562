import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { jsonBody, pageParams, parseWith, readJson } from '../../http/validate.ts';
import { createAppSchema, createChildAppSchema, renameSchema, settingsSchema, transferSchema } from './apps.schemas.ts';
import type { AppsService } from './apps.service.ts';
import { appJson, type AppViewContext } from './apps.view.ts';
import type { AppRow } from './apps.store.ts';
import type { UserRow } from '../auth/principal.ts';
import { setProjectSchema } from '../projects/projects.schemas.ts';

export interface AppsRoutesDeps {
  apps: AppsService;
  view: AppViewContext;
  pagination: { defaultPerPage: number; maxPerPage: number };
  /** Projects: `project_id` at creation and `PUT {"project_id"}` (go-scalingo AppsSetProject). */
  projects?: { check(user: UserRow, id: string | null | undefined): void; assign(app: AppRow, id: string | null | undefined): AppRow; move(user: UserRow, appKey: string, id: string): AppRow };
}

export function appsRoutes(deps: AppsRoutesDeps) {
  const { apps, view } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  // #1 create (X-Dry-Run: true validates and creates nothing)
  r.post('/v1/apps', async (c) => {
    const { app } = await jsonBody(c, createAppSchema, 'app');
    const dryRun = /^true$/i.test(c.req.header('x-dry-run') ?? '');
    deps.projects?.check(user(c), app.project_id);
    const created = apps.create(user(c), app, { dryRun });
    const row = dryRun || !deps.projects ? created : deps.projects.assign(created, app.project_id);
    return c.json({ app: appJson(row, view, { status: true }) }, 201);
  });

  // #2 list: owned and collaborated
  r.get('/v1/apps', (c) => c.json({ apps: apps.list(user(c)).map((a) => appJson(a, view)) }));

  // #3 show, with status
  r.get('/v1/apps/:app', (c) => c.json({ app: appJson(apps.visibleApp(user(c), c.req.param('app')), view, { status: true }) }));

  // #4 delete, confirmed by current_name
  r.delete('/v1/apps/:app', async (c) => {
    await apps.delete(user(c), c.req.param('app'), c.req.query('current_name'));
    return c.body(null, 204);
  });

  // #5 rename
  r.post('/v1/apps/:app/rename', async (c) => {
    const body = await jsonBody(c, renameSchema);
    const row = apps.rename(user(c), c.req.param('app'), body.current_name, body.new_name);
    return c.json({ app: appJson(row, view, { status: true }) });
  });

  // #6 transfer (body app.owner) and #7 settings share PATCH /v1/apps/:app.
  // The official Go client sends settings as PUT with an unwrapped body ({"force_https": true}).
  const update = async (c: Context<AppEnv, '/v1/apps/:app'>) => {
    const raw = (await readJson(c)) as Record<string, unknown>;
    const wrapped = raw && typeof raw === 'object' && !Array.isArray(raw) && 'app' in raw ? raw : { app: raw };
    const appKey = c.req.param('app');
    if (wrapped.app && typeof wrapped.app === 'object' && 'owner' in (wrapped.app as object)) {
      const { app } = parseWith(transferSchema, wrapped, 'app');
      return c.json({ app: appJson(apps.transfer(user(c), appKey, c.req.query('current_name'), app.owner), view, { status: true }) });
    }
    if (deps.projects && wrapped.app && typeof wrapped.app === 'object' && 'project_id' in (wrapped.app as object)) {
      const { project_id } = parseWith(setProjectSchema, wrapped.app);
      return c.json({ app: appJson(deps.projects.move(user(c), appKey, project_id), view, { status: true }) });
    }
    const { app } = parseWith(settingsSchema, wrapped, 'app');
    return c.json({ app: appJson(apps.updateSettings(user(c), appKey, app), view, { status: true }) });
  };
  r.patch('/v1/apps/:app', update);
  r.put('/v1/apps/:app', update);

  // #8 create child app
  r.post('/v1/apps/:app/child_apps', async (c) => {
    const { app } = await jsonBody(c, createChildAppSchema, 'app');
    const row = apps.createChild(user(c), c.req.param('app'), app.name);
    return c.json({ app: appJson(row, view, { childCreation: true }) }, 201);
  });

  // #9 list child apps, paginated
  r.get('/v1/apps/:app/child_apps', (c) => {
    const { page, perPage } = pageParams(c, deps.pagination);
    const res = apps.listChildren(user(c), c.req.param('app'), page, perPage);
    return c.json({ child_apps: res.apps.map((a) => appJson(a, view)), meta: res.meta });
  });

  return r;
}
