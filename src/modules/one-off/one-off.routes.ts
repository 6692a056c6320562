import { type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiRoutes } from '../../http/api-routes.ts';
import { ERROR_BODY } from '../../http/api-schemas.ts';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { parseWith, readJson } from '../../http/validate.ts';
import { type Urls } from '../../shared/urls.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppViewContext, appJson } from '../apps/apps.view.ts';
import { requireWritableApp } from '../apps/writable-app.ts';
import { type ContainersService } from '../containers/containers.service.ts';
import { type Orchestrator } from '../containers/orchestrator.ts';
import {
  killBodyDoc,
  normaliseResize,
  resizeBodyDoc,
  resizeSchema,
  runAnswer,
  runSchema,
  waitAnswer,
} from './one-off.schemas.ts';
import { type OneOffService } from './one-off.service.ts';
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
  const r = new ApiRoutes('one-off');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/run',
      summary: '#14 Run a one-off container',
      description:
        'Attached runs also answer the start-one-off operation (`Location` header, `operation_url`, `operation`).',
      middleware: [requireWritableApp(apps, 'run one-off containers')],
      body: runSchema,
      responses: { 200: runAnswer },
    },
    async (c, { body: input }) => {
      const app = c.get('app');
      const { row, attachUrl, operation } = await oneOff.run(user(c), app, input);
      const body: Record<string, unknown> = {
        container: {
          ...deps.containers.containerJson(row),
          memory: deps.orchestrator.sizeOf(row.size).memory,
          app: appJson(app, deps.view),
        },
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
    },
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/containers/:container_id/stop',
      summary: '#15 Stop a one-off container',
      responses: { 202: null },
    },
    (c, { params }) => {
      oneOff.stop(user(c), c.get('app'), params.container_id);
      return c.body(null, 202);
    },
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/containers/:container_id/kill',
      summary: '#16 Send a signal (SIGUSR1, SIGUSR2) to a container',
      body: killBodyDoc,
      rawBody: true,
      responses: { 204: null },
    },
    async (c, { params }) => {
      await oneOff.kill(user(c), c.get('app'), params.container_id, await readJson(c));
      return c.body(null, 204);
    },
  );

  // #17 — the CLI sends {"width":"80","height":"24"} (strings), the DOC integers.
  r.add(
    {
      method: 'put',
      path: '/attach/:token',
      summary: '#17 Resize the terminal of a one-off container',
      auth: 'signed',
      body: resizeBodyDoc,
      rawBody: true,
      responses: { 200: null },
    },
    async (c, { params }) => {
      const s = oneOff.byToken(params.token, 'resize');
      const { width, height } = parseWith(resizeSchema(), normaliseResize(await readJson(c)));
      if (width > 0 && height > 0) await oneOff.resize(s, width, height);
      return c.body(null, 200);
    },
  );

  // #18 — before attaching only; one or more `file` parts.
  r.add(
    {
      method: 'post',
      path: '/attach/:token/files',
      summary: '#18 Upload files into a one-off container before attaching',
      description: 'multipart/form-data, one or more `file` parts; bounded by the upload size limit.',
      auth: 'signed',
      middleware: [
        bodyLimit({
          maxSize: deps.uploadMaxBytes + MULTIPART_OVERHEAD,
          onError: () => {
            throw ApiError.payloadTooLarge(deps.uploadMaxBytes);
          },
        }),
      ],
      responses: { 200: null },
    },
    async (c, { params }) => {
      const s = oneOff.byToken(params.token, 'upload');
      if (!/^multipart\/form-data\b/i.test(c.req.header('content-type') ?? ''))
        throw ApiError.invalid('file', 'post the file as multipart/form-data in the field "file"');
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
  r.add(
    {
      method: 'get',
      path: '/attach/:token/wait',
      summary: 'Wait for a one-off container to exit: its exit code',
      auth: 'signed',
      responses: { 200: waitAnswer },
    },
    async (c, { params }) => c.json(await oneOff.wait(oneOff.byToken(params.token, 'wait'))),
  );

  r.add(
    {
      method: 'get',
      path: '/attach/:token',
      summary: 'Attach to a one-off container (CONNECT or a WebSocket upgrade; a plain GET is refused)',
      auth: 'signed',
      responses: {
        400: {
          contentType: 'application/json',
          schema: ERROR_BODY,
          description: 'Always: attach with CONNECT or a WebSocket upgrade',
        },
      },
    },
    (_c, { params }) => {
      oneOff.byToken(params.token, 'wait');
      throw ApiError.badRequest('attach with CONNECT (as the Scalingo CLI does) or a WebSocket upgrade on this URL');
    },
  );

  return r;
}
