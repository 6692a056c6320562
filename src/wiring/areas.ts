// Every area of the emulator, once, in build order: an area is built after the areas it `needs`, and reaches
// the ones it calls `later` from callbacks that run once everything is built. What each area gives the others is
// typed by AreaApis (area-apis.ts). Lifecycle order (open, start, stop, route mounting) is not this order: it is
// LIFECYCLE (lifecycle.ts), by unit name. docs/architecture.md's table of areas is written from these definitions
// (npm run docs:areas).

import { accountsArea } from './accounts.ts';
import { addonsArea } from './addons.ts';
import { appsArea } from './apps.ts';
import { autoscalersArea } from './autoscalers.ts';
import { containersArea } from './containers.ts';
import { controlArea } from './control.ts';
import { cronArea } from './cron.ts';
import { gitArea } from './git.ts';
import { httpArea } from './http.ts';
import { logsArea } from './logs.ts';
import { monitoringArea } from './monitoring.ts';
import { oneOffArea } from './one-off.ts';
import { serversArea } from './servers.ts';
import { sourcesArea } from './sources.ts';
import { stateArea } from './state.ts';

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
