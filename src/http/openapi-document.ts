import { type OpenAPIHono } from '@hono/zod-openapi';
import { ApiRoutes, type DeclaredRoute, registerRoutes } from './api-routes.ts';
import { anyObject, ERROR_BODY } from './api-schemas.ts';
import { type AppEnv } from './env.ts';

/**
 * GET /_emulator/openapi.json: the OpenAPI 3.1 document of every declared route (public: it only
 * describes the API). Made on first request, then kept: nothing of it (registry entries, route configs) is built
 * at start, when most runs never ask for it. The lazy route groups (src/wiring/lazy-routes.ts) are built before it.
 */
export function serveOpenApiDocument(app: OpenAPIHono<AppEnv>, version: string, declared: DeclaredRoute[]): void {
  let document: unknown;
  const routes = new ApiRoutes('emulator');
  routes.add(
    {
      method: 'get',
      path: '/_emulator/openapi.json',
      summary: 'This document',
      auth: 'public',
      responses: { 200: anyObject },
    },
    async (c) => {
      // Lazy route groups not built yet are built first: the document reads their real declarations.
      const pending = new Set(declared.flatMap((d) => d.built ?? []));
      if (pending.size) await Promise.all([...pending].map((built) => built()));
      if (!document) {
        registerComponents(app.openAPIRegistry);
        registerRoutes(app.openAPIRegistry, [...declared, ...routes.declared]);
      }
      document ??= app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: {
          title: 'Scalingo emulator API',
          version,
          description:
            "The Scalingo v1 platform API as the emulator serves it, with the emulator's control plane (/_emulator).",
        },
      });
      return c.json(document as object);
    },
  );
  app.route('/', routes);
}

/** The security schemes and the shared error body, written into the registry before the routes. */
function registerComponents(registry: OpenAPIHono['openAPIRegistry']): void {
  registry.registerComponent('securitySchemes', 'basicToken', {
    type: 'http',
    scheme: 'basic',
    description: 'An API token as the password (empty username).',
  });
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A bearer from POST /v1/tokens/exchange (one hour).',
  });
  registry.registerComponent('securitySchemes', 'basicPassword', {
    type: 'http',
    scheme: 'basic',
    description: 'A username and password (token routes only).',
  });
  registry.registerComponent('securitySchemes', 'admin', {
    type: 'http',
    scheme: 'bearer',
    description: 'The control plane admin token, from a loopback peer.',
  });
  registry.registerComponent('securitySchemes', 'addonToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'An addon token from POST /v1/apps/{app}/addons/{id}/token (database API).',
  });
  registry.register('Error', ERROR_BODY);
}
