import { z } from 'zod';
import { anyObject, isoDateTime, paginationMeta } from '../../http/api-schemas.ts';

/** page / per_page of the paginated lists. */

// ---- Answers ----

/** The Event resource (events.service.ts `toJson`); `type_data` depends on the type. */
export const eventResource = z
  .object({
    id: z.string(),
    created_at: isoDateTime,
    type: z.string(),
    app_id: z.string().nullable(),
    app_name: z.string().nullable(),
    user: z.object({ id: z.string(), username: z.string(), email: z.string() }).nullable(),
    type_data: anyObject,
    // Project events (go-scalingo Event.ProjectID/ProjectName).
    project_id: z.string().optional(),
    project_name: z.string().optional(),
  })
  .meta({ id: 'Event' });

export const eventList = z.object({ events: z.array(eventResource), meta: paginationMeta });

/** #37 Event category (event-types.ts EVENT_CATEGORIES). */
export const eventCategoryResource = z
  .object({ id: z.string(), name: z.string(), display_name: z.string(), position: z.number().int() })
  .meta({ id: 'EventCategory' });
export const eventCategoryList = z.object({ event_categories: z.array(eventCategoryResource) });

/** Event type (event-types.ts `eventTypesJson`). */
export const eventTypeResource = z
  .object({
    id: z.string(),
    category_id: z.string(),
    name: z.string(),
    display_name: z.string(),
    description: z.string(),
  })
  .meta({ id: 'EventType' });
export const eventTypeList = z.object({ event_types: z.array(eventTypeResource) });
