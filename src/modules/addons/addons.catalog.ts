// Addon providers and plans: enough for an addon uuid to attach drains to (#32, #34, #36) and for the
// official clients to decode the addon (research §3.3). PostgreSQL, MySQL and Redis run real servers
// when `addons.servers` is on (addon-kinds.ts); the TCP gateway is emulated (tcp-gateways.ts); the
// others are stand-ins, with no server.
import { createHash } from 'node:crypto';

const hexId = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 24);

export interface PlanJson {
  id: string;
  name: string;
  display_name: string;
  price: number;
  description: string;
  position: number;
  on_demand: boolean;
  disabled: boolean;
  /** The Go client decodes it as a bool: null or false only (research §3.3). */
  disabled_alternative_plan_id: null;
  sku: string;
  hds_available: boolean;
  to_be_discontinued: boolean;
  trial_available: boolean;
}

/** go-scalingo's Category of an addon provider. */
export interface CategoryJson {
  id: string;
  name: string;
  description: string;
  position: number;
}

// The stand-ins are all databases: one category, as the platform lists its database addons.
const DATABASES: CategoryJson = {
  id: hexId('category/databases'),
  name: 'Databases',
  description: 'Managed databases (stand-ins in the emulator: no server runs)',
  position: 1,
};

// The TCP gateway is in the platform's Network category (doc.scalingo.com/addons/tcp-gateway/start).
const NETWORK: CategoryJson = {
  id: hexId('category/network'),
  name: 'Network',
  description: 'Network addons',
  position: 2,
};

export interface ProviderJson {
  id: string;
  name: string;
  logo_url: string;
  short_description: string;
  description: string;
  category: CategoryJson;
  provider_name: string;
  provider_url: string;
  hds_available: boolean;
  plans: PlanJson[];
}

function provider(
  id: string,
  name: string,
  short: string,
  plans: [string, string, number][],
  about: { category: CategoryJson; short: string; description: string } = {
    category: DATABASES,
    short: `${name} (stand-in: no server runs in the emulator)`,
    description: `${name} as a stand-in addon: the addon resource, its plans, drains and token exist; no database server runs.`,
  },
): ProviderJson {
  return {
    id,
    name,
    logo_url: `https://cdn.localhost/addons/${id}.png`,
    short_description: about.short,
    description: about.description,
    category: about.category,
    provider_name: 'Scalingo',
    provider_url: 'https://scalingo.com',
    hds_available: false,
    plans: plans.map(([plan, display, price], i) => ({
      id: hexId(`${id}/${plan}`),
      name: plan,
      display_name: display,
      price,
      description: `${display} plan of ${name}`,
      position: i + 1,
      on_demand: false,
      disabled: false,
      disabled_alternative_plan_id: null,
      sku: `local-addon-${short}-${plan}`,
      hds_available: false,
      to_be_discontinued: false,
      trial_available: price === 0,
    })),
  };
}

export const ADDON_PROVIDERS: ProviderJson[] = [
  provider('scalingo-postgresql', 'PostgreSQL', 'pg', [
    ['postgresql-sandbox', 'Sandbox', 0],
    ['postgresql-starter-512', 'Starter 512M', 1440],
    ['postgresql-business-1024', 'Business 1G', 4320],
  ]),
  provider('scalingo-mysql', 'MySQL', 'mysql', [
    ['mysql-sandbox', 'Sandbox', 0],
    ['mysql-starter-512', 'Starter 512M', 1440],
  ]),
  provider('scalingo-redis', 'Redis', 'redis', [
    ['redis-sandbox', 'Sandbox', 0],
    ['redis-starter-256', 'Starter 256M', 720],
  ]),
  provider('scalingo-mongodb', 'MongoDB', 'mongo', [
    ['mongo-sandbox', 'Sandbox', 0],
    ['mongo-starter-512', 'Starter 512M', 1440],
  ]),
  provider('scalingo-elasticsearch', 'Elasticsearch', 'es', [
    ['elasticsearch-sandbox', 'Sandbox', 0],
    ['elasticsearch-starter-1024', 'Starter 1G', 2880],
  ]),
  provider('scalingo-influxdb', 'InfluxDB', 'influx', [['influxdb-sandbox', 'Sandbox', 0]]),
  // Plan name as the platform's sample app writes it (Scalingo/sample-node-mosca scalingo.json: tcp-gateway:tcplb).
  provider('tcp-gateway', 'TCP Gateway', 'tcp', [['tcplb', 'TCP Load Balancer', 0]], {
    category: NETWORK,
    short: "Raw TCP connections to the app's tcp containers (TCP_URL)",
    description:
      'Routes raw TCP connections to the containers of the `tcp` process type; in the emulator, a port of 127.0.0.1 (TCP_URL).',
  }),
];

/**
 * Dedicated databases ("Database NG", POST /v1/databases): a technology is an addon provider whose plans
 * GET /v1/addon_providers/:id/plans lists (the Terraform provider resolves its plan there), but which
 * the addon catalogue does not offer for an app's addons. Plan names as the provider's documentation.
 */
export const DEDICATED_PROVIDERS: ProviderJson[] = [
  provider('postgresql-ng', 'PostgreSQL NG', 'pgng', [
    ['postgresql-ng-starter-512', 'Starter 512M', 2880],
    ['postgresql-ng-business-1024', 'Business 1G', 8640],
    ['postgresql-ng-enterprise-4096', 'Enterprise 4G', 34560],
  ]),
];

export function findProvider(idOrName: string): ProviderJson | undefined {
  return [...ADDON_PROVIDERS, ...DEDICATED_PROVIDERS].find(
    (p) => p.id === idOrName || p.name.toLowerCase() === idOrName.toLowerCase(),
  );
}

/** Whether a provider is a dedicated database technology (not an app addon). */
export const isDedicated = (providerId: string) => DEDICATED_PROVIDERS.some((p) => p.id === providerId);

/** A plan by id, or by name (handy with curl; the CLI sends ids). */
export function findPlan(p: ProviderJson, idOrName: string): PlanJson | undefined {
  return p.plans.find((x) => x.id === idOrName || x.name === idOrName);
}

/** The provider as embedded in an addon (no plans). */
export function providerJson(p: ProviderJson) {
  const { plans: _plans, ...rest } = p;
  return rest;
}

/** The provider as GET /v1/addon_providers lists it: category and plans included (go-scalingo AddonProvider). */
export function providerListJson(p: ProviderJson) {
  return p;
}
