// What `scalingo db-tunnel` may reach (issue #15). The CLI connects to the region's SSH endpoint as
// `git` and asks for a direct-tcpip channel to the host:port of the addon's URL variable
// (cli db/tunnel.go: sshClient.Dial("tcp", dbURL.Host)); that host is the server's alias on the app's
// Docker network. Only the alias and port of a real addon server of an app the key's user may
// access (owner or full collaborator: a limited one may not reach the database) are allowed, and
// the connection goes to the server's address as the runtime gives it (its port published on publishHost,
// 127.0.0.1 unless configured; or its alias on docker.network, the emulator's own network) — never to a
// container's bridge address. Everything else is refused.
import { type UserRow } from '../auth/principal.ts';
import { ADDON_KINDS, type AddonKind } from './addon-kinds.ts';
import { type AddonServers } from './addon-servers.ts';

export type TunnelTarget = { host: string; port: number; addonId: string } | { refused: string };

export function createTunnelTargets(deps: {
  servers: AddonServers;
  canAccess: (user: UserRow, appId: string) => boolean;
}) {
  return {
    /** Where a forward to `host:port` asked by `user` goes (the published port), or why it is refused. */
    async resolve(user: UserRow, host: string, port: number): Promise<TunnelTarget> {
      const row = deps.servers.byAlias(host.toLowerCase());
      // One answer for unknown, foreign and wrong-port targets: nothing about other users' addons leaks.
      const refused = { refused: `no database of yours is reachable at ${host}:${port}` };
      if (!row || port !== ADDON_KINDS[row.kind as AddonKind].port || !deps.canAccess(user, row.app_id)) return refused;
      const r = await deps.servers.running(row.addon_id);
      if (!r?.address) return { refused: `the database server at ${host}:${port} is not running` };
      return { ...r.address, addonId: row.addon_id };
    },
  };
}

export type TunnelTargets = ReturnType<typeof createTunnelTargets>;
