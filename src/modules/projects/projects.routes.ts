import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { ERROR_BODY } from '../../http/api-schemas.ts';
import { type AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { createProjectSchema, projectEnvelope, projectList, updateProjectSchema } from './projects.schemas.ts';
import { type ProjectsService } from './projects.service.ts';

/** `/v1/projects` as go-scalingo calls it (ResourceList/Add/Get/Update/Delete, expected 200/201/204). */
export function projectsRoutes(deps: { projects: ProjectsService }) {
  const { projects } = deps;
  const r = new ApiRoutes('projects');
  const user = (c: Context<AppEnv>) => c.get('principal').user;

  r.add(
    {
      method: 'get',
      path: '/v1/projects',
      summary: 'List projects (a default one always exists)',
      responses: { 200: projectList },
    },
    (c) => c.json({ projects: projects.list(user(c)) }),
  );
  r.add(
    {
      method: 'post',
      path: '/v1/projects',
      summary: 'Create a project',
      body: createProjectSchema,
      bodyRoot: 'project',
      responses: { 201: projectEnvelope },
    },
    (c, { body: { project } }) => c.json({ project: projects.create(user(c), project) }, 201),
  );
  r.add(
    { method: 'get', path: '/v1/projects/:id', summary: 'Get a project', responses: { 200: projectEnvelope } },
    (c, { params }) => c.json({ project: projects.get(user(c), params.id) }),
  );
  r.add(
    {
      method: 'patch',
      path: '/v1/projects/:id',
      summary: 'Rename a project or make it the default',
      body: updateProjectSchema,
      bodyRoot: 'project',
      responses: { 200: projectEnvelope },
    },
    (c, { params, body: { project } }) => c.json({ project: projects.update(user(c), params.id, project) }),
  );
  r.add(
    { method: 'delete', path: '/v1/projects/:id', summary: 'Delete a project', responses: { 204: null } },
    (c, { params }) => {
      projects.remove(user(c), params.id);
      return c.body(null, 204);
    },
  );
  // Projects here never have the `private-network` flag: there is no private network to show.
  r.add(
    {
      method: 'get',
      path: '/v1/projects/:id/private_network',
      summary: "A project's private network (always 404: the emulator has none)",
      responses: { 404: ERROR_BODY },
    },
    (c, { params }) => {
      projects.get(user(c), params.id);
      throw ApiError.notFound(
        'private_network',
        'this project has no private network: the emulator does not provide private networks',
      );
    },
  );

  return r;
}
