import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { c as tarCreate } from 'tar';
import { docker, runRawWeb } from './lib/app-deploy.ts';
import { ApiClient } from './lib/emulator-client.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { bestMedian, median, ms, pct, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const _run = promisify(execFile);
const APP = 'bench-scale-app';
const AMOUNT = 5;
const MAX_RATIO = 1.3; // issue 3's target
const LABEL = `label=io.scalingo-emulator.app-name=${APP}`;

/** Polls until the container behind a published port answers HTTP (any status). */
async function answers(hostPort: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      const res = await fetch(`http://${hostPort}/`);
      await res.arrayBuffer();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${hostPort} did not answer`);
      await sleep(20);
    }
  }
}

/**
 * Issue 3: scale `web` 0 → 5 through the API until the operation is `done` and every container
 * answers, against five raw `docker run -d` of the same image and command + their first answer.
 */
export const section: Section = {
  name: 'scale',
  description: 'scale web 0 → 5 (operation done, all answer) vs five raw docker run -d + first answer (issue 3)',
  async run(ctx: BenchContext): Promise<Result> {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-scale-'));
    let emu: Child | undefined;
    let client: ApiClient | undefined;
    const emuMs: number[] = [];
    const rawMs: number[] = [];
    try {
      emu = await spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null, profileDir: ctx.profileDir });
      client = new ApiClient(emu.api, 4);
      await client.exchange(emu.token!);
      await client.expect('POST', '/v1/apps', 201, { app: { name: APP } });
      const archive = join(tmp, 'app.tar.gz');
      await tarCreate({ gzip: true, file: archive, cwd: join(ctx.repoDir, 'fixtures/apps') }, ['busybox-web']);
      await client.expect('POST', `/v1/apps/${APP}/deployments`, 201, { deployment: { source_url: archive } });
      for (let i = 0; ; i++) {
        const app = JSON.parse(await client.expect('GET', `/v1/apps/${APP}`, 200)) as { app: { status: string } };
        if (app.app.status === 'running') break;
        if (i > 600) throw new Error(`deployment did not finish (status ${app.app.status})`);
        await sleep(100);
      }
      const formation = JSON.parse(await client.expect('GET', `/v1/apps/${APP}/containers`, 200)) as {
        containers: { name: string; command: string }[];
      };
      const command = formation.containers.find((c) => c.name === 'web')!.command;
      const image = (await docker('ps', '--filter', LABEL, '--format', '{{.Image}}')).split('\n')[0];

      /** POST /scale, then the operation until done, then (amount > 0) an answer from each container; returns ms. */
      const scaleTo = async (amount: number): Promise<number> => {
        const c = client!;
        const t0 = performance.now();
        if ((await c.scale(APP, [{ name: 'web', amount }])) !== 'done')
          throw new Error(`scale to ${amount}: nothing to change`);
        if (amount) {
          const ids = (await docker('ps', '-q', '--filter', LABEL, '--filter', 'label=io.scalingo-emulator.type=web'))
            .split('\n')
            .filter(Boolean);
          if (ids.length !== amount) throw new Error(`${ids.length} web containers in Docker, ${amount} expected`);
          await Promise.all(ids.map(async (id) => answers(await docker('port', id, '5000'), Date.now() + 60_000)));
        }
        return performance.now() - t0;
      };

      await scaleTo(0);
      const rounds = ctx.quick ? 1 : ctx.rounds;
      for (let round = 1; round <= rounds; round++) {
        const e = await scaleTo(AMOUNT);
        emuMs.push(e);
        await scaleTo(0);
        const t0 = performance.now();
        const ids = await Promise.all(
          Array.from({ length: AMOUNT }, (_, i) =>
            runRawWeb({
              label: 'io.scalingo-emulator.bench=raw',
              image,
              container: `web-${i + 1}`,
              command: ['sh', '-c', command],
            }),
          ),
        );
        await Promise.all(ids.map(async (id) => answers(await docker('port', id, '5000'), Date.now() + 60_000)));
        const r = performance.now() - t0;
        rawMs.push(r);
        await docker('rm', '-f', ...ids);
        ctx.log(
          `scale: round ${round}/${rounds}: emulator ${ms(e)}, raw docker run ${ms(r)}, ratio ${(e / r).toFixed(2)}×`,
        );
      }
      const ratioMedian = median(emuMs) / median(rawMs);
      const ratioBest = Math.min(...emuMs) / Math.min(...rawMs);
      return {
        title: `Scale web 0 → ${AMOUNT} vs raw docker run`,
        method:
          `Emulator in a child process (in-memory), the busybox-web fixture deployed by archive. Timed: POST /scale {web: ${AMOUNT}}, polling ` +
          `the operation every 20 ms until \`done\`, then an HTTP answer from each of the ${AMOUNT} containers at its published port. ` +
          `Baseline in the same run: ${AMOUNT} concurrent \`docker run -d\` (CLI) of the same image, command, memory limit and port publishing, ` +
          `until each answers HTTP. Scale back to 0 and \`docker rm -f\` between rounds (not timed). ${rounds} rounds.`,
        tables: [
          {
            caption: `best / median of ${rounds} rounds`,
            headers: ['what', 'time'],
            rows: [
              [`emulator: scale web 0 → ${AMOUNT}, all answer`, bestMedian(emuMs, ms, false)],
              [`raw: ${AMOUNT} × docker run -d, all answer`, bestMedian(rawMs, ms, false)],
              ['ratio emulator ÷ raw (best / median)', `${ratioBest.toFixed(2)}× / ${ratioMedian.toFixed(2)}×`],
            ],
          },
        ],
        targets: [
          {
            what: 'scale 0 → 5 vs raw docker run',
            target: `≤ ${MAX_RATIO}×`,
            measured: `${ratioMedian.toFixed(2)}× (median)`,
            met: ratioMedian <= MAX_RATIO,
          },
        ],
        notes: [`Relative: ${pct(ratioMedian)} of the raw time (median).`],
      };
    } finally {
      if (client) await client.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`).catch(() => undefined);
      await docker('ps', '-aq', '--filter', 'label=io.scalingo-emulator.bench=raw')
        .then((ids) => ids && docker('rm', '-f', ...ids.split('\n')))
        .catch(() => undefined);
      await client?.close();
      await emu?.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
