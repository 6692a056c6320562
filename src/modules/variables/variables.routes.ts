import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { jsonBody, readJson, parseWith } from '../../http/validate.ts';
import type { VariablesService } from './variables.service.ts';
import { bulkDeleteSchema, bulkVariablesSchema, createVariableSchema, updateVariableSchema } from './variables.schemas.ts';

/** Environment variables of an app: the HTTP side of variables.service.ts. */
export function variablesRoutes(deps: { variables: VariablesService }) {
  const { variables } = deps;
  const r = new Hono<AppEnv>();
  const scope = (c: Context<AppEnv>) => variables.scope(c.get('principal').user, c.req.param('app') ?? '');

  r.get('/v1/apps/:app/variables', (c) => c.json({ variables: variables.list(scope(c)) }));

  r.post('/v1/apps/:app/variables', async (c) => {
    const s = scope(c);
    const { variable } = await jsonBody(c, createVariableSchema, 'variable');
    return c.json({ variable: variables.create(s, variable) }, 201);
  });

  // Bulk create-or-update.
  r.put('/v1/apps/:app/variables', async (c) => {
    const s = scope(c);
    const { variables: list } = await jsonBody(c, bulkVariablesSchema);
    return c.json({ variables: variables.bulkUpsert(s, list) });
  });

  r.patch('/v1/apps/:app/variables/:id', async (c) => {
    const s = scope(c);
    const existing = variables.byId(s, c.req.param('id'));
    const { variable } = await jsonBody(c, updateVariableSchema, 'variable');
    return c.json({ variable: variables.update(s, existing, variable.value) });
  });

  r.delete('/v1/apps/:app/variables/:id', (c) => {
    const s = scope(c);
    variables.delete(s, variables.byId(s, c.req.param('id')));
    return c.body(null, 204);
  });

  // Bulk delete: JSON body {variable_ids: [...]}.
  r.delete('/v1/apps/:app/variables', async (c) => {
    const s = scope(c);
    const { variable_ids } = parseWith(bulkDeleteSchema, await readJson(c));
    variables.bulkDelete(s, variable_ids);
    return c.body(null, 204);
  });

  return r;
}
