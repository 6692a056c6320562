import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { git, ssh, sshOptions, start } from '../support/git-cli.ts';
import { keyPair } from '../support/ssh-keys.ts';

// The SSH git endpoint without building anything: host key, authentication, bounds, and the
// pre-receive hook's way back in.
const portOf = (h: Harness) => Number(new URL(h.emu.urls.git!.replace(/^ssh:/, 'http:')).port);
const hostKey = async (port: number) =>
  (await start('ssh-keyscan', ['-p', String(port), '-t', 'ed25519', '127.0.0.1'], { timeoutMs: 20_000 }).done).out
    .split('\n')
    .find((l) => l.includes('ssh-ed25519'))!
    .split(' ')
    .slice(1)
    .join(' ');

describe('SSH git endpoint', () => {
  let h: Harness;
  const key = keyPair();
  const scratch = mkdtempSync(join(tmpdir(), 'emu-git-ssh-'));
  beforeAll(async () => {
    h = await startEmulator({ git: { maxSessionsPerKey: 1 } });
    expect(
      (await h.call('POST', '/v1/keys', { body: { key: { name: 'laptop', content: key.publicKey } } })).status,
    ).toBe(201);
    expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'ssh-app' } } })).status).toBe(201);
  });
  afterAll(async () => {
    await h.stop();
    rmSync(key.dir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  it('sshPort: default 5122, EMULATOR_SSH_PORT, and the region lists the endpoint', async () => {
    expect(loadConfig({ ignoreDefaultFile: true, env: {} }).sshPort).toBe(5122);
    expect(loadConfig({ ignoreDefaultFile: true, env: { EMULATOR_SSH_PORT: '6022' } }).sshPort).toBe(6022);
    expect(() => loadConfig({ ignoreDefaultFile: true, env: { EMULATOR_SSH_PORT: 'ssh' } })).toThrow(
      /EMULATOR_SSH_PORT/,
    );
    expect((await h.call('GET', '/v1/regions')).body.regions[0].ssh).toBe(`127.0.0.1:${portOf(h)}`);
  });

  it('the host key is made once per data dir and kept across restarts', async () => {
    const dir = join(scratch, 'data');
    const first = await startEmulator({ inMemory: false, dataDir: dir });
    const key1 = await hostKey(portOf(first));
    await first.stop();
    expect(statSync(join(dir, 'ssh_host_ed25519_key')).mode & 0o777).toBe(0o600);
    const again = await startEmulator({ inMemory: false, dataDir: dir });
    const key2 = await hostKey(portOf(again));
    await again.stop();
    expect(key1).toMatch(/^ssh-ed25519 AAAA/);
    expect(key2).toBe(key1);
    expect(await hostKey(portOf(h))).not.toBe(key1); // in memory: a key of its own
  });

  it('an app never pushed is an empty repository to fetch; an unknown app is refused', async () => {
    const remote = (await h.call('GET', '/v1/apps/ssh-app')).body.app.git_url;
    const listed = await git(scratch, key.privateKey, 'ls-remote', remote);
    expect(listed).toEqual({ code: 0, out: '' });
    const unknown = await git(scratch, key.privateKey, 'ls-remote', remote.replace('ssh-app', 'nope-app'));
    expect(unknown.code).not.toBe(0);
    expect(unknown.out).toContain("App 'nope-app' not found, or you may not deploy it");
    // The scp-like form (git@host:app.git) reaches the same app.
    const scp = await start('git', ['ls-remote', `git@127.0.0.1:ssh-app.git`], {
      cwd: scratch,
      env: { GIT_SSH_COMMAND: ['ssh', ...sshOptions(key.privateKey), '-p', String(portOf(h))].join(' ') },
    }).done;
    expect(scp.code, scp.out).toBe(0);
  });

  it('only public keys are offered; a removed key no longer authenticates', async () => {
    const password = await ssh(portOf(h), key.privateKey, [
      '-o',
      'PreferredAuthentications=password,keyboard-interactive',
      "git-upload-pack 'ssh-app.git'",
    ]);
    expect(password.code).toBe(255);
    expect(password.out).toContain('Permission denied (publickey)');
    const other = keyPair();
    try {
      const added = await h.call('POST', '/v1/keys', { body: { key: { name: 'second', content: other.publicKey } } });
      expect(
        (await git(scratch, other.privateKey, 'ls-remote', `ssh://git@127.0.0.1:${portOf(h)}/ssh-app.git`)).code,
      ).toBe(0);
      expect((await h.call('DELETE', `/v1/keys/${added.body.key.id}`)).status).toBe(204);
      const refused = await git(scratch, other.privateKey, 'ls-remote', `ssh://git@127.0.0.1:${portOf(h)}/ssh-app.git`);
      expect(refused.code).not.toBe(0);
      expect(refused.out).toContain('Permission denied (publickey)');
    } finally {
      rmSync(other.dir, { recursive: true, force: true });
    }
  });

  it('git commands at once per key are bounded (git.maxSessionsPerKey)', async () => {
    // A fetch that waits for the client's wants holds its session open.
    const held = spawn(
      'ssh',
      [...sshOptions(key.privateKey), '-p', String(portOf(h)), 'git@127.0.0.1', "git-upload-pack '/ssh-app.git'"],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    held.on('error', () => undefined);
    let advertised = '';
    held.stdout.on('data', (d) => (advertised += d));
    try {
      await eventually(() => advertised.includes('0000'), { what: 'the held session to start' });
      const second = await ssh(portOf(h), key.privateKey, ["git-upload-pack 'ssh-app.git'"]);
      expect(second.code).toBe(1);
      expect(second.out).toContain('Too many git commands at once with this key (at most 1)');
    } finally {
      held.stdin.end();
      held.kill();
    }
    await eventually(
      async () =>
        (await git(scratch, key.privateKey, 'ls-remote', `ssh://git@127.0.0.1:${portOf(h)}/ssh-app.git`)).code === 0,
      { what: 'the slot to be free again' },
    );
  });

  it('a git command is stopped at its time limit (git.sessionTimeoutMs)', async () => {
    const short = await startEmulator({ git: { sessionTimeoutMs: 1500 } });
    try {
      expect(
        (await short.call('POST', '/v1/keys', { body: { key: { name: 'laptop', content: key.publicKey } } })).status,
      ).toBe(201);
      expect((await short.call('POST', '/v1/apps', { body: { app: { name: 'slow-app' } } })).status).toBe(201);
      // upload-pack waits for the client's wants, which never come: only the time limit ends it.
      const held = spawn(
        'ssh',
        [...sshOptions(key.privateKey), '-p', String(portOf(short)), 'git@127.0.0.1', "git-upload-pack 'slow-app.git'"],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );
      held.on('error', () => undefined);
      let err = '';
      held.stderr.on('data', (d) => (err += d));
      const code = await new Promise<number | null>((ok) => held.once('close', (c) => ok(c)));
      expect(code).not.toBe(0);
      expect(err).toContain('Time limit of this git command reached');
    } finally {
      await short.stop();
    }
  });

  it('a connection that does not authenticate in time is closed (git.authTimeoutMs)', async () => {
    const quick = await startEmulator({ git: { authTimeoutMs: 300 } });
    const socket = connect(portOf(quick), '127.0.0.1');
    socket.on('error', () => undefined);
    let banner = '';
    socket.on('data', (d) => (banner += d));
    const closed = new Promise<void>((ok) => socket.once('close', () => ok()));
    await eventually(() => banner.startsWith('SSH-2.0-scalingo-emulator'), { what: 'the server identification' });
    try {
      await Promise.race([
        closed,
        new Promise((_, fail) => setTimeout(() => fail(new Error('still open after 10 s')), 10_000)),
      ]);
    } finally {
      socket.destroy();
      await quick.stop();
    }
  });

  it('the pre-receive hook refuses a push made outside the SSH endpoint, or with an unknown token', async () => {
    const app = (await h.call('GET', '/v1/apps/ssh-app')).body.app;
    const hook = join(h.emu.stateDir, 'git', `${app.id}.git`, 'hooks', 'pre-receive');
    const line = `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/main\n`;
    const runHook = (env: Record<string, string>) =>
      new Promise<{ code: number; out: string }>((ok) => {
        const p = spawn(hook, [], { env: { PATH: process.env.PATH!, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (out += d));
        p.on('close', (code) => ok({ code: code ?? -1, out }));
        p.stdin.end(line);
      });
    const outside = await runHook({});
    expect(outside.code).toBe(1);
    expect(outside.out).toContain('push through its SSH endpoint');
    const forged = await runHook({
      SCALINGO_EMULATOR_HOOK_PORT: String(h.emu.area('git').hookPort()),
      SCALINGO_EMULATOR_HOOK_TOKEN: 'forged',
    });
    expect(forged.code).toBe(1);
    expect(forged.out).toContain('This push is not known to the emulator');
    expect((await h.call('GET', '/v1/apps/ssh-app/deployments')).body.deployments).toEqual([]);
  });
});
