import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { pageParams } from '../../http/validate.ts';
import type { EventsService } from './events.service.ts';
import { EVENT_CATEGORIES, eventTypesJson } from './event-types.ts';
import type { AppsService } from '../apps/apps.service.ts';

export function eventsRoutes(deps: { events: EventsService; apps: AppsService; pagination: { defaultPerPage: number; maxPerPage: number } }) {
  const r = new Hono<AppEnv>();
  // #37 — public on the platform: the official npm client fetches it without credentials.
  r.get('/v1/event_categories', (c) => c.json({ event_categories: EVENT_CATEGORIES }));
  r.get('/v1/event_types', (c) => c.json({ event_types: eventTypesJson() }));

  // #38
  r.get('/v1/apps/:app/events', (c) => {
    const app = deps.apps.visibleApp(c.get('principal').user, c.req.param('app'));
    const { page, perPage } = pageParams(c, deps.pagination);
    return c.json(deps.events.listForApp(app.id, page, perPage));
  });

  r.get('/v1/events', (c) => {
    const { page, perPage } = pageParams(c, deps.pagination);
    return c.json(deps.events.listForUser(c.get('principal').user.id, page, perPage));
  });
  return r;
}
