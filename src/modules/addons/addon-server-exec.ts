import { type Readable } from 'node:stream';
import { type Address, type ContainerRuntime } from '../../runtime/runtime.ts';
import { ADDON_KINDS, type AddonKind } from './addon-kinds.ts';
import { type AddonServerRow } from './addon-servers.store.ts';

// What runs inside an addon's running server, through the runtime's exec: dumps and backup
// archives, restores, users, TLS, point-in-time recovery. Each script of the kind (addon-kinds.ts) gets the addon's
// credentials in its environment, never spliced into the command.

/** An addon's server that runs: its row, its container and where the emulator reaches its port (ContainerInfo.address). */
export interface RunningServer {
  row: AddonServerRow;
  engineId: string;
  address: Address | null;
}

/** The addon's credentials, as the kind's scripts read them. */
export const serverEnv = (row: AddonServerRow) => ({
  ADDON_USER: row.username,
  ADDON_PASSWORD: row.password,
  ADDON_DATABASE: row.database,
});

type UserAction = 'createUser' | 'deleteUser' | 'setPassword';

const lastError = (stderr: string, exitCode: number) =>
  stderr.trim().split('\n').pop()?.slice(0, 300) || `exit code ${exitCode}`;

export function createAddonServerExec(
  runtime: ContainerRuntime,
  running: (addonId: string) => Promise<RunningServer | null>,
) {
  const mustRun = async (addonId: string): Promise<RunningServer> => {
    const r = await running(addonId);
    if (!r) throw new Error('the database server is not running');
    return r;
  };
  const kind = (r: RunningServer) => ADDON_KINDS[r.row.kind as AddonKind];

  return {
    /**
     * A dump of the addon's database made now (pg_dump, mariadb-dump, or a Redis RDB snapshot),
     * gzipped, streamed; null when the addon runs no server or the server is not running.
     */
    async dump(
      addonId: string,
    ): Promise<{ stream: NodeJS.ReadableStream; file: string; exitCode: Promise<number> } | null> {
      const r = await running(addonId);
      if (!r) return null;
      const spec = kind(r);
      const { stdout, exitCode } = await runtime.execStream(r.engineId, spec.backup.cmd, { env: serverEnv(r.row) });
      return { stream: stdout, file: `${r.row.database}-${spec.backup.file}`, exitCode };
    },

    /** A backup archive made now: the kind's dump in a temporary directory of the container, tar.gz on stdout. */
    async archive(addonId: string): Promise<{ stdout: NodeJS.ReadableStream; exitCode: Promise<number> } | null> {
      const r = await running(addonId);
      if (!r) return null;
      const spec = kind(r);
      const script = `set -e\nOUT=$(mktemp -d)\ntrap 'rm -rf "$OUT"' EXIT\n${spec.archive}\ntar czf - -C "$OUT" .\n`;
      return runtime.execStream(r.engineId, ['sh', '-c', script], { env: serverEnv(r.row) });
    },

    /**
     * Loads a backup archive (tar.gz) into the running server (issue 22): streamed on the standard input of the
     * kind's restore script, which reads the dump out of it as it arrives (no copy of the archive in the
     * container: bench/db-restore.ts). Throws with the server's message when the replay fails.
     */
    async restoreArchive(addonId: string, archive: Readable): Promise<void> {
      const r = await mustRun(addonId);
      const script = `set -eo pipefail\n${kind(r).restore}`;
      const out = await runtime.exec(r.engineId, ['bash', '-c', script], {
        env: serverEnv(r.row),
        maxBytes: 256 * 1024,
        stdin: archive,
      });
      if (out.exitCode !== 0)
        throw new Error(out.stderr.trim().split('\n').slice(-3).join(' ').slice(0, 500) || `exit code ${out.exitCode}`);
    },

    /** Turns the kind's force-ssl on or off in the running server; false when the kind has no TLS. Throws with the server's message. */
    async forceSsl(addonId: string, on: boolean): Promise<boolean> {
      const r = await mustRun(addonId);
      const scripts = kind(r).forceSsl;
      if (!scripts) return false;
      const out = await runtime.exec(r.engineId, ['sh', '-c', on ? scripts.on : scripts.off], {
        env: serverEnv(r.row),
        maxBytes: 64 * 1024,
      });
      if (out.exitCode !== 0) throw new Error(lastError(out.stderr, out.exitCode));
      return true;
    },

    /**
     * A script of addon-pitr-scripts.ts run as root in the running server (PostgreSQL's point-in-time recovery), with
     * `env` beside the credentials; its standard output. Throws with the server's message.
     */
    async pitr(addonId: string, script: string, env: Record<string, string> = {}): Promise<string> {
      const r = await mustRun(addonId);
      const out = await runtime.exec(r.engineId, ['sh', '-c', script], {
        env: { ...serverEnv(r.row), ...env },
        maxBytes: 64 * 1024,
      });
      if (out.exitCode !== 0) throw new Error(lastError(out.stderr, out.exitCode));
      return out.stdout.trim();
    },

    /** The server's users as its own catalogue lists them (pg_authid, mysql.user, ACL USERS). */
    async users(addonId: string): Promise<{ name: string; passwordEncryption: string; readOnly: boolean }[] | null> {
      const r = await running(addonId);
      if (!r) return null;
      const spec = kind(r);
      const out = await runtime.exec(r.engineId, spec.users, { env: serverEnv(r.row), maxBytes: 1024 * 1024 });
      if (out.exitCode !== 0) throw new Error(`listing the users failed: ${out.stderr.trim().slice(0, 300)}`);
      return out.stdout
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => {
          const [name = '', enc = '', ro = ''] = l.trim().split('|');
          return { name, passwordEncryption: enc, readOnly: ro === 'ro' };
        });
    },

    /** Runs the kind's createUser / deleteUser script; false when the kind has none. Throws with the server's message. */
    async manageUser(
      addonId: string,
      action: UserAction,
      user: { name: string; password?: string; readOnly?: boolean },
    ): Promise<boolean> {
      const r = await mustRun(addonId);
      const script = kind(r)[action];
      if (!script) return false;
      const env = {
        ...serverEnv(r.row),
        NEW_USER: user.name,
        NEW_PASSWORD: user.password ?? '',
        READ_ONLY: user.readOnly ? '1' : '0',
      };
      const out = await runtime.exec(r.engineId, ['sh', '-c', script], { env, maxBytes: 64 * 1024 });
      if (out.exitCode !== 0) throw new Error(lastError(out.stderr, out.exitCode));
      return true;
    },
  };
}
