import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { c as tarCreate } from 'tar';
import { ApiClient } from './lib/emulator-client.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { bestMedian, median, ms, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const run = promisify(execFile);
const APP = 'bench-push-app';
const GIT_LINE = /Git \(SSH\)\s+(ssh:\/\/\S+)\/<app>\.git/;
const ROUTER_LINE = /Router\s+http:\/\/<app>\.localhost:(\d+)/;

/** The page the router serves for the app (Host: <app>.localhost), or '' while nothing answers. */
function routerPage(port: number): Promise<string> {
  return new Promise((ok) => {
    const req = httpGet(
      { host: '127.0.0.1', port, path: '/', headers: { host: `${APP}.localhost:${port}` }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => ok(res.statusCode === 200 ? body : ''));
      },
    );
    req.on('error', () => ok(''));
  });
}

/** Polls the router every 20 ms until the page holds `marker`; returns when it does. */
async function served(port: number, marker: string, deadlineMs = 120_000): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  while (!(await routerPage(port)).includes(marker)) {
    if (performance.now() > deadline) throw new Error(`the router never served "${marker}"`);
    await sleep(20);
  }
}

/**
 * Issue 13: from `git push` to the new version answering through the router, against the same
 * code deployed through the archive endpoint (POST /deployments with a local .tar.gz).
 */
