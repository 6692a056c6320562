// `database-users-update-password` (go-scalingo DatabaseUpdateUser: PATCH /databases/:id/users/:name with
// {database_user: {password, password_confirmation}}) and its generated-password variant
// (DatabaseUserResetPassword: POST /databases/:id/users/:name/reset_password). The new password is set in
// the real server (ALTER ROLE / ALTER USER); protected users (the addon's own, the system's) are refused.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ApiRoutes } from '../../http/api-routes.ts';
import { lazySchema } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { limitBody } from '../../http/middleware/json-only.ts';
import { jsonBody } from '../../http/validate.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonsService } from './addons.service.ts';
import { type AddonRow } from './addons.store.ts';
import { DATABASE_API_BASES, notReady, readyAddon } from './database-api.ts';

/** Users the platform manages itself (as database-features.routes.ts lists them). */
const SYSTEM_USERS = new Set(['postgres', 'root', 'mysql', 'mariadb.sys', 'default']);
/** A name safe to splice into MariaDB's SQL text (the user must exist too). */
const SAFE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const updatePasswordSchema = lazySchema(() =>
  z.object({
    database_user: z
      .object({
        database_id: z.string().max(64).optional(),
        password: z
          .string()
          .regex(/^[A-Za-z0-9_.~+=!@#%^*,:-]{24,64}$/, 'must be 24 to 64 letters, digits or _.~+=!@#%^*,:-'),
        password_confirmation: z.string().max(64).optional(),
      })
      .refine((u) => u.password === u.password_confirmation, {
        message: "doesn't match the password",
        path: ['password_confirmation'],
      }),
  }),
);
const userWithPassword = lazySchema(() =>
  z.object({
    database_user: z.object({ name: z.string(), read_only: z.boolean(), protected: z.boolean(), password: z.string() }),
  }),
);

export function databaseUserPasswordsRoutes(deps: { addons: AddonsService; servers: AddonServers }) {
  const { servers } = deps;
  const r = new ApiRoutes('database-api');

  /** The user to change: it exists in the server and is not protected. */
  async function changeable(addon: AddonRow, name: string) {
    const users = await servers.users(addon.id).catch(() => null);
    if (!users) throw notReady(addon);
    const user = users.find((u) => u.name === name);
    if (!user || !SAFE_NAME.test(name)) throw ApiError.notFound('user');
    if (name === servers.server(addon.id)?.username || SYSTEM_USERS.has(name))
      throw ApiError.badRequest(`user "${name}" is protected: its password is managed by the platform`);
    return user;
  }
  async function setPassword(addon: AddonRow, name: string, password: string) {
    const done = await servers.manageUser(addon.id, 'setPassword', { name, password }).catch((err: Error) => {
      throw ApiError.badRequest(`the server refused the new password: ${err.message}`);
    });
    if (!done) throw ApiError.badRequest('this database has no user management');
  }

  for (const base of DATABASE_API_BASES) {
    r.add(
      {
        method: 'patch',
        path: `${base}/databases/:id/users/:name`,
        summary: "Change a database user's password",
        auth: 'addon',
        middleware: [limitBody(16 * 1024)],
        body: updatePasswordSchema,
        rawBody: true,
        responses: { 200: userWithPassword },
      },
      async (c, { params }) => {
        const addon = await readyAddon(deps.addons, servers, c, params.id);
        const user = await changeable(addon, params.name);
        const { database_user: u } = await jsonBody(c, updatePasswordSchema(), 'database_user');
        await setPassword(addon, user.name, u.password);
        return c.json({
          database_user: { name: user.name, read_only: user.readOnly, protected: false, password: u.password },
        });
      },
    );
    r.add(
      {
        method: 'post',
        path: `${base}/databases/:id/users/:name/reset_password`,
        summary: "Reset a database user's password to a generated one",
        auth: 'addon',
        responses: { 200: userWithPassword },
      },
      async (c, { params }) => {
        const addon = await readyAddon(deps.addons, servers, c, params.id);
        const user = await changeable(addon, params.name);
        const password = randomBytes(24).toString('base64url');
        await setPassword(addon, user.name, password);
        return c.json({ database_user: { name: user.name, read_only: user.readOnly, protected: false, password } });
      },
    );
  }
  return r;
}
