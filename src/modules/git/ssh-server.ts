import { timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server as NetServer, type Socket } from 'node:net';
import { type AuthContext, type Connection, type ServerChannel, type Server as SshServer } from 'ssh2';
import { type Logger } from '../../shared/logger.ts';
import { type TunnelTargets } from '../addons/addon-tunnels.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type UserRow } from '../auth/principal.ts';
import { type KeysService } from '../keys/keys.service.ts';
import { type KeyRow } from '../keys/keys.store.ts';
import { fingerprintOf, loadSsh2 } from '../keys/ssh-public-key.ts';
import { parseGitCommand, runGitService } from './git-command.ts';
import { type HookServer } from './hook-server.ts';
import { type PushContext } from './push-deploy.ts';
import { type Repos } from './repos.ts';

// sshd's MaxAuthTries is 6; a little more room for agents holding several keys.
const MAX_AUTH_ATTEMPTS = 10;
const MAX_SESSIONS_PER_CONNECTION = 8;

export interface SshEndpointDeps {
  host: string;
  port: number;
  /** Where the host key is kept (`<data dir>/ssh_host_ed25519_key`); null = a new key per run (--in-memory). */
  hostKeyFile: string | null;
  keys: KeysService;
  apps: AppsService;
  repos: Repos;
  hooks: HookServer<PushContext>;
  limits: { maxConnections: number; maxSessionsPerKey: number; authTimeoutMs: number; sessionTimeoutMs: number };
  logger: Logger;
  /** `db-tunnel`: direct-tcpip forwards to real addon servers (issue #15); none without it. */
  tunnels?: TunnelTargets;
}

/** db-tunnel bounds: forwards open at once (per key, in all) and how long one may stay silent. */
const MAX_TUNNELS_PER_KEY = 16;
const MAX_TUNNELS = 64;
const TUNNEL_IDLE_MS = 30 * 60_000;

/**
 * The git endpoint: an SSH server (ssh2) on 127.0.0.1 that authenticates the `git` user by the
 * public keys registered with /v1/keys, and runs only `git-receive-pack` / `git-upload-pack` on the
 * repository of an app the key's user may deploy (owner or collaborator). No password, no shell,
 * no pty; the only forwarding is db-tunnel's direct-tcpip to the user's own addon servers (addon-tunnels.ts);
 * connections, sessions and tunnels per key and their duration are bounded.
 */
