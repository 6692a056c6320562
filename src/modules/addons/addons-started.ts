// A deployment's wait for the app's addon servers that are still starting (provisioned with the app,
// they start while it builds): its hook and new containers then find them answering. An addon in
// error does not hold the deployment; the wait is bounded (a first use builds the server's image).
import type { AddonRow } from './addons.store.ts';

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
