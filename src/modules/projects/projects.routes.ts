import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { jsonBody } from '../../http/validate.ts';
import type { ProjectsService } from './projects.service.ts';
import { createProjectSchema, updateProjectSchema } from './projects.schemas.ts';

/** `/v1/projects` as go-scalingo calls it (ResourceList/Add/Get/Update/Delete, expected 200/201/204). */
export function projectsRoutes(deps: { projects: ProjectsService }) {
  const { projects } = deps;
  const r = new Hono<AppEnv>();
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.get('/v1/projects', (c) => c.json({ projects: projects.list(user(c)) }));
  r.post('/v1/projects', async (c) => {
    const { project } = await jsonBody(c, createProjectSchema, 'project');
    return c.json({ project: projects.create(user(c), project) }, 201);
  });
  r.get('/v1/projects/:id', (c) => c.json({ project: projects.get(user(c), c.req.param('id')) }));
  r.patch('/v1/projects/:id', async (c) => {
    const { project } = await jsonBody(c, updateProjectSchema, 'project');
    return c.json({ project: projects.update(user(c), c.req.param('id'), project) });
  });
  r.delete('/v1/projects/:id', (c) => {
    projects.remove(user(c), c.req.param('id'));
    return c.body(null, 204);
  });
  // Projects here never have the `private-network` flag: there is no private network to show.
  r.get('/v1/projects/:id/private_network', (c) => {
    projects.get(user(c), c.req.param('id'));
    throw ApiError.notFound('private_network', 'this project has no private network: the emulator does not provide private networks');
  });

  return r;
}
