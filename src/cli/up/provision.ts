// The app as scalingo.json describes it, made through the API: the app (with its stack), its addons
// (real servers: `up` waits until they run), its variables, and its formation after the first deployment.
import { type ApiClient, retryConflicts } from './api-client.ts';
import { type Manifest, manifestVariables } from './manifest.ts';
import { UpError } from './up-error.ts';

interface Plan {
  id: string;
  name: string;
}
interface Provider {
  id: string;
  name: string;
  plans: Plan[];
}
export interface AddonJson {
  id: string;
  status: string;
  status_message?: string;
  addon_provider: { id: string; name: string };
  plan: { id: string; name: string };
}
export interface AppJson {
  id: string;
  name: string;
  url: string;
  last_deployed_at: string | null;
  last_deployment_id?: string | null;
}

export interface WantedAddon {
  provider: Provider;
  plan: Plan;
  version?: string;
}

const ADDON_WAIT_MS = 15 * 60_000;
/** The emulated TCP gateway (the emulator's tcp-gateways.ts): no server, but not a stand-in either. */
const TCP_GATEWAY = 'tcp-gateway';
/** The process type it forwards to. */
const TCP_TYPE = 'tcp';

/** Checks every `provider:plan` against the emulator's catalogue before anything is made. */
export async function wantedAddons(api: ApiClient, manifest: Manifest): Promise<WantedAddon[]> {
  if (!manifest.addons?.length) return [];
  const { addon_providers: catalogue } = await api.get<{ addon_providers: Provider[] }>('/v1/addon_providers');
  return manifest.addons.map((a, i) => {
    const [providerId, planName, ...rest] = a.plan.split(':');
    if (!providerId || !planName || rest.length)
      throw new UpError(
        `scalingo.json: addons.${i}.plan "${a.plan}" must be written provider:plan (e.g. postgresql:postgresql-sandbox)`,
      );
    // The manifest names providers as the platform does (postgresql); the emulator's catalogue ids carry `scalingo-`.
    const provider = catalogue.find((p) => p.id === providerId || p.id === `scalingo-${providerId}`);
    if (!provider)
      throw new UpError(
        `scalingo.json: addons.${i}: unknown addon "${providerId}" (known: ${catalogue.map((p) => p.id.replace(/^scalingo-/, '')).join(', ')})`,
      );
    const plan = provider.plans.find((p) => p.name === planName || p.id === planName);
    if (!plan)
      throw new UpError(
        `scalingo.json: addons.${i}: unknown plan "${planName}" of ${providerId} (plans: ${provider.plans.map((p) => p.name).join(', ')})`,
      );
    return { provider, plan, version: a.options?.version };
  });
}

/** The app, created when missing (with the manifest's stack). */
export async function ensureApp(
  api: ApiClient,
  name: string,
  manifest: Manifest,
): Promise<{ app: AppJson; created: boolean }> {
  const found = await api.find<{ app: AppJson }>(`/v1/apps/${name}`);
  if (found) return { app: found.app, created: false };
  const { app } = await api.send<{ app: AppJson }>('POST', '/v1/apps', {
    app: { name, ...(manifest.stack ? { stack_id: manifest.stack } : {}) },
  });
  return { app, created: true };
}

/** Provisions the addons the app lacks (one per provider) and changes a plan that differs; their servers start meanwhile. */
export async function ensureAddons(
  api: ApiClient,
  app: string,
  wanted: WantedAddon[],
  say: (line: string) => void,
): Promise<void> {
  const { addons } = await api.get<{ addons: AddonJson[] }>(`/v1/apps/${app}/addons`);
  for (const w of wanted) {
    const current = addons.find((a) => a.addon_provider.id === w.provider.id);
    if (!current) {
      say(`Provisioning ${w.provider.id} (${w.plan.name})…`);
      const options = w.version ? { version: w.version } : undefined;
      await api.send('POST', `/v1/apps/${app}/addons`, {
        addon: { addon_provider_id: w.provider.id, plan_id: w.plan.id, ...(options ? { options } : {}) },
      });
    } else if (current.plan.id !== w.plan.id) {
      say(`Changing the plan of ${w.provider.id}: ${current.plan.name} → ${w.plan.name}`);
      await api.send('PATCH', `/v1/apps/${app}/addons/${current.id}`, { addon: { plan_id: w.plan.id } });
    }
  }
  await warnStandIns(api, app, say);
}

/**
 * One line per addon of the catalogue that runs no server here (MongoDB, Elasticsearch, InfluxDB; every
 * database with `addons.servers: false`): it exists for the API, but sets no URL variable on the app.
 * The emulator's `server` route answers 400 for a stand-in, and is not served at all without servers.
 */
