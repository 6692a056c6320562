// A deployment's wait for the app's addon servers that are still starting (provisioned with the app,
// they start while it builds): its hook and new containers then find them answering. An addon in
// error does not hold the deployment; the wait is bounded (a first use builds the server's image).

import { findProvider } from './addons.catalog.ts';
import { type AddonRow } from './addons.store.ts';
import { TCP_GATEWAY_PROVIDER } from './tcp-gateways.ts';

const POLL_MS = 250;
const MAX_WAIT_MS = 20 * 60_000;

export async function waitForAddons(
  store: { forApp(appId: string): AddonRow[] },
  appId: string,
  say: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + MAX_WAIT_MS;
  let told = false;
  for (;;) {
    const starting = store.forApp(appId).filter((a) => a.status === 'provisioning');
    if (!starting.length || Date.now() > deadline) return;
    if (!told) say(`-----> Waiting for the addons still starting: ${starting.map((a) => a.provider_id).join(', ')}`);
    told = true;
    await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
}

/**
 * One line of the deployment's output naming the app's addons that run no server here (MongoDB, Elasticsearch,
 * InfluxDB; every database without `addons.servers`): code that connects to them fails, and this says why.
 */
export function sayStandIns(addons: AddonRow[], hasServer: (addonId: string) => boolean, say: (line: string) => void) {
  const standIns = addons.filter((a) => a.provider_id !== TCP_GATEWAY_PROVIDER && !hasServer(a.id));
  if (!standIns.length) return;
  const names = standIns.map((a) => `${a.provider_id} (${findProvider(a.provider_id)?.name ?? a.provider_id})`);
  say(
    `-----> Stand-in addons, no server runs for them in the emulator and their URL variables are not set: ${names.join(', ')}`,
  );
}
