import { type Context } from 'hono';
import { ApiRoutes } from '../../http/api-routes.ts';
import { type AppEnv } from '../../http/env.ts';
import { jsonBody, parseWith, readJson } from '../../http/validate.ts';
import {
  bulkDeleteSchema,
  bulkVariablesSchema,
  createVariableSchema,
  updateVariableSchema,
  variableEnvelope,
  variableList,
} from './variables.schemas.ts';
import { type VariablesService } from './variables.service.ts';

/**
 * Environment variables of an app: the HTTP side of variables.service.ts. Bodies are read after the
 * service's scope check (`rawBody`), so a Limited Collaborator gets the 403 before any 422.
 */
export function variablesRoutes(deps: { variables: VariablesService }) {
  const { variables } = deps;
  const r = new ApiRoutes('variables');
  const scope = (c: Context<AppEnv>) => variables.scope(c.get('principal').user, c.get('app').id);

  r.add(
    {
      method: 'get',
      path: '/v1/apps/:app/variables',
      summary: "List an app's environment variables",
      responses: { 200: variableList },
    },
    (c) => c.json({ variables: variables.list(scope(c)) }),
  );

  r.add(
    {
      method: 'post',
      path: '/v1/apps/:app/variables',
      summary: 'Create an environment variable',
      body: createVariableSchema,
      rawBody: true,
      responses: { 201: variableEnvelope },
    },
    async (c) => {
      const s = scope(c);
      const { variable } = await jsonBody(c, createVariableSchema, 'variable');
      return c.json({ variable: variables.create(s, variable) }, 201);
    },
  );

  r.add(
    {
      method: 'put',
      path: '/v1/apps/:app/variables',
      summary: 'Create or update several variables',
      description: '`{"variables": null}` (the Terraform provider) changes nothing.',
      body: bulkVariablesSchema,
      rawBody: true,
      responses: { 200: variableList },
    },
    async (c) => {
      const s = scope(c);
      const { variables: list } = await jsonBody(c, bulkVariablesSchema);
      return c.json({ variables: variables.bulkUpsert(s, list) });
    },
  );

  r.add(
    {
      method: 'patch',
      path: '/v1/apps/:app/variables/:id',
      summary: "Change a variable's value",
      body: updateVariableSchema,
      rawBody: true,
      responses: { 200: variableEnvelope },
    },
    async (c, { params }) => {
      const s = scope(c);
      const existing = variables.byId(s, params.id);
      const { variable } = await jsonBody(c, updateVariableSchema, 'variable');
      return c.json({ variable: variables.update(s, existing, variable.value) });
    },
  );

  r.add(
    { method: 'delete', path: '/v1/apps/:app/variables/:id', summary: 'Delete a variable', responses: { 204: null } },
    (c, { params }) => {
      const s = scope(c);
      variables.delete(s, variables.byId(s, params.id));
      return c.body(null, 204);
    },
  );

  r.add(
    {
      method: 'delete',
      path: '/v1/apps/:app/variables',
      summary: 'Delete several variables',
      body: bulkDeleteSchema,
      rawBody: true,
      responses: { 204: null },
    },
    async (c) => {
      const s = scope(c);
      const { variable_ids } = parseWith(bulkDeleteSchema, await readJson(c));
      variables.bulkDelete(s, variable_ids);
      return c.body(null, 204);
    },
  );

  return r;
}
