// Every area of the emulator, once, in build order: an area is built after the areas it `needs`, and
// reaches the ones it calls `later` from callbacks that run once everything is built. What each area
// gives the others is typed by AreaApis. Lifecycle order (open, start, stop, route mounting) is not this
// order: it is LIFECYCLE (lifecycle.ts), by unit name. docs/architecture.md's table of areas is written
// from these definitions (npm run docs:areas).
import { stateArea } from './state.ts';
import { accountsArea, type Accounts } from './accounts.ts';
import { appsArea, type Apps } from './apps.ts';
import { sourcesArea, type Sources } from './sources.ts';
import { cronArea, type Cron } from './cron.ts';
import { containersArea, type Containers } from './containers.ts';
import { addonsArea, type Addons } from './addons.ts';
import { logsArea, type Logs } from './logs.ts';
import { monitoringArea, type Monitoring } from './monitoring.ts';
import { autoscalersArea, type Autoscalers } from './autoscalers.ts';
import { oneOffArea, type OneOff } from './one-off.ts';
import { controlArea, type ControlArea } from './control.ts';
import { gitArea, type Git } from './git.ts';
import { serversArea, type Servers } from './servers.ts';
import { httpArea, type Http } from './http.ts';

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

export const AREAS = [
  stateArea,
  accountsArea,
  appsArea,
  sourcesArea,
  cronArea,
  containersArea,
  addonsArea,
  logsArea,
  monitoringArea,
  autoscalersArea,
  oneOffArea,
  controlArea,
  gitArea,
  serversArea,
  httpArea,
] as const;
