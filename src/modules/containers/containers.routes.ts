import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { jsonBody, readJson, parseWith, pathParam } from '../../http/validate.ts';
import type { AppsService } from '../apps/apps.service.ts';
import type { ContainerSize } from '../../config/schema.ts';
import type { Urls } from '../../shared/urls.ts';
import { operationJson, type OperationsService } from '../operations/operations.service.ts';
import type { ContainersService } from './containers.service.ts';

const scaleSchema = z.object({
  containers: z
    .array(
      z.object({
        name: z.string().min(1, "can't be blank"),
        amount: z.number().int('must be a whole number').min(0, 'must be greater than or equal to 0'),
        size: z.string().nullish(),
      }),
    )
    .min(1, 'must list at least one container type'),
});

// The npm client sends {scope: "web"} or {}, the Go client {"scope": [...]}, {"scope": null} or the
// JSON `null` itself (a nil *AppsRestartParams); an empty body is curl's. All but a list mean "every container".
const restartSchema = z.object({ scope: z.union([z.array(z.string().min(1)), z.string().min(1), z.null()]).optional() }).nullish();

export function containersRoutes(deps: { containers: ContainersService; operations: OperationsService; apps: AppsService; sizes: ContainerSize[]; urls: () => Urls }) {
  const { containers, apps } = deps;
  const r = new Hono<AppEnv>();
  const appOf = (c: Context<AppEnv>) => apps.visibleApp(c.get('principal').user, pathParam(c, 'app'));
  const operationUrl = (appName: string, id: string) => `${deps.urls().api}/v1/apps/${appName}/operations/${id}`;

  // Public on the platform (the catalogue of sizes).
  r.get('/v1/features/container_sizes', (c) => c.json({ container_sizes: deps.sizes.map((s) => ({ ...s, pricings: {} })) }));

  r.get('/v1/apps/:app/ps', async (c) => c.json({ containers: await containers.ps(appOf(c)) }));
  r.get('/v1/apps/:app/containers', (c) => c.json({ containers: containers.formation(appOf(c)) }));

  r.post('/v1/apps/:app/scale', async (c) => {
    const app = apps.writableApp(c.get('principal').user, c.req.param('app'), 'scale containers');
    const body = await jsonBody(c, scaleSchema);
    const { formation, operation } = await containers.scale(c.get('principal').user, app, body.containers);
    if (!operation) return c.json({ containers: formation }, 200);
    c.header('Location', operationUrl(app.name, operation.id));
    return c.json({ containers: formation }, 202);
  });

  r.post('/v1/apps/:app/restart', async (c) => {
    const app = appOf(c);
    const scope = parseWith(restartSchema, await readJson(c))?.scope;
    const list = scope == null ? [] : Array.isArray(scope) ? scope : [scope];
    const op = await containers.restart(c.get('principal').user, app, list);
    c.header('Location', operationUrl(app.name, op.id));
    return c.body(null, 202);
  });

  r.get('/v1/apps/:app/operations/:id', (c) => c.json({ operation: operationJson(deps.operations.get(appOf(c).id, c.req.param('id'))) }));

  return r;
}
