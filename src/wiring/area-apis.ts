// What each area gives the areas built after it (and the tests), written out rather than inferred from the
// builders: this file holds types only and imports no area, so define-area.ts can name every area's API
// without importing the areas, and src/wiring/ has no import cycle (test/unit/area-registry.test.ts checks it).
import { type IncomingMessage } from 'node:http';
import { type Duplex } from 'node:stream';
import { type createHttpApp } from '../http/app.ts';
import { type AddonServers } from '../modules/addons/addon-servers.ts';
import { type createTunnelTargets } from '../modules/addons/addon-tunnels.ts';
import { type AddonsService } from '../modules/addons/addons.service.ts';
import { type AddonsStore } from '../modules/addons/addons.store.ts';
import { type AlertEngine } from '../modules/alerts/alert-engine.ts';
import { type AlertsService } from '../modules/alerts/alerts.service.ts';
import { type AppsService } from '../modules/apps/apps.service.ts';
import { type AppViewContext } from '../modules/apps/apps.view.ts';
import { type AuthService } from '../modules/auth/auth.service.ts';
import { type AutoscalerEngine, type AutoscalerEngineDeps } from '../modules/autoscalers/autoscaler-engine.ts';
import { type AutoscalersService } from '../modules/autoscalers/autoscalers.service.ts';
import { type CollaboratorsService } from '../modules/collaborators/collaborators.service.ts';
import { type ContainersService } from '../modules/containers/containers.service.ts';
import { type ContainersStore } from '../modules/containers/containers.store.ts';
import { type Orchestrator } from '../modules/containers/orchestrator.ts';
import { type Control } from '../modules/control/control.ts';
import { type CronService } from '../modules/cron/cron.service.ts';
import { type DeploymentsService } from '../modules/deployments/deployments.service.ts';
import { type DeploymentsStore } from '../modules/deployments/deployments.store.ts';
import { type DomainsService } from '../modules/domains/domains.service.ts';
import { type DrainDispatcher } from '../modules/drains/drains.dispatcher.ts';
import { type DrainsService } from '../modules/drains/drains.service.ts';
import { type EventsService } from '../modules/events/events.service.ts';
import { type HookServer } from '../modules/git/hook-server.ts';
import { type Repos } from '../modules/git/repos.ts';
import { type KeysService } from '../modules/keys/keys.service.ts';
import { type Archiver } from '../modules/logs/archives.ts';
import { type createLogsCollector } from '../modules/logs/logs.collector.ts';
import { type LogsHub } from '../modules/logs/logs.hub.ts';
import { type LogsPipeline } from '../modules/logs/logs.pipeline.ts';
import { type LogsService } from '../modules/logs/logs.service.ts';
import { type NotifiersService } from '../modules/notifiers/notifiers.service.ts';
import { type AttachSigner } from '../modules/one-off/attach-url.ts';
import { type OneOffService } from '../modules/one-off/one-off.service.ts';
import { type OperationsService } from '../modules/operations/operations.service.ts';
import { type ProjectsService } from '../modules/projects/projects.service.ts';
import { type SourcesService } from '../modules/sources/sources.service.ts';
import { type RouterRequestInput } from '../modules/stats/router-records.ts';
import { type Sampler } from '../modules/stats/sampler.ts';
import { type StatsService } from '../modules/stats/stats.service.ts';
import { type SampleRow } from '../modules/stats/stats.store.ts';
import { type VariablesStore } from '../modules/variables/variables.store.ts';
import { type RouterEvents } from '../router/events.ts';

export interface Accounts {
  auth: AuthService;
  events: EventsService;
  keys: KeysService;
  /** Ready-to-use API token of the first configured user, replaced at each start. */
  startupToken: string;
}

export interface Apps {
  apps: AppsService;
  projects: ProjectsService;
  collaborators: CollaboratorsService;
  domains: DomainsService;
  variablesStore: VariablesStore;
  /** How an app is shown (URLs, owner, parent, project) by every area that answers with one. */
  view: AppViewContext;
  /** The billing page the platform links to (the control plane's stand-in). */
  billingUrl: () => string;
}

export interface Sources {
  sources: SourcesService;
}

export interface Cron {
  service: CronService;
  /** Code of a finished build (its cron.json): the deployments call it. */
  recordFromBuild: CronService['recordFromBuild'];
}

export interface Containers {
  containersStore: ContainersStore;
  deploymentsStore: DeploymentsStore;
  operations: OperationsService;
  orchestrator: Orchestrator;
  containers: ContainersService;
  deployments: DeploymentsService;
}

export interface Addons {
  addons: AddonsService;
  /** The real addon servers; undefined when config addons.servers is off (stand-in addons only). */
  servers: AddonServers | undefined;
  /** Where db-tunnel may connect; undefined without addon servers. */
  tunnels: ReturnType<typeof createTunnelTargets> | undefined;
  store: AddonsStore;
}

export interface Logs {
  service: LogsService;
  pipeline: LogsPipeline;
  hub: LogsHub;
  archiver: Archiver;
  dispatcher: DrainDispatcher;
  collector: ReturnType<typeof createLogsCollector>;
  drains: DrainsService;
  /** Ingestion for other areas: `append(appId, 'router', line)`. False when dropped. */
  append(appId: string, containerName: string, text: string, time?: number): boolean;
  /** Rotates the history now; with `sweep`, also removes what deleted apps left (full-table scans). */
  maintain(sweep?: boolean): void;
}

/** A consumer of each stored sample round (the autoscalers), called after the alert engine. */
export type RoundListener = (rows: SampleRow[], now: number) => void | Promise<void>;

export interface Monitoring {
  /** The sample rounds' timer (runs on the emulator's clock). */
  sampler: Sampler;
  stats: StatsService;
  alerts: AlertsService;
  notifiers: NotifiersService;
  engine: AlertEngine;
  /** `<stateDir>/outbox/emails.log`: one JSON line per e-mail notification. */
  outboxFile: string;
  /** The router's per-request hook (batched writes). */
  recordRouterRequest(rec: RouterRequestInput): void;
  onRound(listener: RoundListener): void;
  /** Router traffic of an app in (from, to], pending router records written first. */
  traffic: AutoscalerEngineDeps['traffic'];
  /** One sample round now (tests drive the engine with a manual clock this way). */
  sampleOnce(): Promise<SampleRow[]>;
  /** Resolves when queued e-mail lines are written. */
  drainOutbox(): Promise<void>;
}

export interface Autoscalers {
  service: AutoscalersService;
  engine: AutoscalerEngine;
}

export interface OneOff {
  service: OneOffService;
  signer: AttachSigner;
  /** The API server's 'connect' listener: the CLI's hijacked `CONNECT <attach_url>`. */
  handleConnect(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

export interface ControlArea {
  control: Control;
}

export interface Git {
  repos: Repos;
  /** The pre-receive hooks' port on 127.0.0.1 (tests). */
  hookPort: HookServer<unknown>['port'];
}

export interface Servers {
  /** Per-request records (router metrics) and access lines (router logs) of the router. */
  routerEvents: RouterEvents;
}

export interface Http {
  app: ReturnType<typeof createHttpApp>;
}

/** Every area's API by the area's name: the keys are the area names (AREAS in areas.ts lists them in build order). */
export interface AreaApis {
  state: Record<string, never>;
  accounts: Accounts;
  apps: Apps;
  sources: Sources;
  cron: Cron;
  containers: Containers;
  addons: Addons;
  logs: Logs;
  monitoring: Monitoring;
  autoscalers: Autoscalers;
  'one-off': OneOff;
  control: ControlArea;
  git: Git;
  servers: Servers;
  http: Http;
}
