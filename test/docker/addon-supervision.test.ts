import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { startEmulator } from '../harness.ts';
import { type EmulatorProcess, spawnEmulator } from '../reliability/emulator-process.ts';
import { FAST, waitForAddon } from '../support/apps.ts';
import { docker, dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// Addon servers that stop without the emulator asking, and an emulator that dies while one is being
// provisioned (issues #20 and #23). Observed in Docker and in PostgreSQL itself.
const LONG = 300_000;
const serverOf = (addonId: string) => dockerPs([`${LABELS.addonId}=${addonId}`], true);
const psql = (container: string, db: string, sql: string) =>
  docker('exec', '-u', 'postgres', container, 'psql', '-d', db, '-tAc', sql);
type Call = (
  method: string,
  path: string,
  opts?: { body?: unknown },
) => Promise<{ status: number; body: any; text: string }>;

const untilRunning = (call: Call, app: string, id: string, timeoutMs = LONG) => waitForAddon(call, app, id, timeoutMs);

async function provisionPostgres(call: Call, app: string): Promise<string> {
  expect((await call('POST', '/v1/apps', { body: { app: { name: app } } })).status).toBe(201);
  const add = await call('POST', `/v1/apps/${app}/addons`, {
    body: { addon: { addon_provider_id: 'scalingo-postgresql', plan_id: 'postgresql-sandbox' } },
  });
  expect(add.status, add.text).toBe(201);
  return add.body.addon.id;
}

describe('addon servers under faults (real Docker)', () => {
  it(
    'a PostgreSQL server killed with docker kill is restarted on its data; the outage shows in the addon logs and events',
    async () => {
      const h = await startEmulator({ addons: { servers: true }, intervals: FAST });
      const app = 'killed-pg-app';
      try {
        const id = await provisionPostgres(h.call, app);
        await untilRunning(h.call, app, id);
        const [before] = serverOf(id);
        const vars = Object.fromEntries(
          (await h.call('GET', `/v1/apps/${app}/variables`)).body.variables.map(
            (v: { name: string; value: string }) => [v.name, v.value],
          ),
        );
        const db = new URL(vars.DATABASE_URL).pathname.slice(1);
        psql(before.id, db, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before the kill')");

        const killedAt = Date.now();
        docker('kill', before.id);
        // Back: the same container started again on its volume, the row still there.
        await eventually(
          async () =>
            (await h.call('GET', `/v1/apps/${app}/addons/${id}`)).body.addon.status === 'provisioning' ||
            serverOf(id)[0]?.state === 'running',
          {
            timeoutMs: 30_000,
            what: 'the emulator to notice the outage',
          },
        );
        await untilRunning(h.call, app, id, 120_000);
        const backAfter = Date.now() - killedAt;
        const [after] = serverOf(id);
        expect(after.state).toBe('running');
        expect(after.id).toBe(before.id);
        await eventually(() => psql(after.id, db, 'SELECT v FROM kept') === 'before the kill', {
          timeoutMs: 30_000,
          what: 'the row read back after the restart',
        });

        const logs = (await h.call('GET', `/v1/apps/${app}/addons/${id}/server/logs?n=1000`)).text;
        expect(logs).toMatch(/the postgresql server stopped unexpectedly \(exit code 137\): restarting it on its data/);
        const events = (await h.call('GET', `/v1/apps/${app}/events`)).body.events as {
          type: string;
          type_data: { status: string[] };
        }[];
        const updates = events.filter((e) => e.type === 'addon_updated').map((e) => e.type_data.status.join(' -> '));
        expect(updates).toContain('running -> provisioning');
        expect(updates.filter((u) => u === 'provisioning -> running').length).toBeGreaterThanOrEqual(2); // first start, then the restart
        console.log(
          `[figures] docker kill of the PostgreSQL server → addon running again, data there: ${backAfter} ms`,
        );
      } finally {
        await h.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
        const instance = h.emu.instanceId;
        await h.stop();
        removeInstance(instance);
      }
    },
    LONG,
  );

  it(
    'an emulator killed (-9) while an addon is provisioning comes back with the addon running on one server',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'emu-kill-provisioning-'));
      const config = { intervals: FAST, addons: { servers: true }, logLevel: 'error' };
      const app = 'kill-prov-app';
      let emu: EmulatorProcess | undefined = await spawnEmulator(dataDir, config);
      let instance = '';
      try {
        const first = emu;
        const id = await provisionPostgres(first.call, app);
        expect((await first.call('GET', `/v1/apps/${app}/addons/${id}`)).body.addon.status).toBe('provisioning');
        // Killed once Docker has the server container, before the server answers.
        await eventually(() => serverOf(id).length > 0, {
          timeoutMs: LONG,
          intervalMs: 20,
          what: 'the server container',
        });
        instance = docker('inspect', '-f', `{{index .Config.Labels "${LABELS.owner}"}}`, serverOf(id)[0].id);
        await first.kill9();

        const restartedAt = Date.now();
        emu = await spawnEmulator(dataDir, config);
        const second = emu;
        await untilRunning(second.call, app, id, 120_000);
        console.log(
          `[figures] emulator killed during provisioning → restarted → addon running: ${Date.now() - restartedAt} ms`,
        );
        const servers = serverOf(id);
        expect(servers.map((s) => s.state)).toEqual(['running']);
        expect(psql(servers[0].id, 'postgres', 'SELECT 1')).toBe('1');
      } finally {
        await emu?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
        await emu?.stop();
        if (instance) removeInstance(instance);
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    LONG,
  );
});
