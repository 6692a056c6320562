/** Addresses the emulator answers on, known once its ports are bound. */
export interface Urls {
  /** API, auth service and logs service (one port). */
  api: string;
  /** Router serving the apps: http://<app>.localhost:<port>. */
  router: string;
  routerPort: number;
  /** The SSH git endpoint, `ssh://git@<host>:<port>` (apps are `<git>/<app>.git`); unset before start. */
  git?: string;
}

export function appUrl(urls: Urls, appName: string): string {
  return `http://${appName}.localhost:${urls.routerPort}`;
}

/** The app's git remote: the emulator's SSH endpoint (docs/fidelity.md "Git push"). */
export function gitUrl(urls: Urls, appName: string): string {
  return `${urls.git ?? 'ssh://git@127.0.0.1:5122'}/${appName}.git`;
}
