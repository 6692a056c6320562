import { type WebSocket } from 'ws';
import { ApiError } from '../../http/errors.ts';
import { type UpgradeTable } from '../../http/ws.ts';
import { type AppHooks, type AppsService } from '../apps/apps.service.ts';
import { type AuthService } from '../auth/auth.service.ts';
import { type DeploymentStreamEvent, type DeploymentsService, FINISHED } from './deployments.service.ts';
import { type DeploymentsStore } from './deployments.store.ts';

export const DEPLOYMENTS_STREAM_PREFIX = '/deployments-stream/apps/';

/** The auth message is small: a socket that has not authenticated cannot make the server buffer more. */
const PRE_AUTH_MAX_PAYLOAD = 16 * 1024;

export interface DeploymentsStreamDeps {
  upgrades: UpgradeTable;
  deployments: DeploymentsService;
  store: DeploymentsStore;
  auth: AuthService;
  apps: AppsService;
  pingMs: number;
  authTimeoutMs?: number;
}

/**
 * `links.deployments_stream`: a WebSocket where the client first sends
 * `{"type":"auth","data":{"token":"<bearer>"}}`, then receives `new`, `log` (`{content}`), `status`
 * and `ping` messages — the running deployment's output is replayed first (the clients' protocol,
 * GS `DeploymentStream`, NPM `Deployments/listener.ts`).
 */
export function registerDeploymentsStream(deps: DeploymentsStreamDeps): AppHooks {
  // Followers by socket: a user who loses access to the app (or the app deleted) is disconnected.
  const followers = new Map<WebSocket, { appId: string; userId: string }>();
  /** Returned for the wiring to register (after the other hooks of the containers area). */
  const hooks: AppHooks = {
    afterAccessLost: (a) => {
      for (const [ws, f] of followers) {
        if (f.appId === a.id && !deps.apps.hasAccess(f.userId, a.id))
          ws.close(4003, 'access to the application was revoked');
      }
    },
  };
  deps.upgrades.register(DEPLOYMENTS_STREAM_PREFIX, async (req, socket, head, url) => {
    const appKey = decodeURIComponent(url.pathname.slice(DEPLOYMENTS_STREAM_PREFIX.length));
    if (!appKey) throw ApiError.notFound('app');
    // A credential sent with the upgrade (Authorization header) is checked before the 101: a bad
    // one is a 401, a foreign app a 404, and nothing is upgraded. The official clients send none and
    // authenticate with their first message instead (kept below).
    if (req.headers.authorization !== undefined) {
      const principal = await deps.auth.authenticate(req.headers.authorization);
      const app = deps.apps.visibleApp(principal.user, appKey);
      const ws = await deps.upgrades.accept(req, socket, head);
      return follow(ws, app.id, principal.user.id, sender(ws));
    }
    const ws = await deps.upgrades.accept(req, socket, head, { maxPayload: PRE_AUTH_MAX_PAYLOAD });
    const send = sender(ws);
    const timer = setTimeout(() => ws.close(4001, 'authentication expected'), deps.authTimeoutMs ?? 10_000);
    ws.once('close', () => clearTimeout(timer));
    // Until the auth message is checked, the socket receives nothing and any other message closes it.
    ws.once('message', async (raw) => {
      clearTimeout(timer);
      try {
        let msg: { type?: string; data?: { token?: unknown } };
        try {
          msg = JSON.parse(String(raw)) as typeof msg;
        } catch {
          throw ApiError.badRequest(
            'invalid message: the first message must be {"type":"auth","data":{"token":"<bearer>"}}',
          );
        }
        if (msg?.type !== 'auth' || typeof msg.data?.token !== 'string' || !msg.data.token)
          throw ApiError.unauthorized('the first message must be {"type":"auth","data":{"token":"<bearer>"}}');
        const principal = await deps.auth.authenticate(`Bearer ${msg.data.token}`);
        const app = deps.apps.visibleApp(principal.user, appKey);
        if (ws.readyState === ws.OPEN) follow(ws, app.id, principal.user.id, send);
      } catch (err) {
        const text = err instanceof ApiError ? err.message || 'unauthorized' : 'invalid message';
        send({ type: 'error', data: { error: text } });
        ws.close(4003, text.slice(0, 100));
      }
    });
  });

  function sender(ws: WebSocket) {
    return (m: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(m));
  }

  function follow(ws: WebSocket, appId: string, userId: string, send: (m: Record<string, unknown>) => void) {
    followers.set(ws, { appId, userId });
    // Replay the deployment in progress (or the last one) so a late subscriber misses nothing.
    const last = deps.store.page(appId, 1, 0)[0];
    if (last) {
      send({ type: 'new', data: { deployment: last.id } });
      for (const line of last.output.split('\n').filter(Boolean))
        send({ type: 'log', id: last.id, data: { content: `${line}\n` } });
      if (FINISHED.has(last.status)) send({ type: 'status', id: last.id, data: { status: last.status } });
    }
    const listener = (e: DeploymentStreamEvent) => {
      if (e.appId !== appId) return;
      if (e.type === 'new') send({ type: 'new', data: e.data });
      else send({ type: e.type, id: e.deploymentId, data: e.data });
    };
    deps.deployments.bus.on('event', listener);
    const ping = setInterval(() => send({ type: 'ping', data: { ts: Math.floor(Date.now() / 1000) } }), deps.pingMs);
    ws.on('close', () => {
      followers.delete(ws);
      clearInterval(ping);
      deps.deployments.bus.off('event', listener);
    });
  }
  return hooks;
}
