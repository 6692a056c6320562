// The emulator killed (`kill -9`) during a `git push` (issue #23, item 3, that part), real Docker:
// once restarted on the same data directory, the push was either deployed or refused, never half:
// a refused push left the app's branch where it was, its deployment ends `aborted`, no container of
// it runs, no build directory is left, and the next push deploys.

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { FAST, FIXTURES } from '../support/apps.ts';
import { docker, removeInstance } from '../support/docker-cli.ts';
import { commitAll, git, initRepo, sshOptions } from '../support/git-cli.ts';
import { keyPair } from '../support/ssh-keys.ts';
import { type EmulatorProcess, poll, spawnEmulator } from './emulator-process.ts';
import { createApp } from './support/deployments.ts';

const sshPortOf = (emu: EmulatorProcess) =>
  Number(/Git \(SSH\)\s+ssh:\/\/git@[^:]+:(\d+)\//.exec(emu.output())?.[1] ?? 0);

describe('kill -9 during a git push (emulator as a separate process, real Docker)', () => {
  it('comes back consistent at each kill point: the push deployed or refused, the branch unmoved when refused', async () => {
    const root = mkdtempSync(join(tmpdir(), 'emu-kill-push-'));
    const data = join(root, 'data');
    mkdirSync(data);
    const key = keyPair();
    const config = { intervals: FAST, logLevel: 'error' };
    let emu: EmulatorProcess | undefined = await spawnEmulator(data, config);
    let instance = '';
    const figures: string[] = [];
    try {
      expect(
        (await emu.call('POST', '/v1/keys', { body: { key: { name: 'dev', content: key.publicKey } } })).status,
      ).toBe(201);
      const app = await createApp(emu, 'kill-push');
      const dir = join(root, 'work');
      cpSync(join(FIXTURES, 'busybox-web'), dir, { recursive: true });
      await initRepo(dir, key.privateKey);
      // Kill points: while the objects are received, and once the deployment is building.
      const points: [string, (e: EmulatorProcess, progress: () => string) => Promise<unknown>][] = [
        [
          'receiving',
          async (_e, progress) =>
            poll(
              async () => /Writing objects|Counting objects/.test(progress()),
              'the push to send objects',
              30_000,
              10,
            ),
        ],
        [
          'building',
          async (e) =>
            poll(
              async () =>
                (await e.call('GET', `/v1/apps/${app}/deployments`)).body?.deployments?.[0]?.status === 'building',
              'a building deployment',
              30_000,
              20,
            ),
        ],
      ];
      for (const [name, waitFor] of points) {
        const e: EmulatorProcess = emu;
        const port = sshPortOf(e);
        writeFileSync(join(dir, 'index.html'), `killed while ${name} from CONTAINER_NAME\n`);
        const sha = await commitAll(dir, key.privateKey, `killed while ${name}`);
        const before = (
          await git(root, key.privateKey, 'ls-remote', `ssh://git@127.0.0.1:${port}/${app}.git`, 'refs/heads/main')
        ).out
          .split('\t')[0]
          .trim();
        const push = spawn('git', ['push', '--progress', `ssh://git@127.0.0.1:${port}/${app}.git`, 'HEAD:main'], {
          cwd: dir,
          env: { ...process.env, GIT_SSH_COMMAND: ['ssh', ...sshOptions(key.privateKey)].join(' '), LANG: 'C' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let progress = '';
        push.stdout.on('data', (c: Buffer) => (progress += c.toString()));
        push.stderr.on('data', (c: Buffer) => (progress += c.toString()));
        const exited = new Promise<number>((ok) => push.once('close', (code) => ok(code ?? -1)));
        await waitFor(e, () => progress);
        await e.kill9();
        const code = await exited;
        emu = undefined;
        emu = await spawnEmulator(data, config);
        const back: EmulatorProcess = emu;
        const newPort = sshPortOf(back);
        const ref = (
          await git(root, key.privateKey, 'ls-remote', `ssh://git@127.0.0.1:${newPort}/${app}.git`, 'refs/heads/main')
        ).out
          .split('\t')[0]
          .trim();
        const latest = (await back.call('GET', `/v1/apps/${app}/deployments`)).body.deployments[0] as {
          id: string;
          status: string;
        };
        figures.push(
          `killed while ${name}: push exit ${code}, branch ${ref === sha ? 'moved to the push' : 'unmoved'}, its deployment ${latest?.status ?? 'none'}`,
        );
        if (code === 0) expect(ref).toBe(sha);
        else {
          expect(ref, 'a refused push leaves the branch where it was').toBe(before);
          expect(progress).toMatch(
            /remote end hung up|pre-receive hook declined|Connection closed|unexpectedly|failed to push/,
          );
        }
        if (latest && ref !== sha) {
          expect(latest.status).toBe('aborted');
          expect(
            docker('ps', '-a', '--filter', `label=${LABELS.deploymentId}=${latest.id}`, '--format', '{{.Names}}'),
          ).toBe('');
        }
        const builds = join(data, 'builds');
        await poll(
          async () => !existsSync(builds) || readdirSync(builds).length === 0,
          'the build directories to be removed',
          15_000,
        );
      }
      // The next push deploys: Docker runs its container.
      const e: EmulatorProcess = emu;
      writeFileSync(join(dir, 'index.html'), 'after the kills from CONTAINER_NAME\n');
      await commitAll(dir, key.privateKey, 'after the kills');
      const r = await git(
        dir,
        key.privateKey,
        'push',
        '-q',
        '--force',
        `ssh://git@127.0.0.1:${sshPortOf(e)}/${app}.git`,
        'HEAD:main',
      );
      expect(r.code, r.out).toBe(0);
      const id = (await e.call('GET', `/v1/apps/${app}`)).body.app.last_deployment_id as string;
      await poll(
        async () =>
          docker('ps', '--filter', `label=${LABELS.deploymentId}=${id}`, '--format', '{{.State}}') === 'running',
        'the container of the next push',
        60_000,
      );
      instance = docker(
        'ps',
        '--filter',
        `label=${LABELS.deploymentId}=${id}`,
        '--format',
        `{{.Label "${LABELS.instance}"}}`,
      );
    } finally {
      await emu?.stop();
      if (instance) removeInstance(instance);
      rmSync(key.dir, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
      console.log(`[reliability] kill -9 during git push: ${figures.join('; ')}`);
    }
  }, 240_000);
});
