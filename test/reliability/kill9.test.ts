// `kill -9` of the emulator (a separate process on a data directory) in the middle of concurrent
// mutating requests, a few rounds (issue #10): after each restart every acknowledged (2xx) write is
// there, the containers are reconciled with Docker (`ps` = what Docker runs under the emulator's
// labels, no orphan), and the build directory a killed deployment left is gone.

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { archiveOf, FAST } from '../support/apps.ts';
import { docker, removeInstance } from '../support/docker-cli.ts';
import { type EmulatorProcess, poll, spawnEmulator } from './emulator-process.ts';

// Kill points within each round (ms after the requests start): fixed, so runs are comparable.
const KILL_AFTER_MS = [1200, 2000, 2800];
const BASE = `kill9-base-${process.pid}`;
const DEPLOYED = `kill9-deploy-${process.pid}`;

/** Containers Docker runs for an app of this instance: their platform ids (label) → state. */
function dockerContainers(instance: string, appName?: string): { containerId: string; state: string; name: string }[] {
  const filters = [`label=${LABELS.instance}=${instance}`, ...(appName ? [`label=${LABELS.appName}=${appName}`] : [])];
  const out = docker(
    'ps',
    '-a',
    ...filters.flatMap((f) => ['--filter', f]),
    '--format',
    `{{.Label "${LABELS.containerId}"}}\t{{.State}}\t{{.Names}}`,
  );
  return out
    ? out.split('\n').map((l) => ({ containerId: l.split('\t')[0], state: l.split('\t')[1], name: l.split('\t')[2] }))
    : [];
}

