import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { jsonBody } from '../../http/validate.ts';
import type { CollaboratorsService } from './collaborators.service.ts';
import { appJson, type AppViewContext } from '../apps/apps.view.ts';

const inviteSchema = z.object({
  collaborator: z.object({ email: z.string().email('is not a valid e-mail address'), is_limited: z.boolean().nullish() }),
});
// go-scalingo's CollaboratorUpdateParams: {"collaborator":{"is_limited":bool}}.
const updateSchema = z.object({ collaborator: z.object({ is_limited: z.boolean({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a boolean') }) }) });

export function collaboratorsRoutes(deps: { collaborators: CollaboratorsService; view: AppViewContext }) {
  const { collaborators } = deps;
  const r = new Hono<AppEnv>();

  // Accepting is a GET that answers the bare application object (no `app` root), as the platform does.
  r.get('/v1/apps/collaboration', (c) => {
    const token = c.req.query('token');
    if (!token) throw ApiError.invalid('token', 'missing field');
    return c.json(appJson(collaborators.accept(c.get('principal').user, token), deps.view));
  });

  r.get('/v1/apps/:app/collaborators', (c) => c.json({ collaborators: collaborators.list(c.get('principal').user, c.req.param('app')) }));

  r.post('/v1/apps/:app/collaborators', async (c) => {
    const { collaborator } = await jsonBody(c, inviteSchema, 'collaborator');
    return c.json({ collaborator: collaborators.invite(c.get('principal').user, c.req.param('app'), collaborator.email, collaborator.is_limited ?? false) }, 201);
  });

  r.patch('/v1/apps/:app/collaborators/:id', async (c) => {
    const { collaborator } = await jsonBody(c, updateSchema, 'collaborator');
    return c.json({ collaborator: collaborators.setLimited(c.get('principal').user, c.req.param('app'), c.req.param('id'), collaborator.is_limited) });
  });

  r.delete('/v1/apps/:app/collaborators/:id', (c) => {
    collaborators.remove(c.get('principal').user, c.req.param('app'), c.req.param('id'));
    return c.body(null, 204);
  });
  return r;
}
