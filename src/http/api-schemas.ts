import { extendZodWithOpenApi } from '@hono/zod-openapi';
import { z } from 'zod';

// Before any schema is made: @hono/zod-openapi gives zod's schemas `.openapi()` as they are created (zod 4
// sets methods per instance), and the OpenAPI document needs it of every schema it registers. Its module does it
// when it loads; called here (it does nothing the second time) because the bundle's code splitting may order a
// bare `import '@hono/zod-openapi'` after this module's schemas (the route groups imported at first use).
extendZodWithOpenApi(z);

/**
 * Schemas shared by the route declarations of several areas: the error bodies, pagination meta,
 * and small helpers. Area resources live in their area's `*.schemas.ts`.
 */

/**
 * A schema made at its first use, not when its module is evaluated: `export const x = lazySchema(() => z.object(…))`,
 * read as `x()` (the same schema every time). The schemas of the route groups built at start are made so: most of
 * them no request of a run ever needs, and making a zod schema costs start-up time (docs/architecture.md, "Start and
 * idle memory"). A route declaration takes one as it takes a schema (`body: x`, `responses: { 200: x }`).
 */
export type LazySchema<S extends z.ZodType = z.ZodType> = () => S;

export function lazySchema<S extends z.ZodType>(make: () => S): LazySchema<S> {
  let made: S | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

/** A schema, or one made at its first use. */
export type SchemaLike<S extends z.ZodType = z.ZodType> = S | LazySchema<S>;

/** The schema itself (made now if it is made at first use). */
export function schemaOf<S extends z.ZodType>(schema: SchemaLike<S>): S {
  return typeof schema === 'function' ? schema() : schema;
}

/** 400/401/403/413/415/50x `{error}`, 402 `{error, url}`, 404 `{resource, error}`, 422 `{errors: {field: [msg]}}`. */
export const ERROR_BODY = z
  .union([
    z.object({ resource: z.string(), error: z.string() }),
    z.object({ errors: z.record(z.string(), z.array(z.string())) }),
    z.object({ error: z.string(), url: z.string().optional() }),
  ])
  .meta({ id: 'Error' });

/** ISO 8601 date-times as the platform writes them (`isoDate`). */
export const isoDateTime = z.string().meta({ format: 'date-time' });

/** `meta.pagination` of paginated lists. */
export const paginationMeta = z
  .object({
    pagination: z.object({
      prev_page: z.number().nullable(),
      current_page: z.number(),
      next_page: z.number().nullable(),
      total_pages: z.number(),
      total_count: z.number(),
    }),
  })
  .meta({ id: 'PaginationMeta' });

/** Free-form JSON object (for bodies whose keys are data, e.g. stats series or addon configs). */
export const anyObject = z.record(z.string(), z.unknown());

/** The signature of a pre-authenticated (signed) URL: what a signed route's handler checks (the signer's query). */
export const signedUrlQuery = lazySchema(() => z.object({ token: z.string(), timestamp: z.string() }));

/** The `page` / `per_page` query of a paginated list (read by `pageParams`, src/http/validate.ts). */
export const pageQuery = z.object({ page: z.string().optional(), per_page: z.string().optional() });
