import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { parseWith, readJson, wrappedBody } from '../../http/validate.ts';
import {
  createNotifierSchema,
  notificationPlatformList,
  notifierEnvelope,
  notifierList,
  notifierTestAnswer,
  platformSearchQuery,
  updateNotifierSchema,
} from './notifiers.schemas.ts';
import { type NotifiersService } from './notifiers.service.ts';
import { PLATFORMS, platformJson } from './platforms.ts';

export function notifiersRoutes(deps: { notifiers: NotifiersService }) {
  const { notifiers } = deps;
  const r = new ApiRoutes('notifiers');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  // Public on the platform (go-scalingo sends these with NoAuth).
  r.add(
    {
      method: 'get',
      path: '/v1/notification_platforms',
      summary: 'List the notification platforms',
      auth: 'public',
      responses: { 200: notificationPlatformList },
    },
    (c) => c.json({ notification_platforms: PLATFORMS.map(platformJson) }),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/notification_platforms/search',
      summary: 'Find a notification platform by name',
      auth: 'public',
      query: platformSearchQuery,
      responses: { 200: notificationPlatformList },
    },
    (c, { query }) => {
      const name = (query.name ?? '').toLowerCase();
      return c.json({ notification_platforms: PLATFORMS.filter((p) => p.name === name).map(platformJson) });
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/notifiers',
      summary: 'List the notifiers of an app',
      responses: { 200: notifierList },
    },
    (c) => c.json({ notifiers: notifiers.list(user(c), c.get('app').id) }),
  );
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/notifiers',
      summary: 'Create a notifier',
      description: 'The body may be wrapped in `notifier` or not.',
      body: createNotifierSchema,
      rawBody: true,
      responses: { 201: notifierEnvelope },
    },
    async (c) => {
      const { notifier } = parseWith(createNotifierSchema, wrappedBody(await readJson(c), 'notifier'), 'notifier');
      return c.json({ notifier: notifiers.create(user(c), c.get('app').id, notifier) }, 201);
    },
  );
  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/notifiers/:id',
      summary: 'Get a notifier',
      responses: { 200: notifierEnvelope },
    },
    (c, { params }) => c.json({ notifier: notifiers.show(user(c), c.get('app').id, params.id) }),
  );
  r.add(
    {
      method: ['patch', 'put'],
      path: '/v1/apps/:app/notifiers/:id',
      summary: 'Update a notifier',
      description: 'The body may be wrapped in `notifier` or not.',
      body: updateNotifierSchema,
      rawBody: true,
      responses: { 200: notifierEnvelope },
    },
    async (c, { params }) => {
      const { notifier } = parseWith(updateNotifierSchema, wrappedBody(await readJson(c), 'notifier'), 'notifier');
      return c.json({ notifier: notifiers.update(user(c), c.get('app').id, params.id, notifier) });
    },
  );
  r.add(
    { method: 'delete', path: '/v1/apps/:app/notifiers/:id', summary: 'Delete a notifier', responses: { 204: null } },
    (c, { params }) => {
      notifiers.delete(user(c), c.get('app').id, params.id);
      return c.body(null, 204);
    },
  );
  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/notifiers/:id/test',
      summary: 'Send a test message through a notifier',
      responses: { 200: notifierTestAnswer },
    },
    (c, { params }) => {
      notifiers.test(user(c), c.get('app').id, params.id);
      return c.json({});
    },
  );
  return r;
}
