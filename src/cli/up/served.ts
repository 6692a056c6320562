// `up` returns (and --detach says the app "keeps running") once the router serves the app: after a
// restart the emulator brings the containers back in the background, and until then the router answers
// 502/503. Any other answer is the app's own. Apps without web containers are not waited for.
import { request } from 'node:http';
import { type ApiClient } from './api-client.ts';
import { UpError } from './up-error.ts';

const SERVED_WAIT_MS = 120_000;
const POLL_MS = 300;
/** The router's own answers while no container of the app answers. */
const NOT_SERVED = new Set([502, 503, 504]);

export async function waitUntilServed(api: ApiClient, app: string, url: string): Promise<void> {
  const { containers } = await api.get<{ containers: { name: string; amount: number }[] }>(
    `/v1/apps/${app}/containers`,
  );
  if (!containers.some((c) => c.name === 'web' && c.amount > 0)) return;
  const { hostname, port } = new URL(url);
  // The router listens beside the API: on the API's host (127.0.0.1, or the emulator's service name on a compose
  // network, docker.network), whatever host name the app's URL carries.
  const routerHost = new URL(api.apiUrl).hostname;
  const deadline = Date.now() + SERVED_WAIT_MS;
  let last = 'no answer';
  for (;;) {
    api.signal?.throwIfAborted();
    const status = await routerStatus(routerHost, hostname, Number(port)).catch((err: Error) => err.message);
    if (typeof status === 'number' && !NOT_SERVED.has(status)) return;
    last = typeof status === 'number' ? `HTTP ${status}` : status;
    if (Date.now() > deadline)
      throw new UpError(
        `${url} is not served after ${SERVED_WAIT_MS / 1000} s (the router answers ${last}): \`scalingo --app ${app} logs\` shows why`,
      );
    await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
}

/** The status of GET / through the router (at `routerHost`, with the app's host name). */
function routerStatus(routerHost: string, hostname: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: routerHost, port, path: '/', headers: { host: `${hostname}:${port}` }, agent: false, timeout: 10_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}
