import { z } from 'zod';
import { containerSizeSchema } from '../../config/schema.ts';
import { isoDateTime, lazySchema } from '../../http/api-schemas.ts';

// POST /v1/apps/:app/scale (#12): final amounts (and optional size) per process type.
export const scaleSchema = lazySchema(() =>
  z.object({
    containers: z
      .array(
        z.object({
          name: z.string().min(1, "can't be blank"),
          amount: z.number().int('must be a whole number').min(0, 'must be greater than or equal to 0'),
          size: z.string().nullish(),
        }),
      )
      .min(1, 'must list at least one container type'),
  }),
);

// The npm client sends {scope: "web"} or {}, the Go client {"scope": [...]}, {"scope": null} or the
// JSON `null` itself (a nil *AppsRestartParams); an empty body is curl's. All but a list mean "every container".
export const restartSchema = lazySchema(() =>
  z.object({ scope: z.union([z.array(z.string().min(1)), z.string().min(1), z.null()]).optional() }).nullish(),
);

// ---- Answers ----

/** A size of the catalogue (config `containerSizes`), as /v1/features/container_sizes and ps write it. */
export const containerSizeResource = lazySchema(() => containerSizeSchema.meta({ id: 'ContainerSize' }));

/** GET /v1/features/container_sizes: the catalogue, with the platform's (empty here) pricings. */
export const containerSizeList = lazySchema(() =>
  z.object({
    container_sizes: z.array(containerSizeSchema.extend({ pricings: z.record(z.string(), z.unknown()) })),
  }),
);

/** A container as ps lists it (containers.service.ts `containerJson`). */
export const containerResource = lazySchema(() =>
  z
    .object({
      id: z.string(),
      app_id: z.string(),
      type: z.string(),
      type_index: z.number().int(),
      label: z.string(),
      created_at: isoDateTime,
      deleted_at: isoDateTime.nullable(),
      state: z.string(),
      size: z.string(),
      command: z.string(),
      container_size: containerSizeResource(),
    })
    .meta({ id: 'Container' }),
);

export const containerList = lazySchema(() => z.object({ containers: z.array(containerResource()) }));

/** One process type of the formation (`formationJson`). */
export const formationItem = lazySchema(() =>
  z
    .object({
      id: z.string(),
      app_id: z.string(),
      name: z.string(),
      amount: z.number().int(),
      size: z.string(),
      command: z.string(),
    })
    .meta({ id: 'ContainerFormation' }),
);

export const formationList = lazySchema(() => z.object({ containers: z.array(formationItem()) }));

/** operations.service.ts `operationJson`: finished_at is never null (the Go client's non-pointer time). */
export const operationResource = lazySchema(() =>
  z
    .object({
      id: z.string(),
      app_id: z.string(),
      created_at: isoDateTime,
      finished_at: isoDateTime,
      status: z.enum(['pending', 'running', 'done', 'error']),
      type: z.string(),
      error: z.string().optional(),
      /** start-one-off operations, once the container is created: where the CLI attaches. */
      start_one_off_data: z.object({ attach_url: z.string(), container_id: z.string() }).optional(),
    })
    .meta({ id: 'Operation' }),
);

export const operationEnvelope = lazySchema(() => z.object({ operation: operationResource() }));
