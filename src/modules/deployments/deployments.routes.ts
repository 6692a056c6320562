import { ApiRoutes } from '../../http/api-routes.ts';
import { pageQuery } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { pageParams } from '../../http/validate.ts';
import { paginate } from '../../shared/pagination.ts';
import { type Urls } from '../../shared/urls.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { requireWritableApp } from '../apps/writable-app.ts';
import { createDeploymentSchema, deploymentEnvelope, deploymentList } from './deployments.schemas.ts';
import { type DeploymentsService } from './deployments.service.ts';
import { type DeploymentsStore } from './deployments.store.ts';

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
  const r = new ApiRoutes('deployments');
  const json = (d: Parameters<DeploymentsService['toJson']>[0], appName: string) =>
    deps.deployments.toJson(d, deps.urls().api, appName);

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/deployments',
      summary: 'Deploy an archive (.tar.gz at source_url)',
      middleware: [requireWritableApp(deps.apps, 'deploy new code')],
      body: createDeploymentSchema,
      bodyRoot: 'deployment',
      responses: { 201: deploymentEnvelope },
    },
    async (c, { body: { deployment } }) => {
      const app = c.get('app');
      if (!/^(https?:\/\/|file:\/\/|\/|\.)/i.test(deployment.source_url))
        throw ApiError.invalid(
          'source_url',
          'must be an http(s):// or file:// URL, or a local path, to a .tar.gz archive',
        );
      const location = deps.localSource?.(deployment.source_url) ?? deployment.source_url;
      const d = await deps.deployments.deployWhenEngine(
        app,
        { kind: 'archive', location, gitRef: deployment.git_ref ?? null },
        c.get('principal').user,
      );
      return c.json({ deployment: json(d, app.name) }, 201);
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/deployments',
      summary: 'List the deployments of an app, newest first',
      query: pageQuery,
      responses: { 200: deploymentList },
    },
    (c, { query }) => {
      const app = c.get('app');
      const { page, perPage } = pageParams(query, deps.pagination);
      const p = paginate(deps.store.count(app.id), page, perPage);
      return c.json({
        deployments: deps.store.page(app.id, p.limit, p.offset).map((d) => json(d, app.name)),
        meta: { pagination: p.meta },
      });
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/deployments/:id',
      summary: 'Get a deployment',
      responses: { 200: deploymentEnvelope },
    },
    (c, { params }) => {
      const app = c.get('app');
      const d = deps.store.get(app.id, params.id);
      if (!d) throw ApiError.notFound('deployment');
      return c.json({ deployment: json(d, app.name) });
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/deployments/:id/output',
      summary: 'Get the build output of a deployment',
      responses: { 200: { contentType: 'text/plain', description: 'The build output so far' } },
    },
    (c, { params }) => {
      const d = deps.store.get(c.get('app').id, params.id);
      if (!d) throw ApiError.notFound('deployment');
      return c.text(d.output);
    },
  );

  return r;
}
