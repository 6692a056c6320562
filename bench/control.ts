import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bestMedian, median, ms } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const MAX_RESET_MS = 20; // issue 14: a reset cheap enough to run before every test
const APPS = 100;
const VARIABLES_PER_APP = 5;
const TOKEN = 'tk-us-bench-control-000000000000000';
const ADMIN = 'admin-token-bench-control-000000';

type EmulatorModule = typeof import('../src/emulator.ts');
type ConfigModule = typeof import('../src/config/load.ts');
type Emu = ReturnType<EmulatorModule['createEmulator']>;

async function startInProcess(ctx: BenchContext, dataDir: string | null): Promise<Emu> {
  // The code measured is the tree being benchmarked (a copy of src/ by default), loaded in this process:
  // reset(), snapshot() and restore() are what the programmatic API calls, no HTTP in between.
  const { createEmulator } = (await import(
    pathToFileURL(join(ctx.emulatorDir, 'src/emulator.ts')).href
  )) as EmulatorModule;
  const { loadConfig } = (await import(
    pathToFileURL(join(ctx.emulatorDir, 'src/config/load.ts')).href
  )) as ConfigModule;
  const config = loadConfig({
    ignoreDefaultFile: true,
    env: {},
    overrides: {
      port: 0,
      routerPort: 0,
      inMemory: dataDir === null,
      ...(dataDir ? { dataDir } : {}),
      logLevel: 'silent',
      adminToken: ADMIN,
      users: [{ username: 'bench', email: 'bench@example.test', password: 'bench-password', apiTokens: [TOKEN] }],
    },
  });
  const emu = createEmulator(config);
  await emu.start();
  await emu.ready();
  return emu;
}

async function api(emu: Emu, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emu.urls.api}${path}`, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`:${TOKEN}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** What a test typically leaves behind: a few apps with variables (and their events). */
async function typicalTestState(emu: Emu, n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const name = `${prefix}-${i}`;
    await api(emu, 'POST', '/v1/apps', { app: { name } });
    await api(emu, 'PUT', `/v1/apps/${name}/variables`, {
      variables: Array.from({ length: VARIABLES_PER_APP }, (_, k) => ({ name: `VAR_${k}`, value: `value-${k}` })),
    });
  }
}

const timed = async (fn: () => unknown): Promise<number> => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

/**
 * Issue 14: the control plane's cost. reset() with nothing running (empty, and after a typical test's
 * apps), over HTTP too; snapshot() and restore() of a state of 100 apps, in memory and with a data dir.
 */
export const section: Section = {
  name: 'control',
  description: 'control plane: reset() without containers, snapshot()/restore() with 100 apps (issue 14)',
  async run(ctx: BenchContext): Promise<Result> {
    const perRound = ctx.quick ? 3 : 15;
    const root = mkdtempSync(join(tmpdir(), 'bench-control-'));
    const rows: string[][] = [];
    const resetEmpty: number[] = [];
    const resetTypical: number[] = [];
    const resetHttp: number[] = [];
    const snapshotTimes = new Map<string, number[]>();
    const restoreTimes = new Map<string, number[]>();
    let snapshotSize = 0;
    try {
      const emu = await startInProcess(ctx, null);
      try {
        for (let round = 1; round <= ctx.rounds; round++) {
          const empty: number[] = [];
          const typical: number[] = [];
          const http: number[] = [];
          for (let i = 0; i < perRound; i++) {
            empty.push(await timed(() => emu.area('control').control.reset()));
            await typicalTestState(emu, 5, `r${round}-${i}`);
            typical.push(await timed(() => emu.area('control').control.reset()));
            await typicalTestState(emu, 5, `h${round}-${i}`);
            http.push(
              await timed(async () => {
                const res = await fetch(`${emu.urls.api}/_emulator/reset`, {
                  method: 'POST',
                  headers: { authorization: `Bearer ${ADMIN}` },
                });
                if (res.status !== 204) throw new Error(`reset: ${res.status}`);
              }),
            );
          }
          resetEmpty.push(median(empty));
          resetTypical.push(median(typical));
          resetHttp.push(median(http));
          ctx.log(
            `control: reset round ${round}/${ctx.rounds}: empty ${ms(median(empty))}, typical ${ms(median(typical))}, http ${ms(median(http))}`,
          );
        }
      } finally {
        await emu.stop();
      }

      for (const mode of ['in memory', 'data dir'] as const) {
        const e = await startInProcess(ctx, mode === 'in memory' ? null : join(root, 'data'));
        try {
          await typicalTestState(e, APPS, 'snap');
          const snaps: number[] = [];
          const restores: number[] = [];
          for (let round = 1; round <= ctx.rounds; round++) {
            const s: number[] = [];
            const r: number[] = [];
            for (let i = 0; i < Math.max(2, perRound / 3); i++) {
              let id = '';
              s.push(await timed(() => (id = e.area('control').control.snapshot().id)));
              snapshotSize = e.area('control').control.snapshots.find(id).size;
              r.push(await timed(() => e.area('control').control.restore(id)));
              e.area('control').control.snapshots.remove(id);
            }
            snaps.push(median(s));
            restores.push(median(r));
          }
          snapshotTimes.set(mode, snaps);
          restoreTimes.set(mode, restores);
          ctx.log(`control: ${mode}: snapshot ${ms(median(snaps))}, restore ${ms(median(restores))}`);
        } finally {
          await e.stop();
        }
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }

    rows.push(['reset() of an empty emulator', bestMedian(resetEmpty, ms, false)]);
    rows.push([
      `reset() after a typical test (5 apps × ${VARIABLES_PER_APP} variables, their events)`,
      bestMedian(resetTypical, ms, false),
    ]);
    rows.push(['POST /_emulator/reset over HTTP (same state), round trip', bestMedian(resetHttp, ms, false)]);
    for (const mode of ['in memory', 'data dir']) {
      rows.push([`snapshot(), ${APPS} apps, ${mode}`, bestMedian(snapshotTimes.get(mode)!, ms, false)]);
      rows.push([
        `restore(id), ${APPS} apps, ${mode} (rows copied, then reconciled with Docker)`,
        bestMedian(restoreTimes.get(mode)!, ms, false),
      ]);
    }
    const typicalMedian = median(resetTypical);
    return {
      title: 'Control plane: reset, snapshot, restore',
      method:
        `In-process emulator (the tree benchmarked, loaded in the driver; real Docker runtime, no container running), the calls the programmatic API makes: ` +
        `\`emu.area('control').control.reset()\`, \`snapshot()\`, \`restore(id)\`. Each reset is timed alone, after the state was made through the HTTP API; ${perRound} resets per round, median per round. ` +
        `Snapshot and restore: ${APPS} apps with ${VARIABLES_PER_APP} variables each (and their events), snapshot file of ${(snapshotSize / 1024).toFixed(0)} KiB; restore includes the reconciliation with Docker (one engine listing, no container to start).`,
      tables: [
        { caption: `median per round: best / median of ${ctx.rounds} rounds`, headers: ['operation', 'time'], rows },
      ],
      targets: [
        {
          what: 'reset() without containers, after a typical test',
          target: `< ${MAX_RESET_MS} ms`,
          measured: `${ms(typicalMedian)} (median)`,
          met: typicalMedian < MAX_RESET_MS,
        },
      ],
    };
  },
};
