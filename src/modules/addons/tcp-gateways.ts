// The TCP Gateway addon (issue 34; doc.scalingo.com/addons/tcp-gateway/start): the platform routes raw
// TCP connections to the app's `tcp` containers (Procfile `tcp: …`, listening on $PORT) through a load
// balancer whose address is the app's TCP_URL (tcp://<host>:<port>). Emulated by one listener per addon
// on 127.0.0.1 of the emulator's host, its port kept in the database (the same TCP_URL across restarts),
// piping each connection to one of the app's running `tcp` containers in turn, at the container's address
// (runtime.addressOf: its port published on publishHost, or its alias on docker.network). No container runs for
// the addon itself.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { type Address } from '../../runtime/runtime.ts';
import { objectId } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type VariablesStore } from '../variables/variables.store.ts';
import { type TcpGatewaysStore } from './tcp-gateways.store.ts';

/** The provider id of the catalogue (scalingo.json writes `tcp-gateway:tcplb`). */
export const TCP_GATEWAY_PROVIDER = 'tcp-gateway';
/** The process type the gateway forwards to, as the platform's documentation names it. */
export const TCP_PROCESS_TYPE = 'tcp';
const VARIABLE = 'TCP_URL';
/** Where the gateways listen: the host's loopback only. */
const LISTEN_HOST = '127.0.0.1';
/** Open connections per gateway, both ends counted once. */
const MAX_CONNECTIONS = 256;
const CONNECT_TIMEOUT_MS = 10_000;

export interface TcpGatewaysDeps {
  store: TcpGatewaysStore;
  variables: VariablesStore;
  /** The addresses of the app's running `tcp` containers (runtime.addressOf). */
  upstreams: (appId: string) => Address[];
  logger: Logger;
}

export function createTcpGateways(deps: TcpGatewaysDeps) {
  /** addon id → its listener and app (what is closed when the app goes, even once its rows are gone). */
  const listeners = new Map<string, { server: Server; appId: string }>();
  const sockets = new Set<Socket>();
  const turn = new Map<string, number>();

  function track(socket: Socket): void {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  }

  /** One connection: to the next running `tcp` container of the app, or closed when there is none. */
  function forward(appId: string, client: Socket): void {
    track(client);
    client.on('error', () => client.destroy());
    const upstreams = deps.upstreams(appId);
    if (!upstreams.length) return void client.destroy();
    const next = (turn.get(appId) ?? 0) % upstreams.length;
    turn.set(appId, next + 1);
    const upstream = connect(upstreams[next]);
    track(upstream);
    upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy());
    upstream.once('connect', () => upstream.setTimeout(0));
    upstream.on('error', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Listens on `port` (0: a free one); resolves the port it listens on. */
  function listen(addonId: string, appId: string, port: number): Promise<number> {
    return new Promise((ok, fail) => {
      const server = createServer((client) => forward(appId, client));
      server.maxConnections = MAX_CONNECTIONS;
      server.once('error', fail);
      server.listen({ port, host: LISTEN_HOST, exclusive: true }, () => {
        server.on('error', (err) => deps.logger.warn({ err: err.message, addonId }, 'tcp gateway listener error'));
        listeners.set(addonId, { server, appId });
        const address = server.address();
        ok(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Sets TCP_URL on the app (a value the user set by hand is replaced, as for the database addons). */
  function setVariable(appId: string, port: number): void {
    const url = urlOf(port);
    const existing = deps.variables.byName(appId, VARIABLE);
    if (existing) deps.variables.update(existing.id, url);
    else deps.variables.insert({ id: objectId(), app_id: appId, name: VARIABLE, value: url });
  }

  function close(addonId: string): void {
    listeners.get(addonId)?.server.close();
    listeners.delete(addonId);
  }

  const urlOf = (port: number) => `tcp://${LISTEN_HOST}:${port}`;

  return {
    provides: (providerId: string) => providerId === TCP_GATEWAY_PROVIDER,
    /** A new gateway: a free port, kept, and TCP_URL set on the app. */
    async provision(addonId: string, appId: string): Promise<string> {
      const port = await listen(addonId, appId, 0);
      try {
        // Fails when the addon or its app was deleted meanwhile (the row's foreign keys): the listener goes too.
        deps.store.upsert({ addon_id: addonId, app_id: appId, port });
        setVariable(appId, port);
      } catch (err) {
        close(addonId);
        throw err;
      }
      return urlOf(port);
    },
    /**
     * At start: every gateway listens again on its port. A port taken meanwhile by another program
     * gives the gateway a new one, and TCP_URL follows (logged).
     */
    async open(): Promise<void> {
      for (const row of deps.store.all()) {
        if (listeners.has(row.addon_id)) continue;
        const port = await listen(row.addon_id, row.app_id, row.port).catch(async (err: NodeJS.ErrnoException) => {
          if (err.code !== 'EADDRINUSE') throw err;
          const moved = await listen(row.addon_id, row.app_id, 0);
          deps.logger.warn({ addonId: row.addon_id, was: row.port, port: moved }, 'tcp gateway port taken: moved');
          return moved;
        });
        if (port !== row.port) {
          deps.store.upsert({ ...row, port });
          setVariable(row.app_id, port);
        }
      }
    },
    /** The addon is deleted: the listener closes, TCP_URL goes unless the user changed it. */
    remove(addonId: string): void {
      const row = deps.store.byAddon(addonId);
      close(addonId);
      if (!row) return;
      const v = deps.variables.byName(row.app_id, VARIABLE);
      if (v && v.value === urlOf(row.port)) deps.variables.delete(v.id);
      deps.store.delete(addonId);
    },
    /** The app is deleted (or a reset removed it): its gateways close (their rows went with the app). */
    removeApp(appId: string): void {
      for (const [addonId, l] of [...listeners]) if (l.appId === appId) close(addonId);
      turn.delete(appId);
    },
    /** The emulator stops: listeners and open connections close. */
    stop(): void {
      for (const id of [...listeners.keys()]) close(id);
      for (const s of sockets) s.destroy();
    },
  };
}

export type TcpGateways = ReturnType<typeof createTcpGateways>;
