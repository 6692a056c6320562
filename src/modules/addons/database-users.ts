// The platform's rules for the users of a real addon server (the database API's DatabaseListUsers,
// DatabaseCreateUser, DatabaseDeleteUser): which users are protected, what a name clash or a refusal of the
// server answers, and the password made when none is given. database-features.routes.ts only maps HTTP.
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../http/errors.ts';
import { type AddonServers } from './addon-servers.ts';
import { type AddonRow } from './addons.store.ts';
import { notReady } from './database-api.ts';

/** Users the platform manages itself: the CLI shows them as protected (not deletable). */
const SYSTEM_USERS = new Set(['postgres', 'root', 'mysql', 'mariadb.sys', 'default']);

export interface DatabaseUser {
  name: string;
  read_only: boolean;
  protected: boolean;
  dbms_attributes?: { password_encryption: string };
}

export function createDatabaseUsers(servers: AddonServers) {
  /** The server's users, or the 503 of a server that stopped answering (restarting after a plan change, stopped). */
  async function usersOf(addon: AddonRow) {
    const users = await servers.users(addon.id).catch(async (err: Error) => {
      if (!(await servers.running(addon.id))) return null;
      throw err;
    });
    if (!users) throw notReady(addon);
    return users;
  }
  /** The server's own user, and the platform's: shown as protected, never deleted. */
  const isProtected = (addon: AddonRow, name: string) =>
    name === servers.server(addon.id)?.username || SYSTEM_USERS.has(name);

  return {
    async list(addon: AddonRow): Promise<DatabaseUser[]> {
      return (await usersOf(addon)).map((u) => ({
        name: u.name,
        read_only: u.readOnly,
        protected: isProtected(addon, u.name),
        ...(u.passwordEncryption ? { dbms_attributes: { password_encryption: u.passwordEncryption } } : {}),
      }));
    },

    /** PostgreSQL, MySQL; Redis has no user management in the CLI. A password is made when none is given. */
    async create(addon: AddonRow, input: { name: string; password?: string; read_only?: boolean }) {
      if ((await usersOf(addon)).some((x) => x.name === input.name))
        throw ApiError.invalid('name', `user "${input.name}" already exists`);
      const password = input.password || randomBytes(24).toString('base64url');
      const done = await servers
        .manageUser(addon.id, 'createUser', { name: input.name, password, readOnly: input.read_only })
        .catch((err: Error) => {
          throw ApiError.badRequest(`the server refused to create the user: ${err.message}`);
        });
      if (!done) throw ApiError.badRequest('this database has no user management');
      return { name: input.name, read_only: !!input.read_only, protected: false, password };
    },

    async remove(addon: AddonRow, name: string): Promise<void> {
      if (!(await usersOf(addon)).some((x) => x.name === name)) throw ApiError.notFound('user');
      if (isProtected(addon, name)) throw ApiError.badRequest(`user "${name}" is protected: it cannot be deleted`);
      const done = await servers.manageUser(addon.id, 'deleteUser', { name }).catch((err: Error) => {
        throw ApiError.badRequest(`the server refused to delete the user: ${err.message}`);
      });
      if (!done) throw ApiError.badRequest('this database has no user management');
    },
  };
}

export type DatabaseUsers = ReturnType<typeof createDatabaseUsers>;
