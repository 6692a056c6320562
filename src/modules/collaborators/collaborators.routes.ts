import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { appResource } from '../apps/apps.schemas.ts';
import { type AppViewContext, appJson } from '../apps/apps.view.ts';
import {
  acceptQuery,
  collaboratorEnvelope,
  collaboratorList,
  inviteSchema,
  updateCollaboratorSchema,
} from './collaborators.schemas.ts';
import { type CollaboratorsService } from './collaborators.service.ts';

export function collaboratorsRoutes(deps: { collaborators: CollaboratorsService; view: AppViewContext }) {
  const { collaborators } = deps;
  const r = new ApiRoutes('collaborators');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  // Accepting is a GET that answers the bare application object (no `app` root), as the platform does.
  r.add(
    {
      method: 'get',
      path: '/v1/apps/collaboration',
      summary: 'Accept a collaboration invitation (answers the bare app)',
      query: acceptQuery,
      responses: { 200: appResource },
    },
    (c, { query }) => {
      const token = query.token;
      if (!token) throw ApiError.invalid('token', 'missing field');
      return c.json(appJson(collaborators.accept(user(c), token), deps.view));
    },
  );

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/collaborators',
      summary: "List an app's collaborators",
      responses: { 200: collaboratorList },
    },
    (c) => c.json({ collaborators: collaborators.list(user(c), c.get('app').id) }),
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/collaborators',
      summary: 'Invite a collaborator by e-mail',
      body: inviteSchema,
      bodyRoot: 'collaborator',
      responses: { 201: collaboratorEnvelope },
    },
    (c, { body: { collaborator } }) =>
      c.json(
        {
          collaborator: collaborators.invite(
            user(c),
            c.get('app').id,
            collaborator.email,
            collaborator.is_limited ?? false,
          ),
        },
        201,
      ),
  );

  r.add(
    {
      method: 'patch',
      path: '/v1/apps/:app/collaborators/:id',
      summary: 'Make a collaborator limited or not',
      body: updateCollaboratorSchema,
      bodyRoot: 'collaborator',
      responses: { 200: collaboratorEnvelope },
    },
    (c, { params, body: { collaborator } }) =>
      c.json({
        collaborator: collaborators.setLimited(user(c), c.get('app').id, params.id, collaborator.is_limited),
      }),
  );

  r.add(
    {
      method: 'delete',
      path: '/v1/apps/:app/collaborators/:id',
      summary: 'Remove a collaborator',
      responses: { 204: null },
    },
    (c, { params }) => {
      collaborators.remove(user(c), c.get('app').id, params.id);
      return c.body(null, 204);
    },
  );
  return r;
}
