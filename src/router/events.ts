// Emulator-level fan-out of what the router sees: one record per request (router metrics: requests per
// minute, 5XX, p95) and, for apps with router_logs on, one access line per request (the logs area stores
// it under the container name `router`). Listeners subscribe and unsubscribe; the router only emits.
import { type Logger } from '../shared/logger.ts';
import { type RouterRequestRecord } from './types.ts';

export type RequestListener = (rec: RouterRequestRecord) => void;
/** `line` is the message only (`method=GET path="/" …`); the logs area adds the date and `[router]`. */
export type AccessLogListener = (appId: string, line: string, container: string | null) => void;

export interface RouterEvents {
  /** Returns the function that unsubscribes. */
  onRequest(listener: RequestListener): () => void;
  onAccessLog(listener: AccessLogListener): () => void;
  emitRequest(rec: RouterRequestRecord): void;
  emitAccessLog(appId: string, line: string, container: string | null): void;
}

export function createRouterEvents(logger?: Logger): RouterEvents {
  const requestListeners = new Set<RequestListener>();
  const accessListeners = new Set<AccessLogListener>();

  // A failing listener (metrics store, logs hub) must never break the proxied request or the other listeners.
  const safely = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      logger?.error({ err }, `router ${what} listener failed`);
    }
  };

  return {
    onRequest(listener) {
      requestListeners.add(listener);
      return () => requestListeners.delete(listener);
    },
    onAccessLog(listener) {
      accessListeners.add(listener);
      return () => accessListeners.delete(listener);
    },
    emitRequest: (rec) => {
      for (const l of requestListeners) safely('request', () => l(rec));
    },
    emitAccessLog: (appId, line, container) => {
      for (const l of accessListeners) safely('access log', () => l(appId, line, container));
    },
  };
}
