import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { jsonBody, parseWith, readJson, pathParam } from '../../http/validate.ts';
import type { Urls } from '../../shared/urls.ts';
import type { AppsService } from '../apps/apps.service.ts';
import { appJson, type AppViewContext } from '../apps/apps.view.ts';
import type { ContainersService } from '../containers/containers.service.ts';
import type { Orchestrator } from '../containers/orchestrator.ts';
import { ATTACH_PREFIX } from './attach-url.ts';
import type { AttachUse, OneOffService } from './one-off.service.ts';
import { normaliseResize, resizeSchema, runSchema } from './one-off.schemas.ts';
import { filesOf } from './uploads.ts';

// Room for the multipart envelope around the largest accepted file.
const MULTIPART_OVERHEAD = 64 * 1024;

export interface OneOffRoutesDeps {
  oneOff: OneOffService;
  apps: AppsService;
  containers: ContainersService;
  orchestrator: Orchestrator;
  view: AppViewContext;
  urls: () => Urls;
  uploadMaxBytes: number;
}

/**
 * #14–#16 under /v1 (authenticated), and #17, #18 and `/wait` on the attach URL, which is outside
 * /v1: the URL itself is the credential (the CLI's Basic auth header is ignored there).
 */
export function oneOffRoutes(deps: OneOffRoutesDeps) {
  const { oneOff, apps } = deps;
  const r = new Hono<AppEnv>();
  const appOf = (c: Context<AppEnv>) => apps.visibleApp(c.get('principal').user, pathParam(c, 'app'));
  const session = (c: Context<AppEnv>, use: AttachUse) => oneOff.byToken(pathParam(c, 'token'), use);

  r.post('/v1/apps/:app/run', async (c) => {
    const app = apps.writableApp(c.get('principal').user, c.req.param('app'), 'run one-off containers');
    const input = await jsonBody(c, runSchema);
    const { row, attachUrl, operation } = await oneOff.run(c.get('principal').user, app, input);
    const body: Record<string, unknown> = {
      container: { ...deps.containers.containerJson(row), memory: deps.orchestrator.sizeOf(row.size).memory, app: appJson(app, deps.view) },
      attach_url: attachUrl,
    };
    if (operation) {
      // The Go client takes the operation from the Location header; the DOC shows it in the body too.
      const url = `${deps.urls().api}/v1/apps/${app.name}/operations/${operation.id}`;
      c.header('Location', url);
      body.operation_url = url;
      body.operation = operation.id;
    }
    return c.json(body, 200);
  });

  r.post('/v1/apps/:app/containers/:container_id/stop', (c) => {
    oneOff.stop(c.get('principal').user, appOf(c), pathParam(c, 'container_id'));
    return c.body(null, 202);
  });

  r.post('/v1/apps/:app/containers/:container_id/kill', async (c) => {
    const app = appOf(c);
    await oneOff.kill(c.get('principal').user, app, c.req.param('container_id'), await readJson(c));
    return c.body(null, 204);
  });

  // #17 — the CLI sends {"width":"80","height":"24"} (strings), the DOC integers.
  r.put(`${ATTACH_PREFIX}:token`, async (c) => {
    const s = session(c, 'resize');
    const { width, height } = parseWith(resizeSchema, normaliseResize(await readJson(c)));
    if (width > 0 && height > 0) await oneOff.resize(s, width, height);
    return c.body(null, 200);
  });

  // #18 — before attaching only; one or more `file` parts.
  r.post(
    `${ATTACH_PREFIX}:token/files`,
    bodyLimit({
      maxSize: deps.uploadMaxBytes + MULTIPART_OVERHEAD,
      onError: () => {
        throw ApiError.payloadTooLarge(deps.uploadMaxBytes);
      },
    }),
    async (c) => {
      const s = session(c, 'upload');
      if (!/^multipart\/form-data\b/i.test(c.req.header('content-type') ?? '')) throw ApiError.invalid('file', 'post the file as multipart/form-data in the field "file"');
      let form: Record<string, unknown>;
      try {
        form = await c.req.parseBody({ all: true });
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw ApiError.badRequest(`the multipart body could not be read: ${(err as Error).message}`);
      }
      await oneOff.upload(s, await filesOf(form, deps.uploadMaxBytes));
      return c.body(null, 200);
    },
  );

  // The CLI's last call: the exit code, integers only (it decodes into map[string]int).
  r.get(`${ATTACH_PREFIX}:token/wait`, async (c) => c.json(await oneOff.wait(session(c, 'wait'))));

  r.get(`${ATTACH_PREFIX}:token`, (c) => {
    session(c, 'wait');
    throw ApiError.badRequest('attach with CONNECT (as the Scalingo CLI does) or a WebSocket upgrade on this URL');
  });

  return r;
}