export function createSshEndpoint(deps: SshEndpointDeps) {
  const { limits, logger } = deps;
  const sockets = new Set<Socket>();
  // Raw sockets by peer address, to tell ssh2's connection (known only once the client's
  // identification came) which socket it is; sockets whose user authenticated.
  const byPeer = new Map<string, Socket>();
  const authenticated = new WeakSet<Socket>();
  const stops = new Set<() => void>();
  const activePerKey = new Map<string, number>();
  const tunnelsPerKey = new Map<string, number>();
  const openTunnels = new Set<{ close(): void }>();
  let net: NetServer | undefined;
  let ssh: Promise<SshServer> | undefined;

  /** The data dir's host key, made at the first connection ever and kept (a new one per run in memory). */
  function hostKey(utils: typeof import('ssh2').utils): string {
    const file = deps.hostKeyFile;
    if (file && existsSync(file)) {
      const kept = readFileSync(file, 'utf8');
      if (!(utils.parseKey(kept) instanceof Error)) return kept;
      logger.warn({ file }, 'ssh: the kept host key cannot be read: a new one replaces it');
    }
    // ssh2's keygen drops a leading zero byte of an ed25519 public key (about one key in 256), which
    // gives a key it cannot read back: such a key is drawn again.
    for (let i = 0; i < 10; i++) {
      const key = utils.generateKeyPairSync('ed25519', { comment: 'scalingo-emulator host key' }).private;
      if (utils.parseKey(key) instanceof Error) continue;
      if (file) writeFileSync(file, key, { mode: 0o600 });
      return key;
    }
    throw new Error('could not make an SSH host key');
  }

  /**
   * ssh2 (~75 ms to load) and the host key come at the first connection, never on the start path:
   * loading it while the process starts would make the start slower and its event loop busy.
   */
  function sshServer(): Promise<SshServer> {
    return (ssh ??= loadSsh2().then(({ Server, utils }) => {
      const key = hostKey(utils);
      const server = new Server({ hostKeys: [key], ident: 'scalingo-emulator' }, (client, info) =>
        onClient(client, byPeer.get(`${info.ip}:${info.port}`), utils),
      );
      server.on('error', (err: Error) => logger.warn({ err }, 'ssh server error'));
      return server;
    }));
  }

  function refuse(channel: ServerChannel, message: string): void {
    if (!channel.writable) return;
    channel.stderr.write(` !     ${message}\n`);
    channel.exit(1);
    channel.end();
  }

  function onClient(client: Connection, socket: Socket | undefined, utils: typeof import('ssh2').utils): void {
    let who: { key: KeyRow; user: UserRow } | undefined;
    let attempts = 0;
    client.on('error', (err) => logger.debug({ err: err.message }, 'ssh client error'));
    client.on('authentication', (ctx: AuthContext) => {
      if (++attempts > MAX_AUTH_ATTEMPTS) return void client.end();
      if (ctx.method !== 'publickey' || ctx.username !== 'git') return ctx.reject(['publickey']);
      const found = deps.keys.byFingerprint(fingerprintOf(ctx.key.data));
      if (!found) return ctx.reject(['publickey']);
      // No signature yet: the client asks whether this key would do, then signs.
      if (!ctx.signature || !ctx.blob) return ctx.accept();
      // Verified as ssh2's server example does: same key type and blob, and a valid signature.
      const key = utils.parseKey(found.key.content);
      if (key instanceof Error || Array.isArray(key)) return ctx.reject(['publickey']);
      const blob = key.getPublicSSH();
      const sameKey =
        key.type === ctx.key.algo && blob.length === ctx.key.data.length && timingSafeEqual(blob, ctx.key.data);
      if (!sameKey || key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return ctx.reject(['publickey']);
      who = found;
      ctx.accept();
    });
    client.on('ready', () => {
      if (socket) authenticated.add(socket);
      const auth = who;
      if (!auth) return void client.end(); // ssh2 is ready only after ctx.accept(), which sets who
      let sessions = 0;
      client.on('session', (accept, reject) => {
        // Channels a connection may hold open at once (each push or fetch needs one).
        if (sessions >= MAX_SESSIONS_PER_CONNECTION) return reject();
        sessions++;
        const session = accept();
        session.on('error', () => undefined);
        session.once('close', () => sessions--);
        let gitProtocol: string | undefined;
        // Only GIT_PROTOCOL (protocol v2 for fetches) is taken from the client's environment.
        session.on('env', (ok, no, info) => {
          if (info.key === 'GIT_PROTOCOL' && /^[A-Za-z0-9=:.,_-]{1,100}$/.test(info.val)) {
            gitProtocol = info.val;
            ok?.();
          } else no?.();
        });
        session.on('exec', (ok, _no, info) => void execute(ok(), info.command, auth, gitProtocol));
        session.on('shell', (ok) => {
          const channel = ok();
          channel.on('error', () => undefined);
          refuse(
            channel,
            `Hi ${auth.user.username}! You are authenticated (key "${auth.key.name}"), but the Scalingo emulator gives no shell access: deploy with git push.`,
          );
        });
        // pty, x11, subsystems (sftp), agent forwarding: no listener, so ssh2 refuses them.
      });
      // direct-tcpip (db-tunnel) to the user's addon servers only; no 'request' listener, so remote
      // forwarding (tcpip-forward) is refused.
      client.on('tcpip', (accept, reject, info) => void forward(accept, reject, info, auth));
    });
  }

  /** One db-tunnel connection: checked, counted, piped to the server's address (runtime.addressOf), bounded in idle time. */
  async function forward(
    accept: () => ServerChannel,
    reject: () => void,
    info: { destIP: string; destPort: number },
    auth: { key: KeyRow; user: UserRow },
  ): Promise<void> {
    const mine = tunnelsPerKey.get(auth.key.id) ?? 0;
    if (!deps.tunnels || mine >= MAX_TUNNELS_PER_KEY || openTunnels.size >= MAX_TUNNELS) return reject();
    tunnelsPerKey.set(auth.key.id, mine + 1);
    let released = false;
    const handle = { close: () => upstream?.destroy() };
    const release = () => {
      if (released) return;
      released = true;
      openTunnels.delete(handle);
      const n = (tunnelsPerKey.get(auth.key.id) ?? 1) - 1;
      if (n > 0) tunnelsPerKey.set(auth.key.id, n);
      else tunnelsPerKey.delete(auth.key.id);
    };
    let upstream: Socket | undefined;
    openTunnels.add(handle);
    let target;
    try {
      target = await deps.tunnels.resolve(auth.user, info.destIP, info.destPort);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'ssh: tunnel target not resolved');
      target = { refused: 'error' };
    }
    if ('refused' in target) {
      logger.info(
        { user: auth.user.username, host: info.destIP, port: info.destPort, why: target.refused },
        'ssh: tunnel refused',
      );
      release();
      return reject();
    }
    const sock = connect({ host: target.host, port: target.port });
    upstream = sock;
    sock.setTimeout(TUNNEL_IDLE_MS, () => sock.destroy());
    sock.once('close', release);
    sock.on('error', (err) => logger.debug({ err: err.message }, 'ssh: tunnel upstream error'));
    let channel: ServerChannel | undefined;
    sock.once('connect', () => {
      try {
        channel = accept();
      } catch {
        return void sock.destroy(); // the SSH connection went away meanwhile
      }
      channel.on('error', (err: Error) => logger.debug({ err: err.message }, 'ssh: tunnel channel error'));
      channel.pipe(sock).pipe(channel);
      channel.once('close', () => sock.destroy());
    });
    // Not connected at all: the client gets a refused channel; connected then gone: the channel ends.
    sock.once('close', () => (channel ? channel.close() : reject()));
  }

  async function execute(
    channel: ServerChannel,
    command: string,
    auth: { key: KeyRow; user: UserRow },
    gitProtocol: string | undefined,
  ): Promise<void> {
    channel.on('error', (err: Error) => logger.debug({ err: err.message }, 'ssh channel error'));
    const parsed = parseGitCommand(command);
    if ('error' in parsed) return refuse(channel, parsed.error);
    let app;
    try {
      app = deps.apps.visibleApp(auth.user, parsed.appName);
    } catch {
      return refuse(
        channel,
        `App '${parsed.appName}' not found, or you may not deploy it (authenticated as ${auth.user.username} with key "${auth.key.name}").`,
      );
    }
    const active = activePerKey.get(auth.key.id) ?? 0;
    if (active >= limits.maxSessionsPerKey)
      return refuse(
        channel,
        `Too many git commands at once with this key (at most ${limits.maxSessionsPerKey}): wait for one to end.`,
      );
    activePerKey.set(auth.key.id, active + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (activePerKey.get(auth.key.id) ?? 1) - 1;
      if (n > 0) activePerKey.set(auth.key.id, n);
      else activePerKey.delete(auth.key.id);
    };
    channel.once('close', release);
    let repoDir: string;
    try {
      repoDir = await deps.repos.ensure(app.id);
    } catch (err) {
      logger.error({ err, app: app.name }, 'git: cannot prepare the repository');
      release();
      return refuse(channel, 'The repository of this app cannot be prepared (see the emulator log).');
    }
    if (!channel.writable) return release();
    const ticket =
      parsed.service === 'git-receive-pack' ? deps.hooks.issue({ appId: app.id, user: auth.user }, repoDir) : undefined;
    const env: Record<string, string> = { ...ticket?.env, ...(gitProtocol ? { GIT_PROTOCOL: gitProtocol } : {}) };
    let stop: () => void = () => undefined;
    const timer = setTimeout(() => {
      channel.stderr.write(
        ` !     Time limit of this git command reached (${Math.round(limits.sessionTimeoutMs / 60_000)} min): stopped.\n`,
      );
      stop();
    }, limits.sessionTimeoutMs);
    stop = runGitService({
      service: parsed.service,
      repoDir,
      channel,
      env,
      onEnd: () => {
        clearTimeout(timer);
        ticket?.revoke();
        stops.delete(stop);
        release();
      },
    });
    stops.add(stop);
  }

  /**
   * Room for one more connection: at maxConnections, the oldest one still not authenticated is
   * closed for it (as OpenSSH's MaxStartups drops pending ones), so idle connections never lock a
   * user out; only when every connection is authenticated is the new one refused.
   */
  function admit(): boolean {
    if (sockets.size < limits.maxConnections) return true;
    for (const s of sockets) {
      if (authenticated.has(s)) continue;
      s.destroy();
      sockets.delete(s);
      return true;
    }
    logger.warn(
      { max: limits.maxConnections },
      'ssh: connection refused, every connection slot is taken by an authenticated user',
    );
    return false;
  }

  return {
    /** Binds the port (0 = any free one); ssh2 loads at the first connection. */
    async listen(): Promise<number> {
      net = createServer((socket) => {
        socket.on('error', () => undefined);
        if (!admit()) return void socket.destroy();
        sockets.add(socket);
        const peer = `${socket.remoteAddress}:${socket.remotePort}`;
        byPeer.set(peer, socket);
        // Bounded in time on the raw socket, so a peer that never even identifies is dropped too:
        // authenticated within authTimeoutMs, and alive at most as long as one command may run.
        const authTimer = setTimeout(() => authenticated.has(socket) || socket.destroy(), limits.authTimeoutMs);
        const lifeTimer = setTimeout(() => socket.destroy(), limits.authTimeoutMs + limits.sessionTimeoutMs);
        socket.once('close', () => {
          clearTimeout(authTimer);
          clearTimeout(lifeTimer);
          sockets.delete(socket);
          if (byPeer.get(peer) === socket) byPeer.delete(peer);
        });
        sshServer().then(
          (server) => (socket.destroyed ? undefined : server.injectSocket(socket)),
          (err) => {
            logger.error({ err }, 'ssh server cannot start');
            socket.destroy();
          },
        );
      });
      net.on('error', (err) => logger.warn({ err }, 'ssh listener error'));
      const listener = net;
      await new Promise<void>((ok, fail) => {
        listener.once('error', fail);
        listener.listen(deps.port, deps.host, () => {
          listener.off('error', fail);
          ok();
        });
      });
      return (net.address() as AddressInfo).port;
    },
    async close(): Promise<void> {
      for (const stop of stops) stop();
      for (const t of openTunnels) t.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => (net?.listening ? net.close(() => ok()) : ok()));
    },
  };
}

export type SshEndpoint = ReturnType<typeof createSshEndpoint>;