export const section: Section = {
  name: 'git-push',
  description: 'git push → new version served by the router, vs the same code through the archive endpoint (issue 13)',
  async run(ctx: BenchContext): Promise<Result> {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-git-push-'));
    let emu: Child | undefined;
    let client: ApiClient | undefined;
    const pushMs: number[] = [];
    const pushCommandMs: number[] = [];
    const archiveMs: number[] = [];
    try {
      emu = await spawnEmulator({ emulatorDir: ctx.emulatorDir, dataDir: null, profileDir: ctx.profileDir });
      const gitBase = GIT_LINE.exec(emu.output())?.[1];
      const routerPort = Number(ROUTER_LINE.exec(emu.output())?.[1]);
      if (!gitBase || !routerPort) throw new Error(`no git endpoint or router in the banner:\n${emu.output()}`);
      client = new ApiClient(emu.api, 4);
      await client.exchange(emu.token!);
      const key = join(tmp, 'id_ed25519');
      await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench', '-f', key]);
      await client.expect('POST', '/v1/keys', 201, {
        key: { name: 'bench', content: readFileSync(`${key}.pub`, 'utf8') },
      });
      const appId = (
        JSON.parse(await client.expect('POST', '/v1/apps', 201, { app: { name: APP } })) as { app: { id: string } }
      ).app.id;
      // A deployment ends for the API (one at a time per app) once it removed the previous image:
      // each measurement starts when the app has one image left, so none waits for the one before.
      const settled = async () => {
        for (let i = 0; ; i++) {
          const tags = (
            await run('docker', [
              'images',
              '--filter',
              `label=io.scalingo-emulator.app-id=${appId}`,
              '--format',
              '{{.Repository}}:{{.Tag}}',
            ])
          ).stdout
            .split('\n')
            .filter((t) => t && !t.includes('<none>'));
          if (tags.length <= 1) return;
          if (i > 1200) throw new Error('the previous image of the app was never removed');
          await sleep(50);
        }
      };

      const work = join(tmp, 'work');
      cpSync(join(ctx.repoDir, 'fixtures/apps/busybox-web'), work, { recursive: true });
      const env = {
        ...process.env,
        GIT_SSH_COMMAND: `ssh -i ${key} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR`,
        GIT_AUTHOR_NAME: 'bench',
        GIT_AUTHOR_EMAIL: 'bench@example.test',
        GIT_COMMITTER_NAME: 'bench',
        GIT_COMMITTER_EMAIL: 'bench@example.test',
      };
      const git = (...args: string[]) => run('git', args, { cwd: work, env });
      await git('init', '-q', '-b', 'main');
      await git('remote', 'add', 'scalingo', `${gitBase}/${APP}.git`);
      const setPage = (text: string) => writeFileSync(join(work, 'index.html'), `${text} CONTAINER_NAME\n`);

      /** Commit a new page, push it; time until the push command returns and until the router serves it. */
      const viaPush = async (marker: string) => {
        setPage(marker);
        await git('add', '-A');
        await git('commit', '-qm', marker);
        await settled();
        const t0 = performance.now();
        const push = spawn('git', ['push', 'scalingo', 'main'], {
          cwd: work,
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        push.stderr.on('data', (d) => (err += d));
        const exited = new Promise<number>((ok) => push.once('close', (code) => ok(code ?? -1)));
        await served(routerPort, marker);
        const answered = performance.now() - t0;
        const code = await exited;
        if (code !== 0) throw new Error(`git push exited ${code}: ${err}`);
        if (err.includes('Another deployment of this app is running'))
          ctx.log(`git-push: ${marker} waited for the previous deployment`);
        return { answered, command: performance.now() - t0 };
      };
      /** The same files as a .tar.gz (made beforehand, not timed), POST /deployments; time until the router serves it. */
      const viaArchive = async (marker: string) => {
        setPage(marker);
        const archive = join(tmp, `${marker}.tar.gz`);
        await tarCreate(
          { gzip: true, file: archive, cwd: work, filter: (p) => !p.startsWith('./.git') && !p.startsWith('.git') },
          ['.'],
        );
        await settled();
        let t0 = performance.now();
        // Still 409 for a moment after the last image went: retried, the clock starting at the accepted POST.
        for (let i = 0; ; i++) {
          t0 = performance.now();
          const res = await client!.call('POST', `/v1/apps/${APP}/deployments`, {
            deployment: { source_url: archive },
          });
          if (res.status === 201) break;
          if (res.status !== 409 || i > 600)
            throw new Error(`POST /deployments: ${res.status} ${res.text.slice(0, 200)}`);
          await sleep(50);
        }
        await served(routerPort, marker);
        return performance.now() - t0;
      };

      // Warm-up (not timed): the first build of each kind makes the stack image and Docker's build cache.
      await viaPush('warm-up-push');
      await viaArchive('warm-up-archive');
      const rounds = ctx.quick ? 1 : ctx.rounds;
      for (let round = 1; round <= rounds; round++) {
        const p = await viaPush(`push-round-${round}`);
        pushMs.push(p.answered);
        pushCommandMs.push(p.command);
        const a = await viaArchive(`archive-round-${round}`);
        archiveMs.push(a);
        ctx.log(
          `git-push: round ${round}/${rounds}: push → served ${ms(p.answered)} (command ${ms(p.command)}), archive → served ${ms(a)}`,
        );
      }
      const ratioMedian = median(pushMs) / median(archiveMs);
      return {
        title: 'git push vs archive deployment, until the new version answers through the router',
        method:
          `Emulator in a child process (in-memory), the busybox-web fixture (Procfile, stack image) on one app, one web container. ` +
          `Push: a commit changing index.html, then \`git push scalingo main\` with the stock git and ssh clients (throw-away ed25519 key) ` +
          `to the emulator's SSH endpoint; timed from the spawn of git push until the router (Host: ${APP}.localhost, polled every 20 ms) serves ` +
          `the new page; "command" is until git push exits (the build runs inside it, in the pre-receive hook). Archive: the same files as a ` +
          `local .tar.gz (made beforehand, not timed), POST /v1/apps/:app/deployments {source_url}, timed until the router serves the new page. ` +
          `Each measurement starts once the previous deployment removed its old image (docker images, label of the app), so none queues ` +
          `behind the one before. One warm-up of each (not timed), then ${rounds} rounds, push and archive interleaved.`,
        tables: [
          {
            caption: `best / median of ${rounds} rounds`,
            headers: ['what', 'time'],
            rows: [
              ['git push → new version served by the router', bestMedian(pushMs, ms, false)],
              ['git push command (returns once deployed)', bestMedian(pushCommandMs, ms, false)],
              ['archive POST → new version served by the router', bestMedian(archiveMs, ms, false)],
              ['ratio push ÷ archive (median)', `${ratioMedian.toFixed(2)}×`],
            ],
          },
        ],
        targets: [],
        notes: [
          'Both paths run the same build and start (the deployments service); the push adds the SSH handshake, pack transfer, git archive of the pushed commit and the hook round trip.',
          "The machine is shared with other developers' test runs (see the load average of this run): figures are indicative.",
        ],
      };
    } finally {
      if (client) await client.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`).catch(() => undefined);
      await client?.close();
      await emu?.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
