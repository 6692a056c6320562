import { ApiRoutes } from '../../http/api-routes.ts';
import { pageQuery } from '../../http/api-schemas.ts';
import { pageParams } from '../../http/validate.ts';
import { EVENT_CATEGORIES, eventTypesJson } from './event-types.ts';
import { eventCategoryList, eventList, eventTypeList } from './events.schemas.ts';
import { type EventsService } from './events.service.ts';

// `apps`: the app of /v1/apps/:app/events is loaded by the route declaration (api-routes.ts).
export function eventsRoutes(deps: {
  events: EventsService;
  pagination: { defaultPerPage: number; maxPerPage: number };
}) {
  const r = new ApiRoutes('events');
  // #37 — public on the platform: the official npm client fetches it without credentials.
  r.add(
    {
      method: 'get',
      path: '/v1/event_categories',
      summary: '#37 List event categories',
      auth: 'public',
      responses: { 200: eventCategoryList },
    },
    (c) => c.json({ event_categories: EVENT_CATEGORIES }),
  );
  r.add(
    {
      method: 'get',
      path: '/v1/event_types',
      summary: 'List event types',
      auth: 'public',
      responses: { 200: eventTypeList },
    },
    (c) => c.json({ event_types: eventTypesJson() }),
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/events',
      summary: "#38 List an app's events (paginated)",
      query: pageQuery,
      responses: { 200: eventList },
    },
    (c, { query }) => {
      const { page, perPage } = pageParams(query, deps.pagination);
      return c.json(deps.events.listForApp(c.get('app').id, page, perPage));
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/events',
      summary: "List the user's events (paginated)",
      query: pageQuery,
      responses: { 200: eventList },
    },
    (c, { query }) => {
      const { page, perPage } = pageParams(query, deps.pagination);
      return c.json(deps.events.listForUser(c.get('principal').user.id, page, perPage));
    },
  );
  return r;
}
