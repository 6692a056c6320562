// What the router works with: the app a host names, its web containers, and the record of one request.

/** A running web container as the router reaches it: its name (`web-1`) and its address (runtime.addressOf). */
export interface Upstream {
  containerName: string;
  /** The runtime's publishHost, or the container's alias on docker.network; 127.0.0.1 when absent. */
  host?: string;
  port: number;
}

/** The app's running web containers with their addresses (given by the containers module). */
export type UpstreamSource = (appId: string) => Upstream[];

export interface RouteTarget {
  appId: string;
  appName: string;
  forceHttps: boolean;
  stickySession: boolean;
  routerLogs: boolean;
  upstreams: Upstream[];
  /** The app's canonical custom domain: requests for any other host are redirected to it (301). */
  canonicalHost?: string | null;
}

export interface RouterRequestRecord {
  appId: string;
  appName: string;
  /** When the request arrived (ms since epoch, injected clock). */
  time: number;
  /** Status sent to the client; 499 when the client left before the answer (as the platform's router logs). */
  status: number;
  durationMs: number;
  method: string;
  path: string;
  /** Container that served (or failed) the request; null when the router answered by itself. */
  container: string | null;
  /** Response body bytes sent to the client. */
  bytes: number;
  clientIp: string;
  userAgent: string;
  host: string;
  requestId: string;
}
