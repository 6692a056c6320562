import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { jsonBody, pageParams, pathParam } from '../../http/validate.ts';
import { paginate } from '../../shared/pagination.ts';
import type { Urls } from '../../shared/urls.ts';
import type { AppsService } from '../apps/apps.service.ts';
import type { DeploymentsStore } from './deployments.store.ts';
import type { DeploymentsService } from './deployments.service.ts';

const createSchema = z.object({
  deployment: z.object({
    source_url: z.string().min(1, "can't be blank").max(4096),
    git_ref: z.string().max(256).refine((v) => !v.startsWith('-'), 'is invalid: it cannot start with a hyphen').nullish(),
  }),
});

/** The platform's deployment-by-archive endpoint, plus listing, showing and the build output. */
export function deploymentsRoutes(deps: {
  deployments: DeploymentsService;
  store: DeploymentsStore;
  apps: AppsService;
  urls: () => Urls;
  pagination: { defaultPerPage: number; maxPerPage: number };
  /** The emulator's own source download URL → the stored archive's path (sources module); null otherwise. */
  localSource?: (url: string) => string | null;
}) {
  const r = new Hono<AppEnv>();
  const appOf = (c: Context<AppEnv>) => deps.apps.visibleApp(c.get('principal').user, pathParam(c, 'app'));

  r.post('/v1/apps/:app/deployments', async (c) => {
    const app = deps.apps.writableApp(c.get('principal').user, c.req.param('app'), 'deploy new code');
    const { deployment } = await jsonBody(c, createSchema, 'deployment');
    if (!/^(https?:\/\/|file:\/\/|\/|\.)/i.test(deployment.source_url)) throw ApiError.invalid('source_url', 'must be an http(s):// or file:// URL, or a local path, to a .tar.gz archive');
    const location = deps.localSource?.(deployment.source_url) ?? deployment.source_url;
    const d = await deps.deployments.deployWhenEngine(app, { kind: 'archive', location, gitRef: deployment.git_ref ?? null }, c.get('principal').user);
    return c.json({ deployment: deps.deployments.toJson(d, deps.urls().api, app.name) }, 201);
  });

  r.get('/v1/apps/:app/deployments', (c) => {
    const app = appOf(c);
    const { page, perPage } = pageParams(c, deps.pagination);
    const p = paginate(deps.store.count(app.id), page, perPage);
    return c.json({ deployments: deps.store.page(app.id, p.limit, p.offset).map((d) => deps.deployments.toJson(d, deps.urls().api, app.name)), meta: { pagination: p.meta } });
  });

  r.get('/v1/apps/:app/deployments/:id', (c) => {
    const app = appOf(c);
    const d = deps.store.get(app.id, c.req.param('id'));
    if (!d) throw ApiError.notFound('deployment');
    return c.json({ deployment: deps.deployments.toJson(d, deps.urls().api, app.name) });
  });

  r.get('/v1/apps/:app/deployments/:id/output', (c) => {
    const app = appOf(c);
    const d = deps.store.get(app.id, c.req.param('id'));
    if (!d) throw ApiError.notFound('deployment');
    return c.text(d.output);
  });

  return r;
}