async function warnStandIns(api: ApiClient, app: string, say: (line: string) => void): Promise<void> {
  const { addons } = await api.get<{ addons: AddonJson[] }>(`/v1/apps/${app}/addons`);
  for (const a of addons) {
    if (a.addon_provider.id === TCP_GATEWAY) continue;
    const server = await api.find(`/v1/apps/${app}/addons/${a.id}/server`).catch((err: UpError) => {
      if (err.status === 400) return undefined;
      throw err;
    });
    if (!server)
      say(
        `Warning: ${a.addon_provider.id} is a stand-in — no ${a.addon_provider.name} server runs in the emulator, so ` +
          'the app gets no URL variable for it (code that connects to it fails)',
      );
  }
}

/** Resolves with the app's addons once all run; one that failed to start is an error with its reason. */
export async function addonsRunning(api: ApiClient, app: string, say: (line: string) => void): Promise<AddonJson[]> {
  const deadline = Date.now() + ADDON_WAIT_MS;
  let announced = false;
  for (;;) {
    const { addons: now } = await api.get<{ addons: AddonJson[] }>(`/v1/apps/${app}/addons`);
    const failed = now.find((a) => a.status === 'error');
    if (failed)
      throw new UpError(
        `the ${failed.addon_provider.id} addon could not start${failed.status_message ? `: ${failed.status_message}` : ''}`,
      );
    const waiting = now.filter((a) => a.status !== 'running');
    if (!waiting.length) return now;
    if (Date.now() > deadline)
      throw new UpError(
        `addons still not running after ${ADDON_WAIT_MS / 60_000} minutes: ${waiting.map((a) => a.addon_provider.id).join(', ')}`,
      );
    if (!announced)
      say(
        `Starting ${waiting.map((a) => a.addon_provider.id).join(', ')} beside the build (the first time builds the server's image: minutes)…`,
      );
    announced = true;
    await new Promise((ok) => setTimeout(ok, 500));
  }
}

/** Sets the manifest's variables the app lacks; generated ones are made once and kept. */
export async function ensureVariables(
  api: ApiClient,
  app: AppJson,
  manifest: Manifest,
  shell: Record<string, string | undefined>,
): Promise<string[]> {
  const { variables } = await api.get<{ variables: { name: string; value: string }[] }>(
    `/v1/apps/${app.name}/variables`,
  );
  const existing = Object.fromEntries(variables.map((v) => [v.name, v.value]));
  const wanted = manifestVariables(manifest.env, { app: app.name, url: app.url, existing, shell });
  const changed = Object.entries(wanted).filter(([k, v]) => existing[k] !== v);
  if (changed.length)
    await api.send('PUT', `/v1/apps/${app.name}/variables`, {
      variables: changed.map(([name, value]) => ({ name, value })),
    });
  return changed.map(([k]) => k);
}

/**
 * Scales to the manifest's formation (types the deployed code has); says what changed (null: nothing). With a
 * tcp-gateway addon, a `tcp` type the manifest leaves out and that runs no container is scaled to 1: the
 * gateway has nothing to forward to otherwise (docs/fidelity.md, issue 34).
 */
export async function applyFormation(api: ApiClient, app: string, manifest: Manifest): Promise<string | null> {
  const { containers } = await api.get<{ containers: { name: string; amount: number; size: string }[] }>(
    `/v1/apps/${app}/containers`,
  );
  const formation = { ...manifest.formation };
  const gateway = manifest.addons?.some((a) => a.plan.split(':')[0] === TCP_GATEWAY);
  if (gateway && !formation[TCP_TYPE] && containers.some((c) => c.name === TCP_TYPE && c.amount === 0))
    formation[TCP_TYPE] = { amount: 1 };
  if (!Object.keys(formation).length) return null;
  const changes = Object.entries(formation)
    .filter(([type]) => containers.some((c) => c.name === type))
    .filter(([type, f]) => {
      const c = containers.find((x) => x.name === type);
      return c && (c.amount !== f.amount || (f.size && c.size !== f.size));
    })
    .map(([type, f]) => ({ name: type, amount: f.amount, ...(f.size ? { size: f.size } : {}) }));
  const unknown = Object.keys(formation).filter((type) => !containers.some((c) => c.name === type));
  if (unknown.length)
    throw new UpError(
      `scalingo.json: formation names ${unknown.join(', ')}, which the code does not declare (process types: ` +
        `${containers.map((c) => c.name).join(', ') || 'none'})`,
    );
  if (!changes.length) return null;
  // Right after a deployment the app may still be booting (409): retried.
  await retryConflicts(() => api.send('POST', `/v1/apps/${app}/scale`, { containers: changes }));
  const fromGateway = formation[TCP_TYPE] && !manifest.formation?.[TCP_TYPE] ? ' (tcp: for the tcp-gateway addon)' : '';
  return `${changes.map((c) => `${c.name}=${c.amount}${c.size ? `:${c.size}` : ''}`).join(' ')}${fromGateway}`;
}
