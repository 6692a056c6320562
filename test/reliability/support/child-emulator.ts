// An emulator in a process of its own, for tests that must see it survive (or die): the test users
// of the harness, port 0, in memory. Environment:
//   EMU_RUNTIME=fake    the in-memory runtime (no Docker), else the real engine;
//   EMU_UPSTREAM_PORT   every app's router traffic goes to this 127.0.0.1 port (a test's server);
//   EMU_APP_DIR         a directory bound as the app `EMU_APP_NAME` (deployed at start, real Docker);
//   EMU_OVERRIDES       more configuration (JSON, merged at the top level).
// Prints one JSON line `{"ready":true,"api":…,"router":…,"instanceId":…}` once it answers, and stops
// cleanly on SIGTERM.
import { createEmulator, type EmulatorOptions } from '../../../src/emulator.ts';
import { testConfig } from '../../harness.ts';
import { FakeLogsRuntime } from '../../support/fake-logs-runtime.ts';

const env = process.env;
const opts: EmulatorOptions = {};
if (env.EMU_RUNTIME === 'fake') opts.runtime = new FakeLogsRuntime();
if (env.EMU_UPSTREAM_PORT) {
  const port = Number(env.EMU_UPSTREAM_PORT);
  opts.upstreams = () => [{ containerName: 'web-1', port }];
}
const overrides: Record<string, unknown> = {
  logLevel: env.EMU_LOG ?? 'silent',
  docker: { stopContainersOnExit: true },
};
if (env.EMU_APP_DIR) overrides.apps = [{ name: env.EMU_APP_NAME ?? 'bound-app', dir: env.EMU_APP_DIR }];
if (env.EMU_OVERRIDES) Object.assign(overrides, JSON.parse(env.EMU_OVERRIDES));

const emu = createEmulator(testConfig(overrides as never), opts);
await emu.start();
await emu.ready();
process.stdout.write(
  `${JSON.stringify({ ready: true, api: emu.urls.api, router: emu.urls.router, routerPort: emu.urls.routerPort, instanceId: emu.instanceId })}\n`,
);

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void emu.stop().then(() => process.exit(0));
});
