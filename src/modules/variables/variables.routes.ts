import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { jsonBody, readJson, parseWith } from '../../http/validate.ts';
import { tx, type Db } from '../../db/database.ts';
import { objectId } from '../../shared/ids.ts';
import type { AppsService } from '../apps/apps.service.ts';
import type { EventsService } from '../events/events.service.ts';
import type { VariablesStore, VariableRow } from './variables.store.ts';

// The platform's limits: names up to 64 characters (letters, digits, underscores), values up to 32768.
const name = z.string().min(1, "can't be blank").max(64, 'is too long (maximum is 64 characters)').regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'should contain only letters, digits and underscores, and not start with a digit');
const value = z.string().max(32768, 'is too long (maximum is 32768 characters)');
const createSchema = z.object({ variable: z.object({ name, value }) });
const updateSchema = z.object({ variable: z.object({ value }) });
// The Terraform provider sends {"variables": null} (a nil slice) at every app creation without an
// `environment`: null and [] change nothing (no event) and answer an empty list.
const bulkSchema = z.object({ variables: z.array(z.object({ name, value })).nullable().transform((v) => v ?? []) });
const json = (v: VariableRow) => ({ id: v.id, name: v.name, value: v.value });

/**
 * Environment variables of an app (list, create, bulk update, update, delete). As on the
 * platform, a change takes effect at the next restart or deployment, not at once.
 */
export function variablesRoutes(deps: { db: Db; store: VariablesStore; apps: AppsService; events: EventsService }) {
  const { store, apps, events } = deps;
  const r = new Hono<AppEnv>();
  const app = (c: { get(k: 'principal'): { user: import('../../http/env.ts').UserRow }; req: { param(k: 'app'): string } }) => ({ user: c.get('principal').user, app: apps.writableApp(c.get('principal').user, c.req.param('app'), 'read or change environment variables') });

  r.get('/v1/apps/:app/variables', (c) => c.json({ variables: store.all(app(c).app.id).map(json) }));

  r.post('/v1/apps/:app/variables', async (c) => {
    const { user, app: a } = app(c);
    const { variable } = await jsonBody(c, createSchema, 'variable');
    const existing = store.byName(a.id, variable.name);
    const row = existing ? { ...existing, value: variable.value } : { id: objectId(), app_id: a.id, ...variable };
    tx(deps.db, () => {
      if (existing) store.update(existing.id, variable.value);
      else store.insert(row);
      events.record(existing
        ? { type: 'edit_variable', app: a, user, typeData: { name: row.name, value: row.value, old_value: existing.value } }
        : { type: 'new_variable', app: a, user, typeData: { name: row.name, value: row.value } });
    });
    return c.json({ variable: json(row) }, 201);
  });

  // Bulk create-or-update.
  r.put('/v1/apps/:app/variables', async (c) => {
    const { user, app: a } = app(c);
    const { variables } = await jsonBody(c, bulkSchema);
    if (!variables.length) return c.json({ variables: [] });
    const newVars: { name: string; value: string }[] = [];
    const updatedVars: { name: string; value: string; old_value: string }[] = [];
    tx(deps.db, () => {
      for (const v of variables) {
        const existing = store.byName(a.id, v.name);
        if (existing) {
          store.update(existing.id, v.value);
          updatedVars.push({ ...v, old_value: existing.value });
        } else {
          store.insert({ id: objectId(), app_id: a.id, ...v });
          newVars.push(v);
        }
      }
      events.record({ type: 'edit_variables', app: a, user, typeData: { new_vars: newVars, updated_vars: updatedVars, deleted_vars: [] } });
    });
    const names = new Set(variables.map((v) => v.name));
    return c.json({ variables: store.all(a.id).filter((v) => names.has(v.name)).map(json) });
  });

  r.patch('/v1/apps/:app/variables/:id', async (c) => {
    const { user, app: a } = app(c);
    const existing = store.byId(a.id, c.req.param('id'));
    if (!existing) throw ApiError.notFound('variable');
    const { variable } = await jsonBody(c, updateSchema, 'variable');
    tx(deps.db, () => {
      store.update(existing.id, variable.value);
      events.record({ type: 'edit_variable', app: a, user, typeData: { name: existing.name, value: variable.value, old_value: existing.value } });
    });
    return c.json({ variable: json({ ...existing, value: variable.value }) });
  });

  r.delete('/v1/apps/:app/variables/:id', (c) => {
    const { user, app: a } = app(c);
    const existing = store.byId(a.id, c.req.param('id'));
    if (!existing) throw ApiError.notFound('variable');
    tx(deps.db, () => {
      store.delete(existing.id);
      events.record({ type: 'delete_variable', app: a, user, typeData: { name: existing.name, value: existing.value } });
    });
    return c.body(null, 204);
  });

  // Bulk delete: JSON body {variable_ids: [...]}.
  r.delete('/v1/apps/:app/variables', async (c) => {
    const { user, app: a } = app(c);
    const { variable_ids } = parseWith(z.object({ variable_ids: z.array(z.string()).min(1) }), await readJson(c));
    const rows = variable_ids.map((id) => store.byId(a.id, id));
    if (rows.some((r) => !r)) throw ApiError.notFound('variable');
    tx(deps.db, () => {
      for (const row of rows) store.delete(row!.id);
      events.record({ type: 'edit_variables', app: a, user, typeData: { new_vars: [], updated_vars: [], deleted_vars: rows.map((r) => ({ name: r!.name, value: r!.value })) } });
    });
    return c.body(null, 204);
  });

  return r;
}
