import { type ContainerSize } from '../../config/schema.ts';
import { ApiRoutes } from '../../http/api-routes.ts';
import { parseWith, readJson } from '../../http/validate.ts';
import { type Urls } from '../../shared/urls.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { requireWritableApp } from '../apps/writable-app.ts';
import { type OperationsService, operationJson } from '../operations/operations.service.ts';
import {
  containerList,
  containerSizeList,
  formationList,
  operationEnvelope,
  restartSchema,
  scaleSchema,
} from './containers.schemas.ts';
import { type ContainersService } from './containers.service.ts';

export function containersRoutes(deps: {
  containers: ContainersService;
  operations: OperationsService;
  apps: AppsService;
  sizes: ContainerSize[];
  urls: () => Urls;
}) {
  const { containers, apps } = deps;
  const r = new ApiRoutes('containers');
  const operationUrl = (appName: string, id: string) => `${deps.urls().api}/v1/apps/${appName}/operations/${id}`;

  // Public on the platform (the catalogue of sizes).
  r.add(
    {
      method: 'get',
      path: '/v1/features/container_sizes',
      summary: 'List the container sizes',
      auth: 'public',
      responses: { 200: containerSizeList },
    },
    (c) => c.json({ container_sizes: deps.sizes.map((s) => ({ ...s, pricings: {} })) }),
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/ps',
      summary: '#10 List the containers of an app (ps), with their state now',
      responses: { 200: containerList },
    },
    async (c) => c.json({ containers: await containers.ps(c.get('app')) }),
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/containers',
      summary: '#11 Get the formation (amount and size per process type)',
      responses: { 200: formationList },
    },
    (c) => c.json({ containers: containers.formation(c.get('app')) }),
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/scale',
      summary: '#12 Scale an app',
      description:
        '200 when the app was never deployed (the formation is recorded); 202 with a `Location` operation otherwise.',
      middleware: [requireWritableApp(apps, 'scale containers')],
      body: scaleSchema,
      responses: { 200: formationList, 202: formationList },
    },
    async (c, { body }) => {
      const app = c.get('app');
      const { formation, operation } = await containers.scale(c.get('principal').user, app, body.containers);
      if (!operation) return c.json({ containers: formation }, 200);
      c.header('Location', operationUrl(app.name, operation.id));
      return c.json({ containers: formation }, 202);
    },
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/restart',
      summary: '#13 Restart containers (all, some types, or `<type>-<index>`)',
      description: '`scope` may be a list, one name, null, or absent; the body may be empty or JSON `null`.',
      body: restartSchema,
      rawBody: true,
      responses: { 202: null },
    },
    async (c) => {
      const app = c.get('app');
      const scope = parseWith(restartSchema(), await readJson(c))?.scope;
      const list = scope == null ? [] : Array.isArray(scope) ? scope : [scope];
      const op = await containers.restart(c.get('principal').user, app, list);
      c.header('Location', operationUrl(app.name, op.id));
      return c.body(null, 202);
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/operations/:id',
      summary: '#19 Get an operation (scale, restart, start-one-off)',
      responses: { 200: operationEnvelope },
    },
    (c, { params }) => c.json({ operation: operationJson(deps.operations.get(c.get('app').id, params.id)) }),
  );

  return r;
}