describe('kill -9 during concurrent writes (emulator as a separate process)', () => {
  it('keeps every acknowledged write and reconciles the containers after each restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emu-kill9-'));
    const archive = await archiveOf('busybox-web');
    const config = { intervals: FAST, logLevel: 'error' };
    let emu: EmulatorProcess | undefined = await spawnEmulator(dataDir, config);
    let instance = '';
    const figures: string[] = [];
    const acked = { apps: [] as string[], variables: [] as string[] };
    let lastScale: number | null = 1;
    try {
      // A deployed app with one real web container to scale.
      expect((await emu.call('POST', '/v1/apps', { body: { app: { name: BASE } } })).status).toBe(201);
      expect(
        (await emu.call('POST', `/v1/apps/${BASE}/deployments`, { body: { deployment: { source_url: archive } } }))
          .status,
      ).toBe(201);
      const e0 = emu;
      await poll(
        async () => (await e0.call('GET', `/v1/apps/${BASE}`)).body?.app?.status === 'running',
        'the base app to run',
        90_000,
      );
      instance = await poll(
        async () =>
          docker(
            'ps',
            '--filter',
            `label=${LABELS.appName}=${BASE}`,
            '--format',
            `{{.Label "${LABELS.instance}"}}`,
          ).split('\n')[0],
        'the instance id',
      );
      expect((await emu.call('POST', '/v1/apps', { body: { app: { name: DEPLOYED } } })).status).toBe(201);

      for (const [round, killAfter] of KILL_AFTER_MS.entries()) {
        const e = emu!;
        let stop = false;
        let inflightScale: number | null = null;
        const counts = { apps: 0, variables: 0, scales: 0, refused: 0, cut: 0 };
        const attempt = async (fn: () => Promise<{ status: number }>, onAck: () => void) => {
          try {
            const r = await fn();
            if (r.status >= 200 && r.status < 300) onAck();
            else if (r.status >= 500) throw new Error(`a ${r.status} answer`);
            else counts.refused++;
          } catch (err) {
            if ((err as Error).message.startsWith('a ')) throw err;
            counts.cut++; // the process died under the request: not acknowledged
          }
        };
        const lanes = [
          (async () => {
            for (let i = 0; !stop; i++) {
              const name = `kill9-r${round}-a${i}-${process.pid}`;
              await attempt(
                () => e.call('POST', '/v1/apps', { body: { app: { name } } }),
                () => (acked.apps.push(name), counts.apps++),
              );
            }
          })(),
          (async () => {
            for (let i = 0; !stop; i++) {
              const name = `K9_R${round}_V${i}`;
              await attempt(
                () => e.call('POST', `/v1/apps/${BASE}/variables`, { body: { variable: { name, value: String(i) } } }),
                () => (acked.variables.push(name), counts.variables++),
              );
            }
          })(),
          (async () => {
            for (let i = 0; !stop; i++) {
              const amount = 1 + ((round + i) % 3);
              inflightScale = amount;
              await attempt(
                () => e.call('POST', `/v1/apps/${BASE}/scale`, { body: { containers: [{ name: 'web', amount }] } }),
                () => ((lastScale = amount), counts.scales++),
              );
              inflightScale = null;
              await new Promise((r) => setTimeout(r, 150));
            }
          })(),
          // A deployment under way when the process dies leaves a build directory behind.
          attempt(
            () => e.call('POST', `/v1/apps/${DEPLOYED}/deployments`, { body: { deployment: { source_url: archive } } }),
            () => undefined,
          ),
        ];
        await new Promise((r) => setTimeout(r, killAfter));
        stop = true; // no new request: those in flight are cut by the kill
        await e.kill9();
        await Promise.all(lanes);
        const pendingScale: number | null = inflightScale;
        const leftBuilds = existsSync(join(dataDir, 'builds')) ? readdirSync(join(dataDir, 'builds')).length : 0;

        const t0 = Date.now();
        emu = await spawnEmulator(dataDir, config);
        const e2 = emu;
        // Build directories of the killed process are removed before the API answers.
        const builds = join(dataDir, 'builds');
        expect(existsSync(builds) ? readdirSync(builds) : []).toEqual([]);
        // Every acknowledged write is there.
        const apps = new Set(((await e2.call('GET', '/v1/apps')).body.apps as { name: string }[]).map((a) => a.name));
        expect(acked.apps.filter((n) => !apps.has(n))).toEqual([]);
        const vars = new Set(
          ((await e2.call('GET', `/v1/apps/${BASE}/variables`)).body.variables as { name: string }[]).map(
            (v) => v.name,
          ),
        );
        expect(acked.variables.filter((n) => !vars.has(n))).toEqual([]);
        const web = (
          (await e2.call('GET', `/v1/apps/${BASE}/containers`)).body.containers as { name: string; amount: number }[]
        ).find((f) => f.name === 'web')!;
        // The last acknowledged amount, or a later one whose answer the kill cut.
        expect([lastScale, pendingScale]).toContain(web.amount);
        // Reconciled: ps lists exactly what Docker runs for the app (by the platform id label), as many as the formation says.
        await poll(
          async () => {
            const ps = ((await e2.call('GET', `/v1/apps/${BASE}/ps`)).body?.containers ?? []) as {
              id: string;
              type: string;
              state: string;
            }[];
            const running = ps
              .filter((c) => c.type === 'web' && c.state === 'running')
              .map((c) => c.id)
              .sort();
            const engine = dockerContainers(instance, BASE)
              .filter((c) => c.state === 'running')
              .map((c) => c.containerId)
              .sort();
            return (
              running.length === web.amount &&
              JSON.stringify(running) === JSON.stringify(engine) &&
              ps.length === running.length
            );
          },
          `ps = docker ps for ${BASE} (round ${round})`,
          90_000,
        );
        // No orphan: every container of this instance belongs to a container `ps` shows.
        const known = new Set<string>();
        for (const name of [BASE, DEPLOYED])
          for (const c of ((await e2.call('GET', `/v1/apps/${name}/ps`)).body?.containers ?? []) as { id: string }[])
            known.add(c.id);
        await poll(
          async () => dockerContainers(instance).every((c) => known.has(c.containerId)),
          'no orphan container',
          30_000,
        );
        figures.push(
          `round ${round + 1}: killed after ${killAfter} ms with ${counts.apps} apps, ${counts.variables} variables, ${counts.scales} scales acknowledged (${counts.cut} requests cut, ${counts.refused} refused 4xx); ${leftBuilds} build dir(s) left, removed at start; restarted and reconciled in ${Date.now() - t0} ms`,
        );
        // The deployment cut by the kill ended `aborted`.
        const last = (await e2.call('GET', `/v1/apps/${DEPLOYED}/deployments`)).body.deployments[0];
        expect(['aborted', 'success', 'build-error', 'crashed-error', undefined]).toContain(last?.status);
      }
      figures.push(
        `${acked.apps.length} app creations and ${acked.variables.length} variables acknowledged in all, none lost`,
      );
    } finally {
      console.log(`[reliability] kill -9: ${figures.join('; ')}`);
      await emu?.stop();
      if (instance) {
        removeInstance(instance);
      }
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(dirname(archive), { recursive: true, force: true });
    }
  }, 600_000);
});
