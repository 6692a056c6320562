/** Addresses the emulator answers on, known once its ports are bound. */
export interface Urls {
  /** API, auth service and logs service (one port). */
  api: string;
  /** Router serving the apps: http://<app>.localhost:<port>. */
  router: string;
  routerPort: number;
}

export function appUrl(urls: Urls, appName: string): string {
  return `http://${appName}.localhost:${urls.routerPort}`;
}
