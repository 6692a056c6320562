// The SSH git endpoint under hostile use (issue #23, item 2), the emulator as a separate process
// with its default git limits: 500 connections left idle, 200 failed authentications in a row,
// git-upload-pack of another user's app, a client that stops reading halfway through a push, and a
// push of a 200 MB repository. Throughout, the API answers (a prober calls it all along), a
// legitimate push deploys (seen in Docker), and refusals say why.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { FAST, FIXTURES } from '../support/apps.ts';
import { docker, removeInstance } from '../support/docker-cli.ts';
import { commitAll, git, initRepo, sshOptions } from '../support/git-cli.ts';
import { type KeyPair, keyPair } from '../support/ssh-keys.ts';
import { type EmulatorProcess, MB, mb, poll, spawnEmulator } from './emulator-process.ts';
import { createApp } from './support/deployments.ts';

describe('SSH git endpoint under hostile use (emulator as a separate process, real Docker)', () => {
  let root: string;
  let emu: EmulatorProcess;
  let port = 0;
  let dev: KeyPair;
  let other: KeyPair;
  let stranger: KeyPair;
  let app: string;
  let instance = '';
  const figures: string[] = [];
  const probe = { calls: 0, failures: [] as string[], stop: false, done: Promise.resolve() };

  /** A work tree of the busybox-web fixture, committed, plus `extra` files. */
  async function workTree(name: string, extra: Record<string, Buffer> = {}): Promise<string> {
    const dir = join(root, name);
    cpSync(join(FIXTURES, 'busybox-web'), dir, { recursive: true });
    for (const [file, data] of Object.entries(extra)) writeFileSync(join(dir, file), data);
    await initRepo(dir, dev.privateKey);
    return dir;
  }
  const remote = (name: string) => `ssh://git@127.0.0.1:${port}/${name}.git`;

  /** A legitimate push: a new commit, deployed; Docker runs a container of it. */
  async function legitimatePush(dir: string, what: string): Promise<void> {
    writeFileSync(join(dir, 'index.html'), `${what} from CONTAINER_NAME\n`);
    await commitAll(dir, dev.privateKey, what);
    // Each work tree has a history of its own: forced.
    const r = await git(dir, dev.privateKey, 'push', '-q', '--force', remote(app), 'HEAD:main');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/<-- http:\/\/.*-->/);
    const deploymentId = (await emu.call('GET', `/v1/apps/${app}`)).body.app.last_deployment_id as string;
    await poll(
      async () =>
        docker('ps', '--filter', `label=${LABELS.deploymentId}=${deploymentId}`, '--format', '{{.State}}') ===
        'running',
      `a container of ${what}`,
      60_000,
    );
    instance ||= docker(
      'ps',
      '--filter',
      `label=${LABELS.appName}=${app}`,
      '--format',
      `{{.Label "${LABELS.instance}"}}`,
    ).split('\n')[0];
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'emu-ssh-hostile-'));
    mkdirSync(join(root, 'data'));
    emu = await spawnEmulator(join(root, 'data'), { logLevel: 'error', intervals: FAST });
    port = Number(/Git \(SSH\)\s+ssh:\/\/git@[^:]+:(\d+)\//.exec(emu.output())?.[1] ?? 0);
    if (!port) throw new Error(`no SSH port in the emulator's output:\n${emu.output()}`);
    [dev, other, stranger] = [keyPair(), keyPair(), keyPair()];
    expect(
      (await emu.call('POST', '/v1/keys', { body: { key: { name: 'dev', content: dev.publicKey } } })).status,
    ).toBe(201);
    expect(
      (await emu.call('POST', '/v1/keys', { body: { key: { name: 'other', content: other.publicKey } }, as: 'other' }))
        .status,
    ).toBe(201);
    app = await createApp(emu, 'ssh-hostile');
    // The API all along: one call every 200 ms, each must answer 200.
    probe.done = (async () => {
      while (!probe.stop) {
        probe.calls++;
        const r = await emu
          .call('GET', `/v1/apps/${app}`, { signal: AbortSignal.timeout(10_000) })
          .catch((err: Error) => ({ status: 0, text: err.message }));
        if (r.status !== 200) probe.failures.push(`${r.status} ${r.text.slice(0, 100)}`);
        await new Promise((ok) => setTimeout(ok, 200));
      }
    })();
  }, 60_000);

  afterAll(async () => {
    probe.stop = true;
    await probe.done;
    await emu?.stop();
    if (instance) removeInstance(instance);
    for (const k of [dev, other, stranger]) if (k) rmSync(k.dir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    console.log(`[reliability] ssh endpoint: ${figures.join('; ')}`);
  });

  it('500 connections left idle: the oldest unauthenticated ones make room, a legitimate push deploys meanwhile', async () => {
    const dir = await workTree('idle');
    const sockets: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < 500; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.resume(); // reads the endpoint's identification, and sees its close
      s.on('close', () => closed++);
      sockets.push(s);
    }
    try {
      await poll(async () => sockets.every((s) => !s.connecting), 'the 500 connections to be made', 20_000);
      await legitimatePush(dir, 'push among 500 idle connections');
      const open = sockets.filter((s) => !s.destroyed).length;
      figures.push(
        `500 idle connections: ${open} left open (git.maxConnections 64), ${closed} closed by the endpoint, a push deployed meanwhile`,
      );
      expect(open).toBeLessThanOrEqual(64);
    } finally {
      for (const s of sockets) s.destroy();
    }
  }, 120_000);

  it('200 failed authentications in a row are refused one by one; a known key still gets in', async () => {
    const key = readFileSync(stranger.privateKey);
    const attempt = () =>
      new Promise<string>((ok) => {
        const c = new Client();
        c.on('ready', () => {
          c.end();
          ok('accepted');
        });
        c.on('error', (err) => ok(err.message));
        c.connect({ host: '127.0.0.1', port, username: 'git', privateKey: key, readyTimeout: 20_000 });
      });
    const results: string[] = [];
    for (let batch = 0; batch < 20; batch++) results.push(...(await Promise.all(Array.from({ length: 10 }, attempt))));
    const counts = Object.entries(
      results.reduce<Record<string, number>>((acc, r) => ((acc[r] = (acc[r] ?? 0) + 1), acc), {}),
    );
    figures.push(`200 failed authentications: ${counts.map(([m, n]) => `${n} × "${m}"`).join(', ')}`);
    expect(results.filter((r) => r === 'accepted')).toEqual([]);
    expect(results.every((r) => /authentication methods failed/.test(r))).toBe(true);
    const ls = await git(root, dev.privateKey, 'ls-remote', remote(app));
    expect(ls.code, ls.out).toBe(0);
  }, 120_000);

  it("git-upload-pack of another user's app is refused with the reason, and reveals nothing", async () => {
    const ls = await git(root, other.privateKey, 'ls-remote', remote(app));
    expect(ls.code).not.toBe(0);
    expect(ls.out).toMatch(new RegExp(`App '${app}' not found, or you may not deploy it \\(authenticated as other`));
    expect(ls.out).not.toMatch(/refs\/heads/);
    const clone = await git(root, other.privateKey, 'clone', remote(app), join(root, 'stolen'));
    expect(clone.code).not.toBe(0);
    expect(clone.out).toMatch(/not found, or you may not deploy it/);
  }, 60_000);

  it('a client that stops reading halfway through a push holds nothing once gone; the next push deploys', async () => {
    const dir = await workTree('stalled', { 'blob.bin': randomBytes(64 * MB) });
    const before = (await emu.call('GET', `/v1/apps/${app}`)).body.app.last_deployment_id;
    // In a process group of its own, so that git and its ssh stop together.
    const push = spawn('git', ['-c', 'core.compression=0', 'push', '--progress', '--force', remote(app), 'HEAD:main'], {
      cwd: dir,
      detached: true,
      env: { ...process.env, GIT_SSH_COMMAND: ['ssh', ...sshOptions(dev.privateKey)].join(' '), LANG: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let progress = '';
    push.stderr.on('data', (c: Buffer) => (progress = (progress + c.toString()).slice(-4096)));
    const exited = new Promise((ok) => push.once('close', ok));
    const group = push.pid ?? 0;
    await poll(
      async () => /Writing objects/.test(progress) || push.exitCode !== null,
      'the push to send objects',
      30_000,
      20,
    );
    expect(push.exitCode, `the push ended before it could be stopped: ${progress}`).toBeNull();
    // The whole client stops: nothing more is read or written on its connection.
    process.kill(-group, 'SIGSTOP');
    await new Promise((ok) => setTimeout(ok, 3000));
    expect((await emu.call('GET', `/v1/apps/${app}`)).status).toBe(200);
    process.kill(-group, 'SIGKILL');
    await exited;
    // The push was either deployed whole or refused: never half of it.
    const after = (await emu.call('GET', `/v1/apps/${app}`)).body.app.last_deployment_id;
    figures.push(`push stopped halfway: ${after === before ? 'refused (no deployment)' : 'deployed whole'}`);
    await legitimatePush(await workTree('after-stall'), 'push after a stalled one');
  }, 180_000);

  it('a push of a 200 MB repository deploys', async () => {
    const dir = await workTree('big', { 'big.bin': randomBytes(200 * MB) });
    await commitAll(dir, dev.privateKey, 'big', '--allow-empty');
    const idle = emu.memory().rss;
    const t0 = Date.now();
    const r = await git(
      dir,
      dev.privateKey,
      '-c',
      'core.compression=0',
      '-c',
      'pack.compression=0',
      'push',
      '-q',
      '--force',
      remote(app),
      'HEAD:main',
    );
    expect(r.code, r.out).toBe(0);
    const deploymentId = (await emu.call('GET', `/v1/apps/${app}`)).body.app.last_deployment_id as string;
    await poll(
      async () =>
        docker('ps', '--filter', `label=${LABELS.deploymentId}=${deploymentId}`, '--format', '{{.State}}') ===
        'running',
      'the 200 MB deployment to run',
      60_000,
    );
    const { peak } = emu.memory();
    figures.push(
      `200 MB repository: pushed and deployed in ${Math.round((Date.now() - t0) / 1000)} s, emulator RSS before ${mb(idle)}, peak (VmHWM) ${mb(peak)}`,
    );
  }, 300_000);

  it('all along: every API call answered 200', () => {
    figures.push(`API prober: ${probe.calls} calls, ${probe.failures.length} failures`);
    expect(probe.failures).toEqual([]);
    expect(probe.calls).toBeGreaterThan(10);
  });
});
