import { type Context } from 'hono';
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { pageQuery } from '../../http/api-schemas.ts';
import { type AppEnv } from '../../http/env.ts';
import { answerWithRequestId } from '../../http/middleware/request-id.ts';
import { requestHeader } from '../../http/node-request.ts';
import { pageParams, parseWith, readJson, wrappedBody } from '../../http/validate.ts';
import { type UserRow } from '../auth/principal.ts';
import { setProjectSchema } from '../projects/projects.schemas.ts';
import { type AppAnswerCache } from './app-answer-cache.ts';
import {
  appEnvelope,
  appList,
  childAppList,
  createAppSchema,
  createChildAppSchema,
  renameSchema,
  settingsSchema,
  transferSchema,
  updateAppSchema,
} from './apps.schemas.ts';
import { type AppsService } from './apps.service.ts';
import { type AppRow } from './apps.store.ts';
import { type AppViewContext, appJson } from './apps.view.ts';

export interface AppsRoutesDeps {
  apps: AppsService;
  view: AppViewContext;
  /** Cached answers of GET /v1/apps/:app (absent: each request builds its answer). */
  answers?: AppAnswerCache<string>;
  pagination: { defaultPerPage: number; maxPerPage: number };
  /** Projects: `project_id` at creation and `PUT {"project_id"}` (go-scalingo AppsSetProject). */
  projects?: {
    check(user: UserRow, id: string | null | undefined): void;
    assign(app: AppRow, id: string | null | undefined): AppRow;
    move(user: UserRow, appKey: string, id: string): AppRow;
  };
}

const currentName = z.object({ current_name: z.string().optional() });

export function appsRoutes(deps: AppsRoutesDeps) {
  const { apps, view } = deps;
  const r = new ApiRoutes('apps');
  const user = (c: Context<AppEnv>) => c.get('principal').user;
  // GET's answer as a string, not bytes: Node writes a string body after the status line and headers in one write,
  // where bytes go as a second chunk of a writev (measured: more server CPU a request than encoding ~1 KB each time).
  const appAnswer = (caller: UserRow, key: string) =>
    JSON.stringify({ app: appJson(apps.visibleApp(caller, key), view, { status: true }) });

  r.add(
    {
      method: 'post',
      path: '/v1/apps',
      summary: '#1 Create an app',
      description: 'Header `X-Dry-Run: true` validates and creates nothing.',
      body: createAppSchema,
      bodyRoot: 'app',
      responses: { 201: appEnvelope },
    },
    (c, { body: { app } }) => {
      const dryRun = /^true$/i.test(requestHeader(c, 'x-dry-run') ?? '');
      deps.projects?.check(user(c), app.project_id);
      const created = apps.create(user(c), app, { dryRun });
      const row = dryRun || !deps.projects ? created : deps.projects.assign(created, app.project_id);
      // As GET's answer: headers written in one record with the request id (no merge with a header set earlier).
      return answerWithRequestId(
        c,
        JSON.stringify({ app: appJson(row, view, { status: true }) }),
        201,
        'application/json',
      );
    },
  );

  r.add(
    { method: 'get', path: '/v1/apps', summary: '#2 List apps (owned and collaborated)', responses: { 200: appList } },
    (c) => c.json({ apps: apps.list(user(c)).map((a) => appJson(a, view)) }),
  );

  // The hot read: its serialised answer is cached per caller and app key until the database changes
  // (app-answer-cache.ts), so the access check and the view run in `make` only, and the path's `:app` is not
  // loaded ahead (`app: false`); a miss answers exactly as before (404 for an app the caller may not see).
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app',
      summary: '#3 Get an app, with its status',
      app: false,
      responses: { 200: appEnvelope },
    },
    (c, { params }) => {
      const caller = user(c);
      const key = params.app;
      const body = deps.answers ? deps.answers.answer(caller, key, appAnswer) : appAnswer(caller, key);
      return answerWithRequestId(c, body, 200, 'application/json');
    },
  );

  r.add(
    {
      method: 'delete',
      path: '/v1/apps/:app',
      summary: '#4 Delete an app, confirmed by current_name',
      query: currentName,
      responses: { 204: null },
    },
    (c, { query: q }) => {
      // Synchronous when no area has anything to remove first: the 204 leaves without waiting on a promise.
      const pending = apps.delete(user(c), c.get('app'), q.current_name);
      return pending ? pending.then(() => answerWithRequestId(c, null, 204)) : answerWithRequestId(c, null, 204);
    },
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/rename',
      summary: '#5 Rename an app',
      body: renameSchema,
      responses: { 200: appEnvelope },
    },
    (c, { body }) => {
      const row = apps.rename(user(c), c.get('app').id, body.current_name, body.new_name);
      return c.json({ app: appJson(row, view, { status: true }) });
    },
  );

  // #6 transfer (body app.owner) and #7 settings share PATCH /v1/apps/:app.
  // The official Go client sends settings as PUT with an unwrapped body ({"force_https": true}).
  r.add(
    {
      method: ['patch', 'put'],
      path: '/v1/apps/:app',
      summary: '#6 Transfer an app (app.owner), #7 change its settings, or move it to a project (project_id)',
      description: 'The body may be wrapped in `app` or not (the Go client sends settings unwrapped with PUT).',
      body: updateAppSchema,
      rawBody: true,
      query: currentName,
      responses: { 200: appEnvelope },
    },
    async (c, { query: q }) => {
      const wrapped = wrappedBody(await readJson(c), 'app');
      const appKey = c.get('app').id;
      if (wrapped.app && typeof wrapped.app === 'object' && 'owner' in (wrapped.app as object)) {
        const { app } = parseWith(transferSchema, wrapped, 'app');
        return c.json({
          app: appJson(apps.transfer(user(c), appKey, q.current_name, app.owner), view, { status: true }),
        });
      }
      if (deps.projects && wrapped.app && typeof wrapped.app === 'object' && 'project_id' in (wrapped.app as object)) {
        const { project_id } = parseWith(setProjectSchema, wrapped.app);
        return c.json({ app: appJson(deps.projects.move(user(c), appKey, project_id), view, { status: true }) });
      }
      const { app } = parseWith(settingsSchema, wrapped, 'app');
      return c.json({ app: appJson(apps.updateSettings(user(c), appKey, app), view, { status: true }) });
    },
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/child_apps',
      summary: '#8 Create a child app',
      body: createChildAppSchema,
      bodyRoot: 'app',
      responses: { 201: appEnvelope },
    },
    (c, { body: { app } }) => {
      const row = apps.createChild(user(c), c.get('app').id, app.name);
      return c.json({ app: appJson(row, view, { childCreation: true }) }, 201);
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/child_apps',
      summary: '#9 List child apps',
      query: pageQuery,
      responses: { 200: childAppList },
    },
    (c, { query }) => {
      const { page, perPage } = pageParams(query, deps.pagination);
      const res = apps.listChildren(user(c), c.get('app').id, page, perPage);
      return c.json({ child_apps: res.apps.map((a) => appJson(a, view)), meta: res.meta });
    },
  );

  return r;
}
